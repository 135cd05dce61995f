//! `Upload-Concat` (the concatenation extension): `partial`, or `final;<url> <url> ...` where
//! each url names an upload of this endpoint, absolute or relative. A final names each partial
//! upload once, and at most [`MAX_CONCAT_PARTS`] of them: repeating a part would make the server
//! store its bytes over and over (a 64 KiB part named 400 times became 26 MB).

use std::collections::HashSet;

use super::TusError;
use crate::id::UploadId;

/// Longest accepted `Upload-Concat` value; a final upload of a few hundred partials fits.
pub const MAX_CONCAT_BYTES: usize = 16 * 1024;

/// Most partial uploads one final may name. Clients split a file into a few parallel parts;
/// each part costs the server a lookup and an open file while the final is made.
pub const MAX_CONCAT_PARTS: usize = 256;

/// What a creation request asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConcatRequest {
    Partial,
    /// The partial uploads, in order.
    Final(Vec<UploadId>),
}

impl ConcatRequest {
    /// Parses the header against the endpoint's `base_path` (`/files/`). A url that does not name
    /// an upload id under `base_path` is a 400: we never guess what a foreign url means.
    pub fn parse(raw: &str, base_path: &str) -> Result<Self, TusError> {
        let invalid = || TusError::InvalidHeader("upload-concat".to_owned());
        if raw.len() > MAX_CONCAT_BYTES {
            return Err(invalid());
        }
        if raw == "partial" {
            return Ok(Self::Partial);
        }
        let urls = raw.strip_prefix("final;").ok_or_else(invalid)?;
        let mut ids = Vec::new();
        let mut seen = HashSet::new();
        for url in urls.split(' ').filter(|u| !u.is_empty()) {
            let id = id_of(url, base_path).ok_or_else(invalid)?;
            if ids.len() == MAX_CONCAT_PARTS {
                return Err(TusError::TooManyConcatParts);
            }
            if !seen.insert(id.clone()) {
                return Err(TusError::RepeatedConcatPart);
            }
            ids.push(id);
        }
        if ids.is_empty() {
            return Err(invalid());
        }
        Ok(Self::Final(ids))
    }
}

/// The id named by `url` (`/files/ID` or `http://host/files/ID`).
fn id_of(url: &str, base_path: &str) -> Option<UploadId> {
    let path = match url.split_once("://") {
        Some((scheme, rest)) if scheme == "http" || scheme == "https" => &rest[rest.find('/')?..],
        Some(_) => return None,
        None => url,
    };
    UploadId::parse(path.strip_prefix(base_path)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "0123456789abcdef0123456789abcdef";
    const B: &str = "fedcba9876543210fedcba9876543210";

    #[test]
    fn parses_partial_and_final() {
        assert_eq!(
            ConcatRequest::parse("partial", "/files/").ok(),
            Some(ConcatRequest::Partial)
        );
        let raw = format!("final;/files/{A} http://example.com/files/{B}");
        let Ok(ConcatRequest::Final(ids)) = ConcatRequest::parse(&raw, "/files/") else {
            panic!("final not parsed");
        };
        assert_eq!(ids.iter().map(UploadId::as_str).collect::<Vec<_>>(), [A, B]);
    }

    #[test]
    fn rejects_foreign_or_malformed_urls() {
        for raw in [
            "".to_owned(),
            "Partial".to_owned(),
            "final;".to_owned(),
            format!("final:/files/{A}"),
            format!("final;/other/{A}"),
            format!("final;/files/{A}/x"),
            format!("final;ftp://h/files/{A}"),
            "final;/files/../../etc/passwd".to_owned(),
            format!("final;{}", "/files/x ".repeat(4000)),
        ] {
            assert!(ConcatRequest::parse(&raw, "/files/").is_err(), "{raw:?}");
        }
    }

    /// The same part twice, even spelled as another url, is refused; so is a list too long.
    #[test]
    fn rejects_repeated_parts_and_too_many_parts() {
        for raw in [
            format!("final;/files/{A} /files/{A}"),
            format!("final;/files/{A} /files/{B} http://example.com/files/{A}"),
        ] {
            assert!(
                matches!(
                    ConcatRequest::parse(&raw, "/files/"),
                    Err(TusError::RepeatedConcatPart)
                ),
                "{raw:?}"
            );
        }
        let urls = |n: usize| (0..n).map(|i| format!("/files/{i}")).collect::<Vec<_>>();
        let most = format!("final;{}", urls(MAX_CONCAT_PARTS).join(" "));
        let Ok(ConcatRequest::Final(ids)) = ConcatRequest::parse(&most, "/files/") else {
            panic!("{MAX_CONCAT_PARTS} parts not accepted");
        };
        assert_eq!(ids.len(), MAX_CONCAT_PARTS);
        let over = format!("final;{}", urls(MAX_CONCAT_PARTS + 1).join(" "));
        assert!(matches!(
            ConcatRequest::parse(&over, "/files/"),
            Err(TusError::TooManyConcatParts)
        ));
    }
}
