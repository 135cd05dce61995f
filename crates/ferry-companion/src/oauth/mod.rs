//! The OAuth login of the cloud providers, without any server-side session: what a login must
//! remember travels sealed (see [`crate::token`]) in the OAuth `state` (provider, nonce, the
//! page's origin, the auth-socket id, expiry) and in a short-lived `HttpOnly` cookie (the same
//! nonce, the PKCE verifier). Any instance sharing `--secret` can therefore finish a login
//! another began; a forged state does not open, a state without its browser's cookie is
//! refused, and a state is accepted once per instance (and never again anywhere once the
//! cookie is cleared).
//!
//! # Layout
//!
//! - [`sealed`]: the sealed state, cookie and thumbnail grant; the auth-token check.
//! - [`routes`]: `/{p}/connect`, `/{p}/redirect` (= `/{p}/callback`).
//! - [`send_token`]: `/{p}/send-token`, the hand-off of the token to the page.
//! - [`auth_socket`]: the auth-callback websocket `/api2/auth-callback/token/{id}`, its caps.
//! - [`handoff`]: where outcomes wait for their socket (the [`handoff::AuthHandoff`] seam).
//! - [`binding`]: the cookie that binds a socket's id to the browser that opened it, and why.
//! - [`pages`]: the small HTML pages of the popup.

pub mod auth_socket;
pub mod binding;
pub mod handoff;
pub mod pages;
pub mod routes;
pub mod sealed;
pub mod send_token;

use axum::http::HeaderMap;
use axum::http::header::HOST;

use crate::error::CompanionError;
use crate::state::AppState;

/// This server's public base URL (no trailing slash), the base of OAuth redirect URIs and
/// thumbnail links: `--public-url` when set. Without it, `http://{Host}` only when the `Host`
/// is one of this server's own origins (its listen address, `localhost` beside loopback):
/// anything else is refused, so a forged `Host` never chooses where a provider sends its code
/// or where thumbnail links point. Behind a proxy, set `--public-url`.
pub fn public_base(state: &AppState, headers: &HeaderMap) -> Result<String, CompanionError> {
    let config = state.config();
    if let Some(url) = &config.providers.public_url {
        return Ok(url.trim_end_matches('/').to_owned());
    }
    let host = headers
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    let own = config.own_origins.iter().any(|o| {
        o.trim_end_matches('/')
            .strip_prefix("http://")
            .is_some_and(|authority| authority.eq_ignore_ascii_case(host))
    });
    if own && !host.is_empty() {
        Ok(format!("http://{host}"))
    } else {
        Err(CompanionError::BadRequest(
            "Unknown host: set --public-url (FERRY_PUBLIC_URL) to this server's public URL for \
             cloud-provider logins"
                .into(),
        ))
    }
}

/// Whether a browser page at `origin` may receive tokens: an entry of `--cors-origins`, or one
/// of this server's own origins. Never because of `*` (or `true`): a token goes only to an
/// origin the operator named, whatever CORS lets read the other routes.
pub fn handoff_origin_allowed(state: &AppState, origin: &str) -> bool {
    let origin = origin.trim_end_matches('/');
    if origin.is_empty() || origin == "null" {
        return false;
    }
    let config = state.config();
    config
        .cors_origins
        .iter()
        .map(|o| o.trim().trim_end_matches('/'))
        .filter(|o| *o != "*" && *o != "true")
        .any(|o| o == origin)
        || config
            .own_origins
            .iter()
            .any(|o| o.trim_end_matches('/') == origin)
}
