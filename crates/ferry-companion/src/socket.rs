//! The progress websocket `/api/{token}`: sends the job's latest frame at once and every change
//! after it; takes `pause`, `resume` and `cancel` from the client. The registry finds the job,
//! wherever the transfer runs (with a shared registry the socket may be on another instance).
//! Messages are size-capped and each socket runs in its own task, so a flood on one touches no
//! other.

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Router};
use serde::Deserialize;

use ferry_auth::Principal;

use crate::error::CompanionError;
use crate::jobs::{Ask, Job};
use crate::state::AppState;

/// Largest client message accepted (they are tiny JSON objects).
const MAX_MESSAGE: usize = 4096;

#[derive(Deserialize)]
struct ClientFrame {
    action: String,
}

#[utoipa::path(
    get,
    path = "/api/{token}",
    operation_id = "transfer_progress_socket",
    tag = "companion",
    description = "WebSocket (`Upgrade: websocket`): a transfer's progress, success and error \
        frames, and `pause`/`resume`/`cancel` from the client, as Companion's socket. The \
        transfer token names it; with an auth secret the bearer token (as `?access_token=`, since \
        browsers cannot set headers on a websocket) must be its owner's, else 404.",
    params(("token" = String, Path, description = "The token from `/url/get` or `/{provider}/get/{id}`.")),
    responses(
        (status = 101, description = "Switching to the websocket."),
        (status = 400, description = "Unknown token, or not a websocket request.", body = crate::error::ErrorMessage),
        (status = 401, description = "Missing, invalid or expired bearer token.", body = crate::error::ErrorMessage),
        (status = 404, description = "Another subject's transfer.", body = crate::error::ErrorMessage),
    ),
    security(("bearerAuth" = [])),
)]
pub(crate) async fn upgrade(
    State(state): State<AppState>,
    Path(token): Path<String>,
    principal: Option<Extension<Principal>>,
    ws: WebSocketUpgrade,
) -> Response {
    let job = match state.registry().attach(&token).await {
        Ok(Some(job)) => job,
        Ok(None) => return CompanionError::BadRequest("unknown token".to_owned()).into_response(),
        Err(error) => return error.into_response(),
    };
    // Under `--auth-secret` a transfer is its subject's alone: to anyone else it does not exist.
    if let Some(Extension(principal)) = principal
        && !principal.owns(job.owner.as_deref())
    {
        return CompanionError::NotFound("unknown token".to_owned()).into_response();
    }
    ws.max_message_size(MAX_MESSAGE)
        .max_frame_size(MAX_MESSAGE)
        .on_upgrade(move |socket| run(socket, job))
}

async fn run(mut socket: WebSocket, job: std::sync::Arc<Job>) {
    let mut frames = job.frame.subscribe();
    job.ask(Ask::Connected);
    let current = frames.borrow_and_update().clone();
    if let Some(text) = current {
        if socket
            .send(Message::Text(text.as_ref().into()))
            .await
            .is_err()
        {
            return;
        }
    }
    loop {
        tokio::select! {
            changed = frames.changed() => {
                if changed.is_err() {
                    break; // job dropped
                }
                let text = frames.borrow_and_update().clone();
                if let Some(text) = text {
                    if socket.send(Message::Text(text.as_ref().into())).await.is_err() {
                        break;
                    }
                }
            }
            msg = socket.recv() => {
                let Some(Ok(msg)) = msg else { break };
                match msg {
                    Message::Text(text) => handle(&job, text.as_str()),
                    Message::Close(_) => break,
                    _ => {}
                }
            }
        }
    }
}

fn handle(job: &Job, text: &str) {
    let Ok(frame) = serde_json::from_str::<ClientFrame>(text) else {
        return;
    };
    let ask = match frame.action.as_str() {
        "pause" => Ask::Pause,
        "resume" => Ask::Resume,
        "cancel" => Ask::Cancel,
        _ => return,
    };
    job.ask(ask);
}

/// `GET /api/{token}` (websocket).
pub fn router() -> Router<AppState> {
    Router::new().route("/api/{token}", get(upgrade))
}
