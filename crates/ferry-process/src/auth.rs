//! Transloadit's signature authentication. The signature is an HMAC of the exact `params` bytes
//! as sent, keyed with the Auth Secret, hex-encoded, written `sha384:<hex>` (also `sha1:`,
//! `sha256:`, `sha512:`) or, the legacy form, a bare 40-digit HMAC-SHA1. With a secret set every
//! request must be signed and its `auth.expires` in the future.

use hmac::{Hmac, Mac};
use jiff::Timestamp;
use serde_json::Value;

use crate::error::ApiError;

/// The service's credentials: the Auth Key requests must name, and the secret they are signed with.
#[derive(Clone)]
pub struct Credentials {
    /// The Auth Key (`params.auth.key`).
    pub key: String,
    /// The Auth Secret; `None`: requests need not be signed.
    pub secret: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The secret never reaches a log.
        f.debug_struct("Credentials")
            .field("key", &self.key)
            .field("secret", &self.secret.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl Credentials {
    /// Checks `params` (the parsed `raw` field) and `signature` at `now`.
    pub fn check(
        &self,
        raw: &str,
        params: &Value,
        signature: Option<&str>,
        now: Timestamp,
    ) -> Result<(), ApiError> {
        let auth = params.get("auth").ok_or_else(|| {
            ApiError::bad("NO_AUTH_PARAMETER", "The params field has no auth object.")
        })?;
        let key = match auth.get("key") {
            None => {
                return Err(ApiError::bad(
                    "NO_AUTH_KEY_PARAMETER",
                    "The auth object has no key.",
                ));
            }
            Some(Value::String(k)) => k,
            Some(_) => {
                return Err(ApiError::bad(
                    "INVALID_AUTH_KEY_PARAMETER",
                    "auth.key must be a string.",
                ));
            }
        };
        if !constant_eq(key.as_bytes(), self.key.as_bytes()) {
            return Err(ApiError::auth(
                "GET_ACCOUNT_UNKNOWN_AUTH_KEY",
                "The auth key is not known to this server.",
            ));
        }
        let Some(secret) = &self.secret else {
            return Ok(());
        };
        let expires = match auth.get("expires") {
            None | Some(Value::Null) => {
                return Err(ApiError::bad(
                    "NO_AUTH_EXPIRES_PARAMETER",
                    "Signed requests need auth.expires.",
                ));
            }
            Some(Value::String(s)) => parse_expires(s).ok_or_else(|| {
                ApiError::bad(
                    "INVALID_AUTH_EXPIRES_PARAMETER",
                    "auth.expires must be a UTC time such as 2026/11/26 17:00:00+00:00.",
                )
            })?,
            Some(_) => {
                return Err(ApiError::bad(
                    "INVALID_AUTH_EXPIRES_PARAMETER",
                    "auth.expires must be a string.",
                ));
            }
        };
        let signature = signature.filter(|s| !s.is_empty()).ok_or_else(|| {
            ApiError::auth(
                "NO_SIGNATURE_FIELD",
                "Signature authentication is on: the request needs a signature field.",
            )
        })?;
        if !verify(secret.as_bytes(), raw.as_bytes(), signature) {
            return Err(ApiError::auth(
                "INVALID_SIGNATURE",
                "The signature does not match the params.",
            ));
        }
        if expires <= now {
            return Err(ApiError::auth(
                "AUTH_EXPIRED",
                "auth.expires is in the past: the request has expired.",
            ));
        }
        Ok(())
    }
}

/// `2026/11/26 17:00:00+00:00` (the documented form) or ISO 8601 (`2026-11-26T17:00:00.000Z`).
pub fn parse_expires(raw: &str) -> Option<Timestamp> {
    let raw = raw.trim();
    if let Ok(t) = raw.parse::<Timestamp>() {
        return Some(t);
    }
    // The documented form: slashes in the date, a space before the time.
    let (date, time) = raw.split_once(' ')?;
    format!("{}T{}", date.replace('/', "-"), time.trim())
        .parse::<Timestamp>()
        .ok()
}

/// Constant-time check of the HMAC of `message` under `secret` with digest `$d` against `$want`.
macro_rules! hmac_matches {
    ($d:ty, $secret:expr, $message:expr, $want:expr) => {
        match Hmac::<$d>::new_from_slice($secret) {
            Ok(mut mac) => {
                mac.update($message);
                mac.verify_slice($want).is_ok()
            }
            Err(_) => false,
        }
    };
}

/// Whether `signature` is the HMAC of `message` under `secret`, in any accepted form.
pub fn verify(secret: &[u8], message: &[u8], signature: &str) -> bool {
    let (algo, digest) = signature.split_once(':').unwrap_or(("sha1", signature));
    let Some(want) = unhex(digest.trim()) else {
        return false;
    };
    match algo.to_ascii_lowercase().as_str() {
        "sha1" => hmac_matches!(sha1::Sha1, secret, message, &want),
        "sha256" => hmac_matches!(sha2::Sha256, secret, message, &want),
        "sha384" => hmac_matches!(sha2::Sha384, secret, message, &want),
        "sha512" => hmac_matches!(sha2::Sha512, secret, message, &want),
        _ => false,
    }
}

/// `algo:hex` of `message` under `secret` (notifications are signed so).
pub fn sign_sha384(secret: &[u8], message: &[u8]) -> String {
    // Any key length is valid for HMAC.
    match Hmac::<sha2::Sha384>::new_from_slice(secret) {
        Ok(mut mac) => {
            mac.update(message);
            format!("sha384:{}", crate::id::hex(&mac.finalize().into_bytes()))
        }
        // HMAC takes keys of any length; this arm is never taken.
        Err(_) => String::new(),
    }
}

fn unhex(raw: &str) -> Option<Vec<u8>> {
    if raw.len() % 2 != 0 || raw.len() > 256 {
        return None;
    }
    (0..raw.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(raw.get(i..i + 2)?, 16).ok())
        .collect()
}

fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
