//! Upload ids. The server generates them (32 lowercase hex characters), or a pre-create hook
//! chooses one; either way an id is 1 to [`MAX_ID_LEN`] characters of `[A-Za-z0-9_-]`, so it is
//! safe as a URL segment, a file name and an object key, and never holds `.` (stores add
//! suffixes such as `.info` to it, which no id can then collide with) or `/`. A path segment of
//! another shape is rejected as "not found" before any store is asked, so no other client
//! string ever reaches a path. Stores record ids in their infos as plain strings, and only
//! well-formed ids load back.

use std::fmt;
use std::ops::Deref;

use rand::Rng;
use serde::{Deserialize, Deserializer, Serialize, de};

/// Longest id, generated or chosen by a hook (the same bound ferry-hooks checks).
pub const MAX_ID_LEN: usize = 128;

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

    /// Accepts 1 to [`MAX_ID_LEN`] characters of `[A-Za-z0-9_-]`.
    pub fn parse(raw: &str) -> Option<Self> {
        let well_formed = (1..=MAX_ID_LEN).contains(&raw.len())
            && raw
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        well_formed.then(|| Self(raw.to_owned()))
    }

    /// The id as text.
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
        let long = "a".repeat(MAX_ID_LEN + 1);
        for raw in [
            "",
            ".",
            "..",
            "../../etc/passwd",
            "abc.info",
            "a b",
            "a%2Fb",
            "caf\u{e9}",
            &long,
            "0123456789abcdef0123456789abcde\0",
            "0123456789abcdef/123456789abcdef",
        ] {
            assert_eq!(UploadId::parse(raw), None, "{raw:?}");
        }
    }

    /// Ids a pre-create hook may choose (ferry-hooks checks the same rule).
    #[test]
    fn custom_ids_in_the_safe_alphabet_are_accepted() {
        let longest = "Z".repeat(MAX_ID_LEN);
        for raw in ["user-42_file", "A", "-", "0123456789ABCDEF", &longest] {
            assert_eq!(UploadId::parse(raw).as_deref(), Some(raw), "{raw:?}");
        }
    }
}
