//! `Upload-Metadata`: comma-separated `key base64value` pairs, parsed strictly.
//!
//! Values are decoded once here and kept as bytes; the canonical header is re-rendered from them,
//! so nothing a client sent is ever copied raw into a response header.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use super::TusError;

/// Largest accepted `Upload-Metadata` header, in bytes.
pub const MAX_METADATA_BYTES: usize = 4096;

/// Decoded upload metadata: key to raw value bytes (a value need not be UTF-8).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata(pub BTreeMap<String, Option<Vec<u8>>>);

impl Metadata {
    /// Parses the header value. Keys must be unique, non-empty, and free of spaces and commas;
    /// values must be valid padded base64; a key may stand alone (no value).
    pub fn parse(raw: &str) -> Result<Self, TusError> {
        let invalid = |why: &str| TusError::InvalidMetadata(why.to_owned());
        if raw.len() > MAX_METADATA_BYTES {
            return Err(TusError::MetadataTooLarge);
        }
        let mut pairs = BTreeMap::new();
        if raw.trim().is_empty() {
            return Ok(Self(pairs));
        }
        for item in raw.split(',') {
            let mut parts = item.trim_start().split(' ');
            let key = parts.next().unwrap_or_default();
            let value = parts.next();
            if parts.next().is_some() {
                return Err(invalid("a pair has more than one space"));
            }
            if key.is_empty() || !key.bytes().all(|b| b.is_ascii_graphic() && b != b',') {
                return Err(invalid("a key is empty or has invalid characters"));
            }
            let value = match value {
                None => None,
                Some(v) => Some(
                    STANDARD
                        .decode(v)
                        .map_err(|_| invalid("a value is not valid base64"))?,
                ),
            };
            if pairs.insert(key.to_owned(), value).is_some() {
                return Err(invalid("a key appears twice"));
            }
        }
        Ok(Self(pairs))
    }

    /// Renders the canonical header value.
    pub fn render(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| match v {
                Some(v) => format!("{k} {}", STANDARD.encode(v)),
                None => k.clone(),
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// A value as UTF-8 text, if present and valid.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)?
            .as_deref()
            .and_then(|v| std::str::from_utf8(v).ok())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_valid_headers() {
        let m = Metadata::parse("filename d29ybGRfZG9taW5hdGlvbl9wbGFuLnBkZg==,is_confidential")
            .expect("valid");
        assert_eq!(m.text("filename"), Some("world_domination_plan.pdf"));
        assert_eq!(m.0.get("is_confidential"), Some(&None));
        assert_eq!(
            m.render(),
            "filename d29ybGRfZG9taW5hdGlvbl9wbGFuLnBkZg==,is_confidential"
        );
        assert!(Metadata::parse("").expect("empty").is_empty());
        assert_eq!(
            Metadata::parse("empty ").expect("empty value").0["empty"],
            Some(vec![])
        );
    }

    #[test]
    fn rejects_bad_headers() {
        for raw in [
            "a aGk=,a aGk=",
            "a not*base64",
            "a aGk= extra",
            " ,",
            "k\u{7f} aGk=",
            "a aGk",
        ] {
            assert!(Metadata::parse(raw).is_err(), "{raw:?} accepted");
        }
        let huge = format!("k {}", "A".repeat(MAX_METADATA_BYTES));
        assert!(matches!(
            Metadata::parse(&huge),
            Err(TusError::MetadataTooLarge)
        ));
    }
}
