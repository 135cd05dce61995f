//! The WebDAV server a person typed in, as Ferry reaches it: the collection URL (without
//! credentials, always ending in `/`) and the `Authorization` value to send, if any.
//!
//! Three forms are understood:
//! - a Nextcloud or ownCloud public share link, `https://host[/sub][/index.php]/s/{token}`:
//!   the share's WebDAV endpoint `{host}[/sub]/public.php/webdav/` with the token as Basic user
//!   (and a share password, if given, as its password), as Companion does;
//! - any WebDAV collection with a username and (app) password, given as the URL's userinfo
//!   (`https://alice:app-password@host/remote.php/dav/files/alice/`, the only way Uppy's
//!   one-field form can carry them) or as separate form fields;
//! - any WebDAV collection without credentials.
//!
//! Paths inside the collection (`/Photos/a.jpg`) are Companion's item ids; they are checked
//! here ([`Target::url_of`]) so no id can climb out of the collection.

use base64::Engine;
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use url::Url;

use crate::providers::ProviderError;

/// Longest server URL accepted.
const MAX_URL: usize = 2048;
/// Longest path inside the collection accepted.
const MAX_PATH: usize = 4096;

/// What a path segment escapes: RFC 3986's `pchar` minus what a server might read specially.
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// A WebDAV collection and how to sign in to it.
#[derive(Clone, PartialEq, Eq)]
pub struct Target {
    /// The collection, credential-free, ending in `/`.
    pub base: Url,
    /// The `Authorization` header value (`Basic ...`), if the server needs one.
    pub authorization: Option<String>,
    /// Who is signed in, for the listing's header (`alice@host`, or the host).
    pub label: String,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("base", &self.base.as_str())
            .field(
                "authorization",
                &self.authorization.as_ref().map(|_| "<set>"),
            )
            .finish_non_exhaustive()
    }
}

fn bad(message: &str) -> ProviderError {
    ProviderError::BadRequest(message.to_owned())
}

fn basic(user: &str, password: &str) -> String {
    let raw = format!("{user}:{password}");
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(raw)
    )
}

fn decoded(raw: &str) -> Result<String, ProviderError> {
    percent_decode_str(raw)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| bad("Invalid WebDAV URL"))
}

impl Target {
    /// The collection `raw` names, signed in as `user` with `password` when given (else with
    /// the URL's userinfo). Malformed URLs and schemes other than http(s) are refused here;
    /// the address rules are the caller's (the egress client).
    pub fn parse(
        raw: &str,
        user: Option<&str>,
        password: Option<&str>,
    ) -> Result<Self, ProviderError> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(bad("Missing webdavUrl"));
        }
        if raw.len() > MAX_URL {
            return Err(bad("The WebDAV URL is too long"));
        }
        let mut url = Url::parse(raw).map_err(|_| bad("Invalid WebDAV URL"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad("Only http and https WebDAV URLs are allowed"));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(bad("Invalid WebDAV URL"));
        }
        let url_user = decoded(url.username())?;
        let url_password = url.password().map(decoded).transpose()?;
        let user = user.map(str::to_owned).filter(|u| !u.is_empty());
        let password = password.map(str::to_owned).or(url_password);
        // Credentials never stay in the URL: it is shown and compared, they are sealed.
        let _ = url.set_username("");
        let _ = url.set_password(None);
        url.set_query(None);
        url.set_fragment(None);
        let host = url.host_str().unwrap_or_default().to_owned();
        if let Some((prefix, token)) = share_link(url.path()) {
            let mut base = url.clone();
            base.set_path(&format!("{prefix}/public.php/webdav/"));
            let password = password.unwrap_or_default();
            return Ok(Self {
                base,
                authorization: Some(basic(&token, &password)),
                label: host,
            });
        }
        if !url.path().ends_with('/') {
            let path = format!("{}/", url.path());
            url.set_path(&path);
        }
        let user = user.or(Some(url_user).filter(|u| !u.is_empty()));
        let (authorization, label) = match user {
            Some(u) => {
                let label = format!("{u}@{host}");
                (Some(basic(&u, &password.unwrap_or_default())), label)
            }
            None => (None, host),
        };
        Ok(Self {
            base: url,
            authorization,
            label,
        })
    }

    /// The URL of `path` (an item id: `/Photos/a.jpg`, or empty for the collection itself)
    /// inside the collection; `folder` adds the trailing `/` collections are addressed with.
    /// Refuses `.` and `..` segments, backslashes and control characters.
    pub fn url_of(&self, path: &str, folder: bool) -> Result<Url, ProviderError> {
        let segments = segments(path)?;
        let mut joined = self.base.path().to_owned();
        for (i, s) in segments.iter().enumerate() {
            if i > 0 {
                joined.push('/');
            }
            joined.extend(utf8_percent_encode(s, SEGMENT));
        }
        if folder && !segments.is_empty() {
            joined.push('/');
        }
        let mut url = self.base.clone();
        url.set_path(&joined);
        Ok(url)
    }
}

