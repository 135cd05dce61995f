//! The websocket hand-off of a login (`/api2/auth-callback/token/{id}`, Uppy's newer clients):
//! the page opens the socket with its own random id (`authCallbackToken`) and receives one
//! message, `{"token": "..."}` or `{"error": true}`, when the popup's login finishes.
//!
//! Companion checks nothing on this socket; Ferry checks the socket's `Origin` (which a page
//! cannot forge) against the allowed origins when it opens and against the origin sealed in
//! the login's state when the message is delivered, so a page that copied someone's
//! `authCallbackToken` gets nothing. The message waits in the hub for a while, so a socket that
//! connects after `/send-token` still gets it; it is delivered once.
//! The hub is in-process: several instances need the login's popup and socket to reach the same
//! instance (or, later, a Redis hub behind the same calls).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::http::header::ORIGIN;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use tokio::sync::watch;

use crate::error::CompanionError;
use crate::state::AppState;

/// Most logins waiting at once (sockets or undelivered messages).
const MAX_SLOTS: usize = 10_000;

/// The outcome of a login, for the page at `origin`.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub origin: String,
    /// The Uppy auth token, or `None` when the login failed.
    pub token: Option<String>,
}

type Slot = watch::Sender<Option<Outcome>>;

/// Logins waiting for their socket, or sockets waiting for their login.
#[derive(Debug, Default)]
pub struct Handoff {
    slots: Mutex<HashMap<String, Arc<Slot>>>,
}

impl Handoff {
    fn slots(&self) -> MutexGuard<'_, HashMap<String, Arc<Slot>>> {
        // A map of channels: a holder's panic cannot leave it inconsistent.
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn slot(&self, id: &str) -> Option<Arc<Slot>> {
        let mut slots = self.slots();
        if let Some(s) = slots.get(id) {
            return Some(s.clone());
        }
        if slots.len() >= MAX_SLOTS {
            return None;
        }
        let s = Arc::new(watch::channel(None).0);
        slots.insert(id.to_owned(), s.clone());
        Some(s)
    }

    /// Posts the outcome of login `id`; it waits `keep` for a socket.
    pub fn publish(self: &Arc<Self>, id: &str, outcome: Outcome, keep: Duration) {
        let Some(slot) = self.slot(id) else {
            tracing::warn!("auth hand-off table full; outcome dropped");
            return;
        };
        slot.send_replace(Some(outcome));
        let hub = self.clone();
        let id = id.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(keep).await;
            hub.remove_if(&id, &slot);
        });
    }

    fn remove_if(&self, id: &str, slot: &Arc<Slot>) {
        let mut slots = self.slots();
        if slots.get(id).is_some_and(|s| Arc::ptr_eq(s, slot)) {
            slots.remove(id);
        }
    }

    /// Number of waiting logins.
    pub fn len(&self) -> usize {
        self.slots().len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `authCallbackToken`s are UUIDs; accept URL-safe ids up to 128 characters.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

async fn upgrade(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    if !valid_id(&id) {
        return CompanionError::BadRequest("Invalid auth callback id".into()).into_response();
    }
    let origin = headers
        .get(ORIGIN)
        .and_then(|o| o.to_str().ok())
        .map(|o| o.trim_end_matches('/').to_owned());
    let Some(origin) = origin.filter(|o| super::origin_allowed(&state, o)) else {
        return CompanionError::OriginNotAllowed.into_response();
    };
    let hub = state.handoff().clone();
    let Some(slot) = hub.slot(&id) else {
        return CompanionError::Provider {
            status: 503,
            message: "Too many logins in progress".into(),
        }
        .into_response();
    };
    let wait = state.config().providers.login_timeout;
    ws.max_message_size(1024)
        .on_upgrade(move |socket| run(socket, hub, id, slot, origin, wait))
}

async fn run(
    mut socket: WebSocket,
    hub: Arc<Handoff>,
    id: String,
    slot: Arc<Slot>,
    origin: String,
    wait: Duration,
) {
    let mut rx = slot.subscribe();
    let outcome = tokio::time::timeout(wait, async {
        rx.wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|o| o.clone())
    })
    .await
    .ok()
    .flatten();
    let message = match outcome {
        Some(Outcome {
            origin: sealed,
            token: Some(token),
        }) if sealed == origin => {
            // Delivered once: nobody else gets it.
            hub.remove_if(&id, &slot);
            json!({ "token": token })
        }
        Some(Outcome { origin: sealed, .. }) if sealed != origin => {
            tracing::warn!("auth socket from another origin than the login's; refused");
            json!({ "error": true })
        }
        Some(_) => {
            hub.remove_if(&id, &slot);
            json!({ "error": true })
        }
        None => {
            // Nothing came: forget the socket's slot unless a login filled it meanwhile.
            if slot.borrow().is_none() {
                hub.remove_if(&id, &slot);
            }
            json!({ "error": true })
        }
    };
    let _ = socket.send(Message::Text(message.to_string().into())).await;
    let _ = socket.send(Message::Close(None)).await;
}

/// `/api2/auth-callback/token/{id}`.
pub fn router() -> Router<AppState> {
    Router::new().route("/api2/auth-callback/token/{id}", get(upgrade))
}
