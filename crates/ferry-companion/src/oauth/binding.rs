//! Binds a login's hand-off to the browser that started it (the uppy#6480 class of token theft).
//!
//! # The attack
//!
//! `/{p}/connect?authCallbackToken=<id>` accepts any id, and the token goes to whoever waits on
//! the socket with that id. An attacker opens the socket with an id of their own (from a
//! non-browser client, with a forged `Origin` equal to an allowed one), then gets a victim to
//! open a `/connect` link carrying that id. The victim consents to what looks like an ordinary
//! sign-in, the popup's `/send-token` publishes the victim's token under the attacker's id, and
//! the attacker's socket receives it. The `Origin` check cannot stop this: only browsers are
//! bound by it. The login cookie does not either: it proves the popup's browser started the
//! OAuth dance, not that the same browser is the one waiting on the socket.
//!
//! # The binding
//!
//! The socket's upgrade answer sets a cookie named after the id whose value is an HMAC of the
//! id under the server secret (`HttpOnly`; `SameSite=Lax`, or `SameSite=None; Secure` with
//! the `__Host-` prefix when the public URL is https). The popup is a window of the same
//! browser, so its `/send-token` request carries the cookie; `/send-token` publishes the token
//! only when the request carries the cookie for the login's id. A victim's browser never
//! opened the attacker's socket, so it holds no cookie for the attacker's id and the token is
//! never published; the attacker's own cookie cannot be replayed into the victim's browser
//! (it is `HttpOnly`, and `__Host-` stops sibling subdomains from planting one over https).
//!
//! The socket usually connects long before the popup finishes (a person reads the consent
//! page), but the order is not guaranteed: without the cookie, `/send-token` answers a page
//! that also posts the token to its opener at the sealed origin (the released clients' safe
//! hand-off: a browser drops a message whose target origin is not the opener's) and reloads
//! itself a few times, about half a second apart, before failing with a message that says what
//! to do.
//!
//! Why this design, against the alternatives:
//! - It works with Uppy's unmodified client, which sends nothing but the id; a per-login
//!   secret presented on the socket (or registering the id with a credential before
//!   `/connect`) would need a client change, and a link could not carry it only if the client
//!   kept it out of the URL.
//! - Checking `Referer`/`Sec-Fetch-Site` on `/connect` would only prove the link was followed
//!   from an allowed page (user content on that site defeats it) and fails under
//!   `Referrer-Policy: no-referrer`; matching client addresses breaks behind NAT changes and
//!   dual-stack, and links victims behind one NAT.
//! - Stateless: any instance sharing `--secret` checks the cookie, so fleets need nothing more.
//!
//! The cost: the page and this server must share cookies. Same-site deployments (the page on
//! `app.example.com`, Ferry on `files.example.com` or on the page's own origin) work in every
//! browser with `SameSite=Lax`. When the page is cross-site, the cookie is a third-party
//! cookie set by the page's socket (`SameSite=None; Secure`, so https): browsers that block or
//! partition third-party cookies (Safari; Firefox's Total Cookie Protection) never show it to
//! the popup, and there only the `postMessage` hand-off (Ferry's widget, Uppy 5.x) completes a
//! login; Uppy 6's socket-only login then fails with the message above instead of leaking.

use axum::http::HeaderMap;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::{public_base, routes::read_cookie};
use crate::state::AppState;

/// Domain separation: this MAC means "this browser opened auth socket <id>" and nothing else.
const LABEL: &[u8] = b"ferry auth-callback binding\0";

fn mac(secret: &[u8], id: &str) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).unwrap_or_else(|_| unreachable!());
    mac.update(LABEL);
    mac.update(id.as_bytes());
    mac
}

/// Whether cookies of this server are `Secure` (its public URL is https).
fn secure(state: &AppState, headers: &HeaderMap) -> bool {
    public_base(state, headers).is_ok_and(|b| b.starts_with("https://"))
}

fn name(secure: bool, id: &str) -> String {
    if secure {
        format!("__Host-ferry_cb_{id}")
    } else {
        format!("ferry_cb_{id}")
    }
}

fn attributes(secure: bool) -> &'static str {
    if secure {
        "Path=/; HttpOnly; Secure; SameSite=None"
    } else {
        "Path=/; HttpOnly; SameSite=Lax"
    }
}

/// The `Set-Cookie` value binding this browser to socket `id`, for the login's lifetime.
pub fn set_cookie(state: &AppState, headers: &HeaderMap, secret: &[u8], id: &str) -> String {
    let secure = secure(state, headers);
    let value = URL_SAFE_NO_PAD.encode(mac(secret, id).finalize().into_bytes());
    let ttl = state.config().providers.login_timeout.as_secs();
    format!(
        "{}={value}; Max-Age={ttl}; {}",
        name(secure, id),
        attributes(secure)
    )
}

/// The `Set-Cookie` value that removes the binding of `id` (its login is over).
pub fn clear_cookie(state: &AppState, headers: &HeaderMap, id: &str) -> String {
    let secure = secure(state, headers);
    format!("{}=; Max-Age=0; {}", name(secure, id), attributes(secure))
}

/// Whether the request comes from the browser that opened socket `id`.
pub fn holds(state: &AppState, headers: &HeaderMap, secret: &[u8], id: &str) -> bool {
    let secure = secure(state, headers);
    read_cookie(headers, &name(secure, id))
        .and_then(|v| URL_SAFE_NO_PAD.decode(v).ok())
        .is_some_and(|raw| mac(secret, id).verify_slice(&raw).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mac_names_one_id_under_one_secret() {
        let tag = |secret: &[u8], id: &str| mac(secret, id).finalize().into_bytes().to_vec();
        assert_eq!(tag(b"s", "a"), tag(b"s", "a"));
        assert_ne!(tag(b"s", "a"), tag(b"s", "b"));
        assert_ne!(tag(b"s", "a"), tag(b"t", "a"));
    }
}