/// The segments of an item path, checked.
pub fn segments(path: &str) -> Result<Vec<&str>, ProviderError> {
    if path.len() > MAX_PATH {
        return Err(bad("The WebDAV path is too long"));
    }
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let refused =
        |s: &&str| *s == "." || *s == ".." || s.chars().any(|c| c == '\\' || c.is_control());
    if segments.iter().any(refused) {
        return Err(bad("Invalid WebDAV path"));
    }
    Ok(segments)
}

/// `(prefix, token)` of a share link's path: `[prefix][/index.php]/s/{token}[/]`.
fn share_link(path: &str) -> Option<(String, String)> {
    let trimmed = path.trim_end_matches('/');
    let (before, token) = trimmed.rsplit_once("/s/")?;
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let prefix = before.strip_suffix("/index.php").unwrap_or(before);
    Some((prefix.to_owned(), token.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds(t: &Target) -> Option<String> {
        let value = t.authorization.as_deref()?.strip_prefix("Basic ")?;
        let raw = base64::engine::general_purpose::STANDARD
            .decode(value)
            .ok()?;
        String::from_utf8(raw).ok()
    }

    #[test]
    fn userinfo_becomes_sealed_credentials_and_leaves_the_url() {
        let t = Target::parse(
            " https://alice:app%2Fpass@cloud.example/remote.php/dav/files/alice?x=1#f ",
            None,
            None,
        )
        .expect("valid");
        assert_eq!(
            t.base.as_str(),
            "https://cloud.example/remote.php/dav/files/alice/"
        );
        assert_eq!(creds(&t).as_deref(), Some("alice:app/pass"));
        assert_eq!(t.label, "alice@cloud.example");
        // Form fields win over the URL's.
        let t =
            Target::parse("https://x:y@cloud.example/dav/", Some("bob"), Some("pw")).expect("ok");
        assert_eq!(creds(&t).as_deref(), Some("bob:pw"));
        let anon = Target::parse("http://files.example/dav", None, None).expect("ok");
        assert_eq!(
            (anon.authorization, anon.label.as_str()),
            (None, "files.example")
        );
    }

    #[test]
    fn share_links_use_the_public_endpoint_with_the_token() {
        let t = Target::parse(
            "https://cloud.example/index.php/s/kFy9Lek5sm928xP",
            None,
            None,
        )
        .expect("valid");
        assert_eq!(t.base.as_str(), "https://cloud.example/public.php/webdav/");
        assert_eq!(creds(&t).as_deref(), Some("kFy9Lek5sm928xP:"));
        let sub = Target::parse("https://:secret@h.example/nc/s/AbC/", None, None).expect("ok");
        assert_eq!(sub.base.as_str(), "https://h.example/nc/public.php/webdav/");
        assert_eq!(creds(&sub).as_deref(), Some("AbC:secret"));
    }

    #[test]
    fn malformed_urls_and_other_schemes_are_refused() {
        for (raw, message) in [
            ("", "Missing webdavUrl"),
            ("not a url", "Invalid WebDAV URL"),
            (
                "ftp://files.example/",
                "Only http and https WebDAV URLs are allowed",
            ),
            (
                "file:///etc/passwd",
                "Only http and https WebDAV URLs are allowed",
            ),
            ("http://", "Invalid WebDAV URL"),
        ] {
            let err = Target::parse(raw, None, None).expect_err(raw);
            assert_eq!(err.to_string(), message, "{raw}");
        }
    }

    #[test]
    fn item_paths_stay_inside_the_collection() {
        let t = Target::parse("https://h.example/dav/", None, None).expect("ok");
        let url = t.url_of("/My Photos/a#1?.jpg", false).expect("ok");
        assert_eq!(
            url.as_str(),
            "https://h.example/dav/My%20Photos/a%231%3F.jpg"
        );
        assert_eq!(
            t.url_of("", true).expect("root").as_str(),
            "https://h.example/dav/"
        );
        assert_eq!(
            t.url_of("/a", true).expect("dir").as_str(),
            "https://h.example/dav/a/"
        );
        for bad in ["/../etc", "/a/./b", "/a\\b", "/a\u{0}b"] {
            assert!(t.url_of(bad, false).is_err(), "{bad:?}");
        }
    }
}
