//! Header names and strict parsers for the numeric tus headers.

use http::{HeaderMap, HeaderName};

use super::TusError;

pub const TUS_RESUMABLE: HeaderName = HeaderName::from_static("tus-resumable");
pub const TUS_VERSION: HeaderName = HeaderName::from_static("tus-version");
pub const TUS_EXTENSION: HeaderName = HeaderName::from_static("tus-extension");
pub const TUS_MAX_SIZE: HeaderName = HeaderName::from_static("tus-max-size");
pub const UPLOAD_OFFSET: HeaderName = HeaderName::from_static("upload-offset");
pub const UPLOAD_LENGTH: HeaderName = HeaderName::from_static("upload-length");
pub const UPLOAD_DEFER_LENGTH: HeaderName = HeaderName::from_static("upload-defer-length");
pub const UPLOAD_METADATA: HeaderName = HeaderName::from_static("upload-metadata");
pub const UPLOAD_CONCAT: HeaderName = HeaderName::from_static("upload-concat");
pub const UPLOAD_CHECKSUM: HeaderName = HeaderName::from_static("upload-checksum");
pub const UPLOAD_EXPIRES: HeaderName = HeaderName::from_static("upload-expires");
pub const TUS_CHECKSUM_ALGORITHM: HeaderName = HeaderName::from_static("tus-checksum-algorithm");
pub const X_HTTP_METHOD_OVERRIDE: HeaderName = HeaderName::from_static("x-http-method-override");

/// The largest decimal a tus length may have; keeps `u64` arithmetic far from overflow.
const MAX_DIGITS: usize = 19;

/// Reads a non-negative decimal header (`Upload-Offset`, `Upload-Length`). Absent is `None`;
/// anything but plain ASCII digits is a 400 naming the header.
pub fn parse_u64(headers: &HeaderMap, name: &HeaderName) -> Result<Option<u64>, TusError> {
    let Some(value) = headers.get(name) else {
        return Ok(None);
    };
    let invalid = || TusError::InvalidHeader(name.as_str().to_owned());
    let text = value.to_str().map_err(|_| invalid())?;
    parse_decimal(text).map(Some).ok_or_else(invalid)
}

/// Reads `Upload-Defer-Length`: absent is `false`, `1` is `true`, anything else is a 400.
pub fn parse_defer_length(headers: &HeaderMap) -> Result<bool, TusError> {
    match headers.get(UPLOAD_DEFER_LENGTH) {
        None => Ok(false),
        Some(v) if v == "1" => Ok(true),
        Some(_) => Err(TusError::InvalidHeader(
            UPLOAD_DEFER_LENGTH.as_str().to_owned(),
        )),
    }
}

/// Parses a decimal the way [`parse_u64`] does, from a bare string (for the fuzz tests).
pub fn parse_decimal(text: &str) -> Option<u64> {
    if text.is_empty() || text.len() > MAX_DIGITS || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    #[test]
    fn numeric_headers_are_strict() {
        let cases: &[(&str, Option<u64>)] = &[
            ("0", Some(0)),
            ("42", Some(42)),
            ("9223372036854775807", Some(9_223_372_036_854_775_807)),
        ];
        for (raw, want) in cases {
            let mut h = HeaderMap::new();
            h.insert(UPLOAD_LENGTH, HeaderValue::from_static(raw));
            assert_eq!(parse_u64(&h, &UPLOAD_LENGTH).ok().flatten(), *want, "{raw}");
        }
        for raw in [
            "",
            "-1",
            "+1",
            " 1",
            "1.0",
            "0x10",
            "99999999999999999999",
            "1e3",
        ] {
            let mut h = HeaderMap::new();
            h.insert(
                UPLOAD_LENGTH,
                HeaderValue::from_str(raw).expect("valid header"),
            );
            assert!(parse_u64(&h, &UPLOAD_LENGTH).is_err(), "{raw:?} accepted");
        }
        assert_eq!(
            parse_u64(&HeaderMap::new(), &UPLOAD_LENGTH).ok(),
            Some(None)
        );
    }
}
