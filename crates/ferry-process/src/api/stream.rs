//! `GET /assemblies/{id}/stream`: the Assembly's update stream as server-sent events, the URL
//! the status names in `update_stream_url` and `websocket_url` (Uppy opens
//! `{websocket_url}?assembly={id}`; the query is not needed). Once it has opened, Uppy stops
//! polling, so the stream must carry everything: it first sends what the client has not seen
//! (all of it for a new client; after `Last-Event-ID` for a reconnecting one, also after a restart
//! of the server), then each change as it is saved, and ends after the Assembly's last event.
//!
//! Answers: 404 `ASSEMBLY_NOT_FOUND`; 429 `RATE_LIMIT_REACHED` when the Assembly already has as
//! many streams as allowed; 204 when the client has seen the end (an `EventSource` stops
//! reconnecting on it).

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, Stream, StreamExt};
use tokio::time::Instant;

use crate::error::ApiError;
use crate::id::Id;
use crate::live::Slot;
use crate::live::events::{self, Cursor, Out, Update};
use crate::service::Service;

/// How long a client waits before reconnecting after the stream ended or broke.
const RETRY: Duration = Duration::from_secs(2);

/// `GET /assemblies/{id}/stream`.
pub async fn stream(
    State(svc): State<Service>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let id = Id::parse(&id).ok_or_else(ApiError::not_found)?;
    let a = svc
        .load(&id)
        .await
        .map_err(|e| ApiError::internal("ASSEMBLY_STATUS_FETCHING_ERROR", e))?
        .ok_or_else(ApiError::not_found)?;
    let a = crate::upkeep::sweep::live(a)?;
    let cursor = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(Cursor::parse)
        .unwrap_or_default();
    // An ended Assembly with nothing left for this client: an EventSource stops on a 204.
    let mut probe = cursor.clone();
    if !a.state.is_busy() && events::next(&a, &mut probe, &svc.config().urls).is_empty() {
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    let limits = svc.live().limits();
    let slot = svc.live().subscribe(&id).ok_or_else(|| {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "RATE_LIMIT_REACHED",
            "This Assembly has as many update streams open as allowed.",
        )
    })?;
    let watch = Watch {
        svc,
        id,
        slot,
        cursor,
        first: true,
        ended: false,
        deadline: Instant::now() + limits.lifetime,
        refresh: limits.refresh,
    };
    let body = updates(watch);
    let mut resp = Sse::new(body)
        .keep_alive(KeepAlive::new().interval(limits.heartbeat))
        .into_response();
    // Proxies that buffer responses would hold events back.
    resp.headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(resp)
}

/// One open stream.
struct Watch {
    svc: Service,
    id: Id,
    slot: Slot,
    cursor: Cursor,
    first: bool,
    ended: bool,
    deadline: Instant,
    refresh: Duration,
}

/// The events of `w`, batch by batch, until the Assembly's end or the stream's lifetime.
fn updates(w: Watch) -> impl Stream<Item = Result<Event, Infallible>> {
    stream::unfold(w, |mut w| async move {
        let batch = w.next_batch().await?;
        Some((batch, w))
    })
    .flat_map(|batch| stream::iter(batch.into_iter().map(Ok)))
}

impl Watch {
    /// The next non-empty batch of events; `None` when the stream should end.
    async fn next_batch(&mut self) -> Option<Vec<Event>> {
        if self.ended {
            return None;
        }
        loop {
            // Mark the current version seen before reading, so a save racing the read wakes us.
            self.slot.changes.borrow_and_update();
            let a = match self.svc.load(&self.id).await {
                Ok(Some(a)) => a,
                // Gone (or unreadable): end; a reconnect gets the precise answer.
                _ => return None,
            };
            let updates = events::next(&a, &mut self.cursor, &self.svc.config().urls);
            self.ended = self.cursor.saw_end() || !a.state.is_busy();
            if !updates.is_empty() {
                return Some(updates.into_iter().map(|u| self.event(u)).collect());
            }
            if self.ended {
                return None;
            }
            tokio::select! {
                changed = self.slot.changes.changed() => changed.ok()?,
                () = tokio::time::sleep(self.refresh) => {}
                () = tokio::time::sleep_until(self.deadline) => return None,
            }
        }
    }

    fn event(&mut self, u: Update) -> Event {
        let mut e = match u.out {
            Out::Message(name) => Event::default().data(name),
            Out::Event(name, data) => Event::default().event(name).data(data.to_string()),
        };
        e = e.id(u.cursor);
        if std::mem::take(&mut self.first) {
            e = e.retry(RETRY);
        }
        e
    }
}
