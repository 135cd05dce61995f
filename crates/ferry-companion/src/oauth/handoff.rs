//! The websocket hand-off of a login (`/api2/auth-callback/token/{id}`, Uppy's newer clients):
//! the page opens the socket with its own random id (`authCallbackToken`) and receives one
//! message, `{"token": "..."}` or `{"error": true}`, when the popup's login finishes.
//!
//! Companion checks nothing on this socket; Ferry checks the socket's `Origin` (which a page
//! cannot forge) against the allowed origins when it opens and against the origin sealed in
//! the login's state when the message is delivered, so a page that copied someone's
//! `authCallbackToken` gets nothing. The outcome waits a while, so a socket that connects after
//! `/send-token` still gets it; a token is delivered once.
//!
//! Where outcomes wait is the [`AuthHandoff`] seam: [`LocalHandoff`] keeps them in this process
//! (the popup's `/send-token` and the page's socket must reach the same instance); a shared
//! implementation (Redis pub/sub with a kept last message) lets them meet on any instance.

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
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::watch;

use crate::error::CompanionError;
use crate::state::AppState;

/// The outcome of a login, for the page at `origin`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct Outcome {
    pub origin: String,
    /// The Uppy auth token, or `None` when the login failed.
    pub token: Option<String>,
}

/// Where login outcomes wait for their auth socket.
#[async_trait::async_trait]
pub trait AuthHandoff: Send + Sync + std::fmt::Debug {
    /// Posts the outcome of login `id`, kept `keep` for a socket that connects late.
    async fn publish(&self, id: &str, outcome: Outcome, keep: Duration);
    /// The outcome of login `id`: the kept one at once, else the next one within `wait`.
    async fn wait(&self, id: &str, wait: Duration) -> Option<Outcome>;
    /// Forgets login `id` (its token was delivered, or its failure reported).
    async fn delivered(&self, id: &str);
}

/// Most logins waiting at once in one process (sockets or undelivered outcomes).
const MAX_SLOTS: usize = 10_000;

type Slot = Arc<watch::Sender<Option<Outcome>>>;

/// The in-process [`AuthHandoff`].
#[derive(Debug, Default)]
pub struct LocalHandoff {
    slots: Arc<Mutex<HashMap<String, Slot>>>,
}

fn lock(slots: &Mutex<HashMap<String, Slot>>) -> MutexGuard<'_, HashMap<String, Slot>> {
    // A map of channels: a holder's panic cannot leave it inconsistent.
    slots.lock().unwrap_or_else(|p| p.into_inner())
}

impl LocalHandoff {
    fn slot(&self, id: &str) -> Option<Slot> {
        let mut slots = lock(&self.slots);
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

    fn remove_if(slots: &Mutex<HashMap<String, Slot>>, id: &str, slot: &Slot) {
        let mut slots = lock(slots);
        if slots.get(id).is_some_and(|s| Arc::ptr_eq(s, slot)) {
            slots.remove(id);
        }
    }

    /// Number of waiting logins.
    pub fn len(&self) -> usize {
        lock(&self.slots).len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[async_trait::async_trait]
impl AuthHandoff for LocalHandoff {
    async fn publish(&self, id: &str, outcome: Outcome, keep: Duration) {
        let Some(slot) = self.slot(id) else {
            tracing::warn!("auth hand-off table full; outcome dropped");
            return;
        };
        slot.send_replace(Some(outcome));
        let slots = self.slots.clone();
        let id = id.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(keep).await;
            Self::remove_if(&slots, &id, &slot);
        });
    }

    async fn wait(&self, id: &str, wait: Duration) -> Option<Outcome> {
        let slot = self.slot(id)?;
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
        if outcome.is_none() && slot.borrow().is_none() {
            // Nothing came: forget the socket's slot unless a login filled it meanwhile.
            Self::remove_if(&self.slots, id, &slot);
        }
        outcome
    }

    async fn delivered(&self, id: &str) {
        lock(&self.slots).remove(id);
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

#[utoipa::path(
    get,
    path = "/api2/auth-callback/token/{id}",
    operation_id = "auth_callback_socket",
    tag = "providers",
    description = "WebSocket (`Upgrade: websocket`): delivers a login's token to the page that \
        started it when no window can receive it.",
    params(("id" = String, Path, description = "The login's hand-off id.")),
    responses(
        (status = 101, description = "Switching to the websocket."),
        (status = 400, description = "Invalid id, or not a websocket request.", body = crate::error::ErrorMessage),
    ),
)]
pub(crate) async fn upgrade(
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
    let wait = state.config().providers.login_timeout;
    ws.max_message_size(1024)
        .on_upgrade(move |socket| run(socket, hub, id, origin, wait))
}

async fn run(
    mut socket: WebSocket,
    hub: Arc<dyn AuthHandoff>,
    id: String,
    origin: String,
    wait: Duration,
) {
    let message = match hub.wait(&id, wait).await {
        Some(outcome) if outcome.origin != origin => {
            // Kept for the page of the sealed origin; this socket learns nothing.
            tracing::warn!("auth socket from another origin than the login's; refused");
            json!({ "error": true })
        }
        Some(Outcome {
            token: Some(token), ..
        }) => {
            hub.delivered(&id).await;
            json!({ "token": token })
        }
        Some(_) => {
            hub.delivered(&id).await;
            json!({ "error": true })
        }
        None => json!({ "error": true }),
    };
    let _ = socket.send(Message::Text(message.to_string().into())).await;
    let _ = socket.send(Message::Close(None)).await;
}

/// `/api2/auth-callback/token/{id}`.
pub fn router() -> Router<AppState> {
    Router::new().route("/api2/auth-callback/token/{id}", get(upgrade))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(token: &str) -> Outcome {
        Outcome {
            origin: "https://app.example".into(),
            token: Some(token.into()),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_late_waiter_gets_the_kept_outcome_until_it_expires() {
        let hub = LocalHandoff::default();
        hub.publish("a", outcome("t1"), Duration::from_secs(60))
            .await;
        assert_eq!(
            hub.wait("a", Duration::from_secs(1)).await,
            Some(outcome("t1"))
        );
        hub.publish("b", outcome("t2"), Duration::from_secs(60))
            .await;
        tokio::time::sleep(Duration::from_secs(61)).await;
        assert_eq!(hub.wait("b", Duration::from_secs(1)).await, None);
        assert!(hub.is_empty(), "expired and timed-out slots are forgotten");
    }

    #[tokio::test(start_paused = true)]
    async fn an_early_waiter_gets_the_outcome_when_it_comes_and_delivery_is_once() {
        let hub = Arc::new(LocalHandoff::default());
        let waiter = {
            let hub = hub.clone();
            tokio::spawn(async move { hub.wait("c", Duration::from_secs(600)).await })
        };
        tokio::time::sleep(Duration::from_secs(5)).await;
        hub.publish("c", outcome("t3"), Duration::from_secs(60))
            .await;
        assert_eq!(waiter.await.expect("join"), Some(outcome("t3")));
        hub.delivered("c").await;
        assert_eq!(hub.wait("c", Duration::from_secs(1)).await, None);
    }
}
