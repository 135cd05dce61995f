//! Ferry's bearer tokens: what they claim, how they are checked, how the host application
//! makes one.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use crate::error::AuthError;
use crate::jwt;

/// What a token says: who it is for, until when, and optional limits on what that subject may
/// upload with it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The subject (the application's user id). Uploads and transfers belong to it.
    pub sub: String,
    /// Expiry, Unix seconds.
    pub exp: u64,
    /// Largest file, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_size: Option<u64>,
    /// Accepted file types: MIME patterns (`image/*`, `application/pdf`) or extensions (`.pdf`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub types: Option<Vec<String>>,
    /// Where files may be stored: storage keys (tus) and object keys (S3) start with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
}

/// Makes an HS256 JWT of `claims` (what the host application does with its JWT library).
pub fn issue(secret: &[u8], claims: &Claims) -> String {
    // Serialising plain strings and numbers cannot fail.
    let json = serde_json::to_string(claims).unwrap_or_default();
    jwt::sign(secret, &json)
}

/// The two-part token the `/s3/*` routes accepted before the JWT form:
/// `base64url({"sub","exp"}) "." base64url(HMAC-SHA256(secret, first part))`. Still accepted;
/// made here for compatibility tests.
pub fn issue_legacy(secret: &[u8], sub: &str, exp: u64) -> String {
    let body = URL_SAFE_NO_PAD.encode(serde_json::json!({ "sub": sub, "exp": exp }).to_string());
    let sig = jwt::mac_b64(secret, body.as_bytes());
    format!("{body}.{sig}")
}

/// Checks `token` (JWT or the legacy two-part form) against `secret` at `now` (Unix seconds).
pub fn verify(secret: &[u8], token: &str, now: u64) -> Result<Claims, AuthError> {
    let claims = match token.matches('.').count() {
        2 => jwt::verify(secret, token).map_err(|_| AuthError::Invalid)?,
        1 => {
            let (body, sig) = token.split_once('.').ok_or(AuthError::Invalid)?;
            jwt::check_mac(secret, body.as_bytes(), sig).map_err(|_| AuthError::Invalid)?;
            jwt::decode_json(body).map_err(|_| AuthError::Invalid)?
        }
        _ => return Err(AuthError::Invalid),
    };
    let claims: Claims = serde_json::from_value(claims).map_err(|_| AuthError::Invalid)?;
    if claims.sub.is_empty() {
        return Err(AuthError::Invalid);
    }
    if claims.exp <= now {
        return Err(AuthError::Expired);
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(sub: &str, exp: u64) -> Claims {
        Claims {
            sub: sub.to_owned(),
            exp,
            ..Claims::default()
        }
    }

    #[test]
    fn jwt_and_legacy_tokens_verify_until_they_expire() {
        let full = Claims {
            max_size: Some(10),
            types: Some(vec!["image/*".into()]),
            prefix: Some("u/alice/".into()),
            ..claims("alice", 2_000)
        };
        assert_eq!(verify(b"k", &issue(b"k", &full), 1_000), Ok(full.clone()));
        assert_eq!(
            verify(b"k", &issue_legacy(b"k", "alice", 2_000), 1_000),
            Ok(claims("alice", 2_000))
        );
        assert_eq!(
            verify(b"k", &issue(b"k", &full), 2_000),
            Err(AuthError::Expired)
        );
        assert_eq!(
            verify(b"k", &issue_legacy(b"k", "alice", 2_000), 2_000),
            Err(AuthError::Expired)
        );
    }

    #[test]
    fn forged_malformed_and_subjectless_tokens_are_invalid() {
        let good = issue(b"k", &claims("alice", 2_000));
        for bad in [
            issue(b"other", &claims("alice", 2_000)),
            issue_legacy(b"other", "alice", 2_000),
            issue(b"k", &claims("", 2_000)),
            "a.b.c.d".to_owned(),
            "nodots".to_owned(),
            good.replacen('.', "x.", 1),
            jwt::sign(b"k", r#"{"sub":"alice"}"#),
            jwt::sign(b"k", r#"{"sub":"alice","exp":"soon"}"#),
        ] {
            assert_eq!(verify(b"k", &bad, 1_000), Err(AuthError::Invalid), "{bad}");
        }
    }
}
