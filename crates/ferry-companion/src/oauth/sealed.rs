//! The sealed values of a login and of thumbnail links, each tagged with its kind so one can
//! never be passed off as another, and the check of the Uppy auth token a request carries
//! (header `uppy-auth-token` or query `uppyAuthToken`).

use axum::http::HeaderMap;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::CompanionError;
use crate::providers::Session;
use crate::state::AppState;
use crate::token;

/// What the OAuth `state` carries from `/connect` to `/redirect` and `/send-token`.
#[derive(Debug, Deserialize, Serialize)]
pub struct LoginState {
    /// Kind tag: `state`.
    pub k: String,
    /// Provider id.
    pub p: String,
    /// Nonce shared with the cookie.
    pub n: String,
    /// The page's origin (allowed when the login began).
    pub o: String,
    /// The auth-socket id (`authCallbackToken`), for the websocket hand-off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t: Option<String>,
    /// Expiry, Unix seconds.
    pub e: i64,
}

/// What the login cookie carries: the nonce and the PKCE verifier.
#[derive(Debug, Deserialize, Serialize)]
pub struct LoginCookie {
    /// Kind tag: `cookie`.
    pub k: String,
    pub p: String,
    pub n: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v: Option<String>,
    pub e: i64,
}

/// A short-lived grant in a thumbnail link, so a plain `<img>` can load it: one file's only.
#[derive(Debug, Deserialize, Serialize)]
pub struct ThumbGrant {
    /// Kind tag: `thumb`.
    pub k: String,
    pub p: String,
    /// The provider access token.
    pub a: String,
    /// The one file (its id) whose thumbnail the grant loads.
    pub f: String,
    pub e: i64,
}

/// Seals `value` under the server secret.
pub fn seal<T: Serialize>(secret: &[u8], value: &T) -> String {
    let json = serde_json::to_vec(value).unwrap_or_default();
    token::seal(secret, &json)
}

/// Opens a value sealed by [`seal`], if genuine.
pub fn open<T: for<'de> Deserialize<'de>>(secret: &[u8], sealed: &str) -> Option<T> {
    let raw = token::open(secret, sealed).ok()?;
    serde_json::from_slice(&raw).ok()
}

/// `n` random bytes as lowercase hex.
pub fn random_hex(n: usize) -> String {
    let mut raw = vec![0u8; n];
    rand::rng().fill_bytes(&mut raw);
    raw.iter().map(|b| format!("{b:02x}")).collect()
}

/// A PKCE verifier (43 URL-safe characters) and its S256 challenge.
pub fn pkce_pair() -> (String, String) {
    let mut raw = [0u8; 32];
    rand::rng().fill_bytes(&mut raw);
    let verifier = URL_SAFE_NO_PAD.encode(raw);
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

/// The server secret, or an internal error (startup refuses providers without one).
pub fn secret(state: &AppState) -> Result<&[u8], CompanionError> {
    state
        .config()
        .secret
        .as_ref()
        .map(|s| s.expose().as_bytes())
        .ok_or_else(|| CompanionError::Internal("providers need --secret".into()))
}

/// The Uppy auth token of a request: header `uppy-auth-token`, else query `uppyAuthToken`.
pub fn request_token<'a>(headers: &'a HeaderMap, query_token: Option<&'a str>) -> Option<&'a str> {
    headers
        .get("uppy-auth-token")
        .and_then(|v| v.to_str().ok())
        .or(query_token)
        .filter(|t| !t.is_empty())
}

/// The session inside `token` for provider `p`: 401 when missing, forged, expired, for another
/// provider, or without an access token.
pub fn verify(state: &AppState, p: &str, token: Option<&str>) -> Result<Session, CompanionError> {
    let token = token.ok_or(CompanionError::Unauthorized("Unauthorized"))?;
    let value = token::verify(secret(state)?, p, token, token::now()).map_err(|e| {
        tracing::debug!(error = %e, provider = p, "auth token refused");
        CompanionError::Unauthorized("Unauthorized")
    })?;
    Session::from_value(value).ok_or(CompanionError::Unauthorized("Unauthorized"))
}
