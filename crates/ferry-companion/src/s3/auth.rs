//! Optional access control for the S3 routes: a bearer token issued by the host application and
//! signed with a secret it shares with `ferry`.
//!
//! Token format: `base64url(payload) "." base64url(HMAC-SHA256(secret, base64url(payload)))`,
//! unpadded base64url, where `payload` is the JSON `{"sub": "<user id>", "exp": <unix seconds>}`.
//! Object keys created under a token carry a tag derived from its subject, so multipart calls on
//! a key made under another subject are refused (403).

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;

use super::S3State;
use crate::error::CompanionError;

type HmacSha256 = Hmac<Sha256>;

/// Who the bearer token was issued to; stored in the request's extensions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subject(pub String);

#[derive(Deserialize)]
struct Payload {
    sub: String,
    exp: u64,
}

/// Signs `{sub, exp}` into a token (what the host application does; used by tests and docs).
pub fn issue_token(secret: &[u8], sub: &str, exp: u64) -> String {
    let payload = serde_json::json!({ "sub": sub, "exp": exp }).to_string();
    let body = URL_SAFE_NO_PAD.encode(payload);
    let mut mac = mac(secret);
    mac.update(body.as_bytes());
    format!(
        "{body}.{}",
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    )
}

fn mac(secret: &[u8]) -> HmacSha256 {
    // HMAC accepts keys of any length, so this cannot fail.
    <HmacSha256 as Mac>::new_from_slice(secret).unwrap_or_else(|_| unreachable!())
}

/// Checks `token` against `secret` at time `now` (unix seconds).
pub fn verify_token(secret: &[u8], token: &str, now: u64) -> Result<Subject, CompanionError> {
    let invalid = CompanionError::Unauthorized("invalid token");
    let (body, sig) = token
        .split_once('.')
        .ok_or(CompanionError::Unauthorized("invalid token"))?;
    let sig = URL_SAFE_NO_PAD
        .decode(sig)
        .map_err(|_| CompanionError::Unauthorized("invalid token"))?;
    let mut mac = mac(secret);
    mac.update(body.as_bytes());
    // Constant-time comparison.
    mac.verify_slice(&sig)
        .map_err(|_| CompanionError::Unauthorized("invalid token"))?;
    let payload = URL_SAFE_NO_PAD
        .decode(body)
        .map_err(|_| CompanionError::Unauthorized("invalid token"))?;
    let payload: Payload = serde_json::from_slice(&payload).map_err(|_| invalid)?;
    if payload.exp <= now {
        return Err(CompanionError::Unauthorized("token expired"));
    }
    if payload.sub.is_empty() {
        return Err(CompanionError::Unauthorized("invalid token"));
    }
    Ok(Subject(payload.sub))
}

/// The short tag that binds object keys to a subject: 16 hex digits of an HMAC of it, so keys
/// leak nothing about the subject and cannot be forged without the secret.
pub fn subject_tag(secret: &[u8], subject: &Subject) -> String {
    let mut mac = mac(secret);
    mac.update(b"ferry-s3-key:");
    mac.update(subject.0.as_bytes());
    mac.finalize().into_bytes()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Middleware: when a secret is configured, requires a valid `Authorization: Bearer` token and
/// records its [`Subject`].
pub async fn require_token(
    State(state): State<S3State>,
    mut request: Request,
    next: Next,
) -> Result<Response, CompanionError> {
    if let Some(secret) = &state.settings.auth_secret {
        let secret = secret.expose();
        let token = request
            .headers()
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or(CompanionError::Unauthorized("a bearer token is required"))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let subject = verify_token(secret.as_bytes(), token.trim(), now)?;
        request.extensions_mut().insert(subject);
    }
    Ok(next.run(request).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_round_trips_and_tampering_is_refused() {
        let token = issue_token(b"s3cret", "alice", 2_000);
        assert_eq!(
            verify_token(b"s3cret", &token, 1_000).expect("valid"),
            Subject("alice".into())
        );
        assert!(matches!(
            verify_token(b"other", &token, 1_000),
            Err(CompanionError::Unauthorized("invalid token"))
        ));
        assert!(matches!(
            verify_token(b"s3cret", &token, 2_000),
            Err(CompanionError::Unauthorized("token expired"))
        ));
        let forged = issue_token(b"s3cret", "bob", 2_000);
        let (_, sig) = token.split_once('.').expect("dot");
        let (body, _) = forged.split_once('.').expect("dot");
        assert!(verify_token(b"s3cret", &format!("{body}.{sig}"), 1_000).is_err());
        assert!(verify_token(b"s3cret", "garbage", 1_000).is_err());
    }

    #[test]
    fn tags_differ_per_subject_and_secret() {
        let a = subject_tag(b"k", &Subject("alice".into()));
        assert_eq!(a.len(), 16);
        assert_ne!(a, subject_tag(b"k", &Subject("bob".into())));
        assert_ne!(a, subject_tag(b"k2", &Subject("alice".into())));
    }
}
