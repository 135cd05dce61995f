//! Ids: an Assembly id or a file id is 32 lower-case hex digits (a UUIDv4 without dashes, as
//! Transloadit's and its SDK's). Parsed once from the path; the type is the proof.

use std::fmt;

use serde::{Deserialize, Serialize};

/// 32 lower-case hex digits.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Id(String);

impl Id {
    /// A fresh random id.
    pub fn random() -> Self {
        let bytes: [u8; 16] = rand::random();
        Self(hex(&bytes))
    }

    /// `raw` if it is 32 hex digits (either case; kept lower-case), else `None`.
    pub fn parse(raw: &str) -> Option<Self> {
        (raw.len() == 32 && raw.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| Self(raw.to_ascii_lowercase()))
    }

    /// The id's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Id {
    type Error = String;
    fn try_from(raw: String) -> Result<Self, String> {
        Self::parse(&raw).ok_or_else(|| format!("{raw:?} is not a 32-hex-digit id"))
    }
}

impl From<Id> for String {
    fn from(id: Id) -> String {
        id.0
    }
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_32_hex_digits() {
        let id = Id::random();
        assert_eq!(id.as_str().len(), 32);
        assert_eq!(Id::parse(id.as_str()), Some(id));
        assert_eq!(
            Id::parse("ABCDEF0123456789abcdef0123456789").map(|i| i.to_string()),
            Some("abcdef0123456789abcdef0123456789".to_owned())
        );
        for bad in [
            "",
            "abc",
            "../../etc/passwd000000000000000000",
            "g0000000000000000000000000000000",
        ] {
            assert_eq!(Id::parse(bad), None, "{bad:?}");
        }
    }
}
