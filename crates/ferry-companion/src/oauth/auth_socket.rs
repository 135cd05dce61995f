//! The auth-callback websocket `/api2/auth-callback/token/{id}` (Uppy's newer clients, Ferry's
//! widget): the page opens it with its own random id (`authCallbackToken`) right after opening
//! the login popup, and receives one message, `{"token": "..."}` or `{"error": true}`, when the
//! popup's login finishes. Mounted only when a provider is enabled.
//!
//! Anyone can open this socket without credentials, so what it holds is bounded:
//! - it checks the browser `Origin` against the concrete allowed origins (never `*`);
//! - [`SocketLimits`] caps sockets per client address (the address the tus endpoint's
//!   `--max-uploads-per-client` counts, behind `--trusted-proxies` too; IPv6 by /64, since one
//!   host commonly holds a whole /64) and in all, answering 429 with a message beyond either;
//! - the task reads the socket while it waits: a peer that closes or breaks ends the wait at
//!   once and frees the task, the descriptor, the cap's place and the hub's slot;
//! - the wait is bounded by the login's own lifetime (`login_timeout`), and shutdown
//!   ([`crate::AppState::close`]) ends every wait with a close frame ("going away").
//!
//! The upgrade answer also sets the binding cookie ([`super::binding`]) that ties this browser to
//! the id: `/send-token` hands the token over only to a browser that holds it.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::extract::{ConnectInfo, Path, State};
use axum::http::header::{ORIGIN, SET_COOKIE};
use axum::http::{Extensions, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::handoff::{self, AuthHandoff, Outcome};
use super::{binding, handoff_origin_allowed, sealed};
use crate::error::CompanionError;
use crate::state::AppState;

/// Caps on open auth sockets, per client and in all.
#[derive(Debug)]
pub struct SocketLimits {
    per_client: usize,
    total: usize,
    trusted_proxies: Vec<ipnet::IpNet>,
    open: Mutex<Counts>,
    /// Told each time a place is given back (shutdown waits for the last).
    gone: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct Counts {
    by_client: HashMap<IpAddr, usize>,
    total: usize,
}

/// One open socket's place; given back when dropped (whatever ends the socket's task).
#[derive(Debug)]
pub struct SocketPlace {
    limits: Arc<SocketLimits>,
    client: IpAddr,
}

impl SocketLimits {
    pub fn new(per_client: usize, total: usize, trusted_proxies: Vec<ipnet::IpNet>) -> Self {
        Self {
            per_client,
            total,
            trusted_proxies,
            open: Mutex::default(),
            gone: tokio::sync::Notify::new(),
        }
    }

    /// Resolves once no socket is open (at shutdown, after [`crate::AppState::close`]).
    pub async fn all_closed(&self) {
        loop {
            let gone = self.gone.notified();
            tokio::pin!(gone);
            // Registered before the count is read, so a place given back in between wakes it.
            gone.as_mut().enable();
            if self.open() == 0 {
                return;
            }
            gone.await;
        }
    }

    fn counts(&self) -> MutexGuard<'_, Counts> {
        // Plain counters: a holder's panic cannot leave them inconsistent.
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sockets open now.
    pub fn open(&self) -> usize {
        self.counts().total
    }

    /// A place for the client of a request, or 429 with the reason. Requests served without
    /// connection info (in-process tests) all count as one client.
    pub fn take(
        self: &Arc<Self>,
        extensions: &Extensions,
        headers: &HeaderMap,
    ) -> Result<SocketPlace, CompanionError> {
        let peer = extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map_or(IpAddr::from([0, 0, 0, 0]), |c| c.0.ip());
        let client = client_key(ferry_auth::client::client_ip(
            peer,
            headers,
            &self.trusted_proxies,
        ));
        let mut counts = self.counts();
        if counts.total >= self.total {
            return Err(CompanionError::TooMany(
                "Too many sign-ins are waiting on this server; try again in a minute".into(),
            ));
        }
        let mine = counts.by_client.entry(client).or_default();
        if *mine >= self.per_client {
            return Err(CompanionError::TooMany(format!(
                "Too many sign-in sockets from this address (at most {}); close one and try again",
                self.per_client
            )));
        }
        *mine += 1;
        counts.total += 1;
        Ok(SocketPlace {
            limits: self.clone(),
            client,
        })
    }
}

/// IPv4 addresses count alone; IPv6 ones by their /64.
fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let bits = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(bits.into())
            }
        },
    }
}

impl Drop for SocketPlace {
    fn drop(&mut self) {
        {
            let mut counts = self.limits.counts();
            counts.total = counts.total.saturating_sub(1);
            if let Some(mine) = counts.by_client.get_mut(&self.client) {
                *mine -= 1;
                if *mine == 0 {
                    counts.by_client.remove(&self.client);
                }
            }
        }
        self.limits.gone.notify_waiters();
    }
}

#[utoipa::path(
    get,
    path = "/api2/auth-callback/token/{id}",
    operation_id = "auth_callback_socket",
    tag = "providers",
    description = "WebSocket (`Upgrade: websocket`): delivers a login's token to the page that \
        started it when no window can receive it. Only when a provider is enabled. The answer \
        sets an `HttpOnly` cookie binding this browser to the id: the popup's `/send-token` \
        hands the token over only to the browser that holds it.",
    params(("id" = String, Path, description = "The login's hand-off id.")),
    responses(
        (status = 101, description = "Switching to the websocket.", headers(("Set-Cookie" = String))),
        (status = 400, description = "Invalid id, or not a websocket request.", body = crate::error::ErrorMessage),
        (status = 403, description = "The browser origin is not allowed.", body = crate::error::ErrorMessage),
        (status = 429, description = "Too many sockets from this address, or in all.", body = crate::error::ErrorMessage),
    ),
)]
pub(crate) async fn upgrade(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    extensions: Extensions,
    ws: WebSocketUpgrade,
) -> Response {
    match prepare(&state, &id, &headers, &extensions) {
        Ok((origin, place, cookie)) => {
            let hub = state.handoff().clone();
            let wait = state.config().providers.login_timeout;
            let closing = state.closing().clone();
            let mut resp = ws.max_message_size(1024).on_upgrade(move |socket| {
                run(socket, hub, Waiting { id, origin, wait }, place, closing)
            });
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                resp.headers_mut().append(SET_COOKIE, v);
            }
            resp
        }
        Err(e) => e.into_response(),
    }
}

