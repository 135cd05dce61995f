//! The provider session sealed inside an Uppy auth token as `{"<provider>": session}`, in
//! Companion's field names (`accessToken`, `refreshToken`) so tokens cross between Ferry and
//! Companion; Ferry's extras (`username`) are extra keys Companion ignores, and unknown keys
//! from Companion are kept.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One signed-in account at one provider.
#[derive(Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Shown in list answers; cached here to save a call per page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Anything else the token carried.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("username", &self.username)
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<set>"),
            )
            .finish_non_exhaustive()
    }
}

impl Session {
    /// The session in a token's payload, if it has an access token.
    pub fn from_value(value: Value) -> Option<Self> {
        serde_json::from_value::<Self>(value)
            .ok()
            .filter(|s| !s.access_token.is_empty())
    }

    /// The session as a token's payload value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}
