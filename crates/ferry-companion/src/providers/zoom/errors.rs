//! Zoom's error answers read into [`ProviderError`]s: the API's `{"code", "message"}` (code 124
//! is a refused access token) and the token endpoint's `{"reason", "error"}` (a spent refresh
//! token is `invalid_request` with "Invalid Token!").

use serde_json::Value;

use crate::providers::ProviderError;
use crate::providers::api::ErrorFields;

/// API errors: 401 (Zoom's code 124, an invalid or expired access token) is an auth error;
/// everything else carries Zoom's message.
pub fn zoom_error(status: u16, body: &[u8]) -> ProviderError {
    let fields = ErrorFields::parse(body);
    let code = fields.get("code").and_then(Value::as_i64);
    if status == 401 || code == Some(124) {
        return ProviderError::Auth;
    }
    fields.status(status, &["message"], "Zoom")
}

/// Token endpoint errors: a refused grant (`invalid_grant`, or Zoom's `invalid_request` with
/// "Invalid Token!" for a spent refresh token) and 401 are auth errors.
pub fn token_error(status: u16, body: &[u8]) -> ProviderError {
    let fields = ErrorFields::parse(body);
    let spent = fields
        .str("reason")
        .is_some_and(|r| r.contains("Invalid Token"));
    if status == 401 || fields.str("error") == Some("invalid_grant") || spent {
        return ProviderError::Auth;
    }
    fields.status(status, &["reason", "error_description"], "Zoom")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoom_errors_map_to_auth_or_zoom_messages() {
        assert!(matches!(
            zoom_error(401, br#"{"code":124,"message":"Invalid access token."}"#),
            ProviderError::Auth
        ));
        assert_eq!(
            zoom_error(
                404,
                br#"{"code":3301,"message":"This recording does not exist."}"#
            )
            .to_string(),
            "HTTP 404: This recording does not exist."
        );
        assert!(matches!(
            token_error(
                400,
                br#"{"reason":"Invalid Token!","error":"invalid_request"}"#
            ),
            ProviderError::Auth
        ));
        assert_eq!(
            token_error(
                400,
                br#"{"reason":"Invalid client_id or client_secret","error":"invalid_client"}"#
            )
            .to_string(),
            "HTTP 400: Invalid client_id or client_secret"
        );
    }
}
