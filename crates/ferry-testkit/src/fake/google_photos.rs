//! A fake Google Photos Picker API (`photospicker.googleapis.com`: `POST /v1/sessions`,
//! `GET|DELETE /v1/sessions/{id}`, `GET /v1/mediaItems?sessionId=` with paging) and its media
//! host (`{baseUrl}=d` / `=dv` with the OAuth header and `Range`), sharing the access tokens of a
//! [`super::google::FakeGoogle`]. The fake person picks at once: a new session holds every
//! item added (or those named with [`Photos::select`]) and reports `mediaItemsSet` on its
//! first poll. [`Photos::expire_urls`] makes every media URL handed out so far answer 403, as
//! Google's do an hour after listing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use bytes::Bytes;
use serde_json::{Value, json};

use super::google::Google;
use super::{Faults, download, random_hex};
use crate::TestServer;

/// A photo or video in the fake library.
#[derive(Clone, Debug)]
pub struct MediaItem {
    pub id: String,
    pub filename: String,
    pub mime: String,
    pub content: Bytes,
}

impl MediaItem {
    fn is_video(&self) -> bool {
        self.mime.starts_with("video/")
    }
}

#[derive(Debug)]
struct Session {
    picked: Vec<String>,
    polled: bool,
}

/// The fake's state; tests add media and flip faults through it.
#[derive(Debug)]
pub struct Photos {
    google: Arc<Google>,
    pub faults: Faults,
    /// Media downloads asked (any status).
    pub media_requests: AtomicU64,
    items: Mutex<Vec<MediaItem>>,
    selection: Mutex<Option<Vec<String>>>,
    sessions: Mutex<HashMap<String, Session>>,
    /// Bumped by [`Photos::expire_urls`]: media URLs of older generations answer 403.
    generation: AtomicU64,
    base: OnceLock<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Photos {
    /// Adds a photo (or a video, by its `video/*` type); returns its media item id.
    pub fn add(&self, filename: &str, mime: &str, content: impl Into<Bytes>) -> String {
        let id = format!("AF1Qip{}", random_hex(12));
        lock(&self.items).push(MediaItem {
            id: id.clone(),
            filename: filename.into(),
            mime: mime.into(),
            content: content.into(),
        });
        id
    }

    /// The items the next sessions pick (default: all).
    pub fn select(&self, ids: &[String]) {
        *lock(&self.selection) = Some(ids.to_vec());
    }

    /// Every media URL handed out so far expires.
    pub fn expire_urls(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// The media URL of item `id` as a session's `mediaItems` lists it now (without `=d`).
    pub fn base_url(&self, id: &str) -> String {
        let base = self.base.get().map(String::as_str).unwrap_or("");
        let generation = self.generation.load(Ordering::SeqCst);
        format!("{base}/media/{generation}/{id}")
    }

    fn item(&self, id: &str) -> Option<MediaItem> {
        lock(&self.items).iter().find(|i| i.id == id).cloned()
    }

    fn item_json(&self, item: &MediaItem) -> Value {
        let mut meta = json!({"width": 640, "height": 480});
        if item.is_video() {
            meta["videoMetadata"] = json!({"fps": 30.0, "processingStatus": "READY"});
        } else {
            meta["photoMetadata"] = json!({"cameraMake": "Fake", "cameraModel": "One"});
        }
        json!({
            "id": item.id,
            "createTime": "2026-01-02T03:04:05Z",
            "type": if item.is_video() { "VIDEO" } else { "PHOTO" },
            "mediaFile": {
                "baseUrl": self.base_url(&item.id),
                "mimeType": item.mime,
                "filename": item.filename,
                "mediaFileMetadata": meta,
            },
        })
    }

    /// The Picker API's answer to a request without a live token (or the API faults).
    fn gate(&self, headers: &HeaderMap) -> Option<Response> {
        if Faults::take(&self.faults.too_many) {
            return Some(error(429, "Quota exceeded", "RESOURCE_EXHAUSTED"));
        }
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let live = token.is_some_and(|t| self.google.access_token_live(t));
        if !live || self.google.faults.expire_access.load(Ordering::SeqCst) {
            return Some(error(
                401,
                "Request had invalid authentication credentials.",
                "UNAUTHENTICATED",
            ));
        }
        None
    }

    fn session_json(&self, id: &str, set: bool) -> Value {
        let base = self.base.get().map(String::as_str).unwrap_or("");
        json!({
            "id": id,
            "pickerUri": format!("{base}/picker/{id}"),
            "pollingConfig": {"pollInterval": "1s", "timeoutIn": "1800s"},
            "expireTime": "2099-01-01T00:00:00Z",
            "mediaItemsSet": set,
        })
    }
}

/// Google's error shape for this API (`status` is what Uppy's picker checks on a 401).
fn error(status: u16, message: &str, kind: &str) -> Response {
    let body = json!({"error": {"code": status, "message": message, "status": kind}});
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        Json(body),
    )
        .into_response()
}

type P = State<Arc<Photos>>;

async fn create(State(p): P, headers: HeaderMap) -> Response {
    if let Some(r) = p.gate(&headers) {
        return r;
    }
    let picked = lock(&p.selection)
        .clone()
        .unwrap_or_else(|| lock(&p.items).iter().map(|i| i.id.clone()).collect());
    let id = format!("s{}", random_hex(8));
    lock(&p.sessions).insert(
        id.clone(),
        Session {
            picked,
            polled: false,
        },
    );
    Json(p.session_json(&id, false)).into_response()
}

async fn session(State(p): P, Path(id): Path<String>, headers: HeaderMap) -> Response {
    if let Some(r) = p.gate(&headers) {
        return r;
    }
    let mut sessions = lock(&p.sessions);
    let Some(s) = sessions.get_mut(&id) else {
        return error(404, "Session not found", "NOT_FOUND");
    };
    s.polled = true;
    Json(p.session_json(&id, true)).into_response()
}

async fn delete_session(State(p): P, Path(id): Path<String>, headers: HeaderMap) -> Response {
    if let Some(r) = p.gate(&headers) {
        return r;
    }
    lock(&p.sessions).remove(&id);
    Json(json!({})).into_response()
}

async fn media_items(
    State(p): P,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = p.gate(&headers) {
        return r;
    }
    let session = q.get("sessionId").map(String::as_str).unwrap_or("");
    let picked = match lock(&p.sessions).get(session) {
        None => return error(404, "Session not found", "NOT_FOUND"),
        Some(s) if !s.polled => {
            return error(400, "The user has not picked yet", "FAILED_PRECONDITION");
        }
        Some(s) => s.picked.clone(),
    };
    let start = match q.get("pageToken").filter(|t| !t.is_empty()) {
        None => 0,
        Some(t) => match t.strip_prefix('o').and_then(|n| n.parse::<usize>().ok()) {
            Some(n) => n,
            None => return error(400, "Invalid page token", "INVALID_ARGUMENT"),
        },
    };
    let size = q
        .get("pageSize")
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(25)
        .clamp(1, 100);
    let page: Vec<Value> = picked
        .iter()
        .skip(start)
        .take(size)
        .filter_map(|id| p.item(id))
        .map(|i| p.item_json(&i))
        .collect();
    let mut answer = json!({"mediaItems": page});
    if start + size < picked.len() {
        answer["nextPageToken"] = json!(format!("o{}", start + size));
    }
    Json(answer).into_response()
}

/// `GET /media/{generation}/{id}=d|=dv`: the bytes, with the OAuth header, while not expired.
async fn media(
    State(p): P,
    Path((generation, rest)): Path<(u64, String)>,
    headers: HeaderMap,
) -> Response {
    p.media_requests.fetch_add(1, Ordering::SeqCst);
    if let Some(r) = p.gate(&headers) {
        return r;
    }
    if generation != p.generation.load(Ordering::SeqCst) {
        return (StatusCode::FORBIDDEN, "expired").into_response();
    }
    let Some((id, suffix)) = rest.rsplit_once('=') else {
        return (StatusCode::NOT_FOUND, "no such size").into_response();
    };
    match p.item(id) {
        Some(i) if (suffix == "dv") == i.is_video() && matches!(suffix, "d" | "dv") => {
            download(i.content, &i.mime, &headers, &p.faults)
        }
        _ => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

async fn picker_page(Path(id): Path<String>) -> Html<String> {
    Html(format!(
        "<!doctype html><title>Google Photos</title><p>Session {id}: picked.</p>"
    ))
}

/// A running fake Photos Picker API.
#[derive(Debug)]
pub struct FakePhotos {
    pub server: TestServer,
    pub state: Arc<Photos>,
}

impl FakePhotos {
    /// Starts the fake, accepting the access tokens `google` issues.
    pub async fn start(google: Arc<Google>) -> Self {
        let state = Arc::new(Photos {
            google,
            faults: Faults::default(),
            media_requests: AtomicU64::new(0),
            items: Mutex::default(),
            selection: Mutex::default(),
            sessions: Mutex::default(),
            generation: AtomicU64::new(0),
            base: OnceLock::new(),
        });
        let router = Router::new()
            .route("/v1/sessions", post(create))
            .route("/v1/sessions/{id}", get(session).delete(delete_session))
            .route("/v1/mediaItems", get(media_items))
            .route("/media/{generation}/{rest}", get(media))
            .route("/picker/{id}", get(picker_page))
            .with_state(state.clone());
        let server = TestServer::start(router).await;
        let _ = state.base.set(server.url(""));
        Self { server, state }
    }

    /// `FERRY_GOOGLE_PHOTOS_PICKER_URL` (the Picker API base).
    pub fn api_url(&self) -> String {
        self.server.url("")
    }

    /// `FERRY_GOOGLE_PHOTOS_CONTENT_URL` (the media host's origin).
    pub fn content_url(&self) -> String {
        self.server.url("")
    }
}