/// The checks before the upgrade: the id, the origin, a place under the caps; and the
/// binding cookie.
fn prepare(
    state: &AppState,
    id: &str,
    headers: &HeaderMap,
    extensions: &Extensions,
) -> Result<(String, SocketPlace, String), CompanionError> {
    if !handoff::valid_id(id) {
        return Err(CompanionError::BadRequest(
            "Invalid auth callback id".into(),
        ));
    }
    let origin = headers
        .get(ORIGIN)
        .and_then(|o| o.to_str().ok())
        .map(|o| o.trim_end_matches('/').to_owned())
        .filter(|o| handoff_origin_allowed(state, o))
        .ok_or(CompanionError::OriginNotAllowed)?;
    let place = state.auth_sockets().take(extensions, headers)?;
    let secret = sealed::secret(state)?;
    let cookie = binding::set_cookie(state, headers, secret, id);
    Ok((origin, place, cookie))
}

/// What a socket waits for.
struct Waiting {
    id: String,
    origin: String,
    wait: Duration,
}

async fn run(
    mut socket: WebSocket,
    hub: Arc<dyn AuthHandoff>,
    w: Waiting,
    place: SocketPlace,
    closing: CancellationToken,
) {
    let _place = place;
    let message = {
        let outcome = hub.wait(&w.id, w.wait);
        tokio::pin!(outcome);
        loop {
            tokio::select! {
                outcome = &mut outcome => break outcome,
                () = closing.cancelled() => {
                    let frame = CloseFrame { code: close_code::AWAY, reason: "server shutting down".into() };
                    let _ = tokio::time::timeout(SEND_WITHIN, socket.send(Message::Close(Some(frame)))).await;
                    return;
                }
                frame = socket.recv() => match frame {
                    // Pings are answered by the socket itself; the page has nothing to say.
                    Some(Ok(Message::Text(_) | Message::Binary(_) | Message::Ping(_) | Message::Pong(_))) => {}
                    // Closed or broken: nobody is left to hand anything to.
                    Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                },
            }
        }
    };
    let message = match message {
        Some(outcome) if outcome.origin != w.origin => {
            // Kept for the page of the sealed origin; this socket learns nothing.
            tracing::warn!("auth socket from another origin than the login's; refused");
            json!({ "error": true })
        }
        Some(Outcome {
            token: Some(token), ..
        }) => {
            hub.delivered(&w.id).await;
            json!({ "token": token })
        }
        Some(_) => {
            hub.delivered(&w.id).await;
            json!({ "error": true })
        }
        None => json!({ "error": true }),
    };
    // Bounded: a peer that reads nothing must not hold the task past the login's lifetime.
    let _ = tokio::time::timeout(SEND_WITHIN, async {
        socket
            .send(Message::Text(message.to_string().into()))
            .await?;
        socket.send(Message::Close(None)).await
    })
    .await;
}

/// How long the last message and the close frame may take to leave.
const SEND_WITHIN: Duration = Duration::from_secs(10);

/// `/api2/auth-callback/token/{id}`.
pub fn router() -> Router<AppState> {
    Router::new().route("/api2/auth-callback/token/{id}", get(upgrade))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_clients_count_by_their_64() {
        let ip = |s: &str| s.parse::<IpAddr>().expect("ip");
        assert_eq!(client_key(ip("2001:db8:1:2:aa::1")), ip("2001:db8:1:2::"));
        assert_eq!(
            client_key(ip("2001:db8:1:2:ffff::9")),
            client_key(ip("2001:db8:1:2::7"))
        );
        assert_ne!(client_key(ip("2001:db8:1:3::1")), ip("2001:db8:1:2::"));
        assert_eq!(client_key(ip("::ffff:192.0.2.1")), ip("192.0.2.1"));
        assert_eq!(client_key(ip("192.0.2.1")), ip("192.0.2.1"));
    }

    #[test]
    fn places_are_capped_per_client_and_in_all_and_given_back() {
        let limits = Arc::new(SocketLimits::new(2, 3, Vec::new()));
        let from = |ip: &str| {
            let mut ext = Extensions::new();
            ext.insert(ConnectInfo(SocketAddr::new(ip.parse().expect("ip"), 1)));
            ext
        };
        let h = HeaderMap::new();
        let a1 = limits.take(&from("192.0.2.1"), &h).expect("first");
        let _a2 = limits.take(&from("192.0.2.1"), &h).expect("second");
        let refused = limits.take(&from("192.0.2.1"), &h).expect_err("third");
        assert_eq!(refused.status_code(), 429);
        assert!(refused.to_string().contains("at most 2"), "{refused}");
        let _b1 = limits.take(&from("192.0.2.2"), &h).expect("another client");
        let full = limits.take(&from("192.0.2.3"), &h).expect_err("total");
        assert!(full.to_string().contains("Too many sign-ins"), "{full}");
        drop(a1);
        assert_eq!(limits.open(), 2);
        limits
            .take(&from("192.0.2.1"), &h)
            .expect("a place came back");
    }
}
