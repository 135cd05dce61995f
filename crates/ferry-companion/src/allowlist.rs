//! The destination allowlist (`--upload-urls`): entries are origins or origin + path prefix,
//! compared after URL parsing (scheme, host, port exactly; the path by whole segments), so
//! `https://a.example/files` never matches `https://a.example.evil/` or `/filesX`.

use url::Url;

use crate::error::CompanionError;

/// Parsed allowlist entries.
#[derive(Clone, Debug, Default)]
pub struct Allowlist {
    entries: Vec<Entry>,
}

#[derive(Clone, Debug)]
struct Entry {
    origin: String,
    prefix: String,
}

impl Allowlist {
    /// Parses `urls`; when empty, allows the `/files/` and `/upload` of `own_origins` instead.
    pub fn new(urls: &[String], own_origins: &[String]) -> Result<Self, CompanionError> {
        let mut raw: Vec<String> = urls
            .iter()
            .map(|u| u.trim().to_owned())
            .filter(|u| !u.is_empty())
            .collect();
        if raw.is_empty() {
            for own in own_origins {
                let own = own.trim_end_matches('/');
                raw.push(format!("{own}/files/"));
                raw.push(format!("{own}/upload"));
            }
        }
        let entries = raw
            .iter()
            .map(|u| parse_entry(u))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { entries })
    }

    /// Whether `url` is an allowed destination.
    pub fn allows(&self, url: &Url) -> bool {
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return false;
        }
        let origin = url.origin().ascii_serialization();
        let path = url.path();
        self.entries
            .iter()
            .any(|e| e.origin == origin && path_matches(&e.prefix, path))
    }
}

fn parse_entry(raw: &str) -> Result<Entry, CompanionError> {
    let url =
        Url::parse(raw).map_err(|e| CompanionError::Config(format!("upload URL {raw:?}: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(CompanionError::Config(format!(
            "upload URL {raw:?}: must be an http(s) origin or origin + path"
        )));
    }
    Ok(Entry {
        origin: url.origin().ascii_serialization(),
        prefix: url.path().to_owned(),
    })
}

/// `prefix` matches `path` itself and anything below it, by whole path segments.
fn path_matches(prefix: &str, path: &str) -> bool {
    if prefix == "/" || prefix.is_empty() || path == prefix {
        return true;
    }
    if prefix.ends_with('/') {
        return path.starts_with(prefix);
    }
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(urls: &[&str]) -> Allowlist {
        let urls: Vec<String> = urls.iter().map(|s| (*s).to_owned()).collect();
        Allowlist::new(&urls, &[]).expect("valid list")
    }

    #[test]
    fn matches_anchored() {
        let l = list(&["https://up.example.com/files", "http://127.0.0.1:9000"]);
        let cases: &[(&str, bool)] = &[
            ("https://up.example.com/files", true),
            ("https://up.example.com/files/abc", true),
            ("https://up.example.com/filesX", false),
            ("https://up.example.com/other", false),
            ("https://up.example.com/files/../other", false),
            ("https://up.example.com/files/%2e%2e/other", false),
            ("https://up.example.com.evil.org/files", false),
            ("https://evil.org/https://up.example.com/files", false),
            ("http://up.example.com/files", false),
            ("https://up.example.com:444/files", false),
            ("https://user@up.example.com/files/x", true),
            ("http://127.0.0.1:9000/anything", true),
            ("http://127.0.0.1:9001/anything", false),
            ("ftp://127.0.0.1:9000/", false),
        ];
        for (url, ok) in cases {
            let parsed = Url::parse(url).expect("test url");
            assert_eq!(l.allows(&parsed), *ok, "{url}");
        }
    }

    #[test]
    fn defaults_to_own_endpoints() {
        let l = Allowlist::new(&[], &["http://127.0.0.1:3020".to_owned()]).expect("valid");
        let ok = Url::parse("http://127.0.0.1:3020/files/").expect("url");
        let form = Url::parse("http://127.0.0.1:3020/upload").expect("url");
        let other = Url::parse("http://127.0.0.1:3020/metrics").expect("url");
        assert!(l.allows(&ok) && l.allows(&form) && !l.allows(&other));
        assert!(!Allowlist::default().allows(&ok));
    }

    #[test]
    fn rejects_bad_entries() {
        assert!(Allowlist::new(&["^https://.*$".to_owned()], &[]).is_err());
        assert!(Allowlist::new(&["file:///etc".to_owned()], &[]).is_err());
    }
}
