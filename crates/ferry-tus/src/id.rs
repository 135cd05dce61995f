//! Upload ids. The server generates them; a path segment that is not exactly one of ours is
//! rejected as "not found" before any store is asked, so no client string ever reaches a path.
//! Stores record ids in their infos as plain strings, and only well-formed ids load back.

use std::fmt;
use std::ops::Deref;

use rand::Rng;
use serde::{Deserialize, Deserializer, Serialize, de};

/// Length of an id: 32 lowercase hex characters (128 random bits).
const ID_LEN: usize = 32;

/// A validated upload id, stored as the bare string (as infos held it before ids were typed).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct UploadId(String);

impl UploadId {
    /// A fresh random id.
    pub fn generate() -> Self {
        let bits: u128 = rand::rng().random();
        Self(format!("{bits:032x}"))
    }

    /// Accepts only the exact shape [`UploadId::generate`] produces.
    pub fn parse(raw: &str) -> Option<Self> {
        let well_formed = raw.len() == ID_LEN
            && raw
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        well_formed.then(|| Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for UploadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Read-only access to the text, which cannot break the id's shape.
impl Deref for UploadId {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for UploadId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = std::borrow::Cow::<str>::deserialize(deserializer)?;
        Self::parse(&raw).ok_or_else(|| de::Error::custom("not an upload id"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_parse_back() {
        let id = UploadId::generate();
        assert_eq!(UploadId::parse(id.as_str()), Some(id));
    }

    #[test]
    fn ids_are_stored_as_bare_strings() {
        let id = UploadId::generate();
        let json = serde_json::to_string(&id).expect("serialise");
        assert_eq!(json, format!("\"{id}\""));
        let back: UploadId = serde_json::from_str(&json).expect("deserialise");
        assert_eq!(back, id);
        assert!(serde_json::from_str::<UploadId>("\"../etc/passwd\"").is_err());
    }

    #[test]
    fn foreign_ids_are_rejected() {
        for raw in [
            "",
            "..",
            "../../etc/passwd",
            "0123456789abcdef0123456789abcde",
            "0123456789abcdef0123456789abcdef0",
            "0123456789ABCDEF0123456789ABCDEF",
            "0123456789abcdef0123456789abcde\0",
            "0123456789abcdef/123456789abcdef",
        ] {
            assert_eq!(UploadId::parse(raw), None, "{raw:?}");
        }
    }
}
