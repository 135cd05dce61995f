//! File names from what a source says about itself: a `Content-Disposition` value or the last
//! segment of a URL path, reduced to a plain base name (no directories, no control characters).
//! Shared by `/url/meta` and the transfer engine, so neither reaches into the other.

use url::Url;

/// The file name from a `Content-Disposition` value (`filename*=UTF-8''...` wins).
pub fn disposition_name(value: &str) -> Option<String> {
    let mut plain = None;
    for part in value.split(';').map(str::trim) {
        let Some((key, val)) = part.split_once('=') else {
            continue;
        };
        match key.trim().to_ascii_lowercase().as_str() {
            "filename*" => {
                let encoded = val.trim().splitn(3, '\'').nth(2)?;
                let decoded = percent_encoding::percent_decode_str(encoded)
                    .decode_utf8()
                    .ok()?;
                return sanitize(&decoded);
            }
            "filename" => plain = sanitize(val.trim().trim_matches('"')),
            _ => {}
        }
    }
    plain
}

/// The last path segment of `url`, percent-decoded.
pub fn path_name(url: &Url) -> Option<String> {
    let last = url.path_segments()?.next_back()?;
    let decoded = percent_encoding::percent_decode_str(last)
        .decode_utf8()
        .ok()?;
    sanitize(&decoded)
}

fn sanitize(name: &str) -> Option<String> {
    let base = name.rsplit(['/', '\\']).next()?.trim();
    let clean: String = base.chars().filter(|c| !c.is_control()).collect();
    (!clean.is_empty() && clean != "." && clean != "..").then_some(clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_disposition_and_path() {
        assert_eq!(
            disposition_name(r#"attachment; filename="a b.txt""#).as_deref(),
            Some("a b.txt")
        );
        assert_eq!(
            disposition_name("attachment; filename=x.bin; filename*=UTF-8''%C3%A9t%C3%A9.txt")
                .as_deref(),
            Some("été.txt")
        );
        assert_eq!(
            disposition_name(r#"attachment; filename="../../etc/passwd""#).as_deref(),
            Some("passwd")
        );
        let url = Url::parse("https://x.example/dir/my%20file.png?q=1").expect("url");
        assert_eq!(path_name(&url).as_deref(), Some("my file.png"));
        let root = Url::parse("https://x.example/").expect("url");
        assert_eq!(path_name(&root), None);
    }
}
