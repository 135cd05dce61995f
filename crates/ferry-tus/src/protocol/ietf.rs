//! The wire vocabulary of the IETF httpbis draft "Resumable Uploads for HTTP" at interop
//! version 8: its header names, structured-field booleans (`Upload-Complete: ?0|?1`),
//! `Upload-Limit`, and the RFC 9457 problem types it defines. No I/O, so every rule is a table
//! test.

use http::{HeaderMap, HeaderName, HeaderValue};

/// The interop version this server speaks.
pub const INTEROP_VERSION: &str = "8";

/// The media type of an append (PATCH) body.
pub const PARTIAL_UPLOAD: &str = "application/partial-upload";

pub const UPLOAD_DRAFT_INTEROP_VERSION: HeaderName =
    HeaderName::from_static("upload-draft-interop-version");
pub const UPLOAD_COMPLETE: HeaderName = HeaderName::from_static("upload-complete");
pub const UPLOAD_LIMIT: HeaderName = HeaderName::from_static("upload-limit");

/// Problem type: the `Upload-Offset` sent is not the upload's offset (409).
pub const MISMATCHING_UPLOAD_OFFSET: &str =
    "https://iana.org/assignments/http-problem-types#mismatching-upload-offset";
/// Problem type: the upload is already complete (400).
pub const COMPLETED_UPLOAD: &str =
    "https://iana.org/assignments/http-problem-types#completed-upload";
/// Problem type: the request's length conflicts with the upload's length (400).
pub const INCONSISTENT_UPLOAD_LENGTH: &str =
    "https://iana.org/assignments/http-problem-types#inconsistent-upload-length";

/// Whether the request asks for the draft: `Upload-Draft-Interop-Version: 8`.
pub fn is_draft_request(headers: &HeaderMap) -> bool {
    headers
        .get(UPLOAD_DRAFT_INTEROP_VERSION)
        .is_some_and(|v| v.as_bytes().trim_ascii() == INTEROP_VERSION.as_bytes())
}

/// Parses a structured-field boolean (RFC 9651): exactly `?0` or `?1`, surrounding spaces
/// allowed. Anything else is `None`.
pub fn parse_sf_bool(raw: &[u8]) -> Option<bool> {
    match raw.trim_ascii() {
        b"?0" => Some(false),
        b"?1" => Some(true),
        _ => None,
    }
}

/// Renders a structured-field boolean.
pub fn render_sf_bool(value: bool) -> HeaderValue {
    HeaderValue::from_static(if value { "?1" } else { "?0" })
}

/// `Upload-Complete`; `None` when absent or invalid.
pub fn upload_complete(headers: &HeaderMap) -> Option<bool> {
    parse_sf_bool(headers.get(UPLOAD_COMPLETE)?.as_bytes())
}

/// `Upload-Limit` (a structured dictionary): `max-size=N` when a maximum size is set.
pub fn render_upload_limit(max_size: Option<u64>) -> Option<HeaderValue> {
    max_size.and_then(|max| HeaderValue::from_str(&format!("max-size={max}")).ok())
}

/// Whether `Content-Type` is `application/partial-upload` (parameters tolerated).
pub fn is_partial_upload(headers: &HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case(PARTIAL_UPLOAD))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sf_booleans_are_strict() {
        let cases: &[(&[u8], Option<bool>)] = &[
            (b"?0", Some(false)),
            (b"?1", Some(true)),
            (b" ?1 ", Some(true)),
            (b"?2", None),
            (b"1", None),
            (b"true", None),
            (b"", None),
            (b"?", None),
            (b"?1;a=b", None),
        ];
        for (raw, want) in cases {
            assert_eq!(
                parse_sf_bool(raw),
                *want,
                "{:?}",
                String::from_utf8_lossy(raw)
            );
        }
        for b in [false, true] {
            assert_eq!(parse_sf_bool(render_sf_bool(b).as_bytes()), Some(b));
        }
    }

    #[test]
    fn upload_limit_and_draft_detection() {
        assert_eq!(render_upload_limit(None), None);
        assert_eq!(
            render_upload_limit(Some(1024))
                .as_ref()
                .map(|v| v.as_bytes()),
            Some(&b"max-size=1024"[..])
        );
        let cases: &[(Option<&str>, bool)] = &[
            (Some("8"), true),
            (Some(" 8"), true),
            (Some("7"), false),
            (None, false),
        ];
        for (raw, want) in cases {
            let mut h = HeaderMap::new();
            if let Some(raw) = raw {
                h.insert(UPLOAD_DRAFT_INTEROP_VERSION, HeaderValue::from_static(raw));
            }
            assert_eq!(is_draft_request(&h), *want, "{raw:?}");
        }
        let types: &[(&str, bool)] = &[
            ("application/partial-upload", true),
            ("application/partial-upload; x=1", true),
            ("application/offset+octet-stream", false),
        ];
        for (raw, want) in types {
            let mut h = HeaderMap::new();
            h.insert(http::header::CONTENT_TYPE, HeaderValue::from_static(raw));
            assert_eq!(is_partial_upload(&h), *want, "{raw}");
        }
    }
}
