//! A fake Unsplash API: `GET /search/photos?query=&page=&per_page=` (`{total, total_pages,
//! results}`, `per_page` capped at 30 as the API does), `GET /photos/{id}`, the
//! download-tracking endpoint `GET /photos/{id}/download` (counted per photo), and
//! unauthenticated image URLs (`/images/{id}.jpg`, with `Range`) standing in for
//! `images.unsplash.com`. API calls need `Authorization: Client-ID {key}`; a wrong key gets the
//! API's 401 `{"errors": [...]}`, and the [`Faults::too_many`] switch answers 429.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use bytes::Bytes;
use serde_json::{Value, json};

use super::{Faults, download};
use crate::TestServer;

/// A photo in the fake's library.
#[derive(Clone, Debug)]
pub struct Photo {
    pub id: String,
    pub description: Option<String>,
    pub author: String,
    pub content: Bytes,
}

/// The fake's state.
#[derive(Debug)]
pub struct Unsplash {
    /// The Access Key sent as `Client-ID`.
    pub key: String,
    pub faults: Faults,
    /// API calls made (search, photo, tracking).
    pub api_calls: AtomicU64,
    /// Image requests that carried `Range`.
    pub ranged: AtomicU64,
    /// The last `query` searched for.
    pub last_query: Mutex<Option<String>>,
    photos: Mutex<Vec<Photo>>,
    tracked: Mutex<HashMap<String, u64>>,
    base: OnceLock<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Unsplash {
    /// Adds a photo found by any search; returns its id.
    pub fn add(
        &self,
        description: Option<&str>,
        author: &str,
        content: impl Into<Bytes>,
    ) -> String {
        let mut photos = lock(&self.photos);
        let id = format!("Ph{:06}xY", photos.len() + 1);
        photos.push(Photo {
            id: id.clone(),
            description: description.map(str::to_owned),
            author: author.to_owned(),
            content: content.into(),
        });
        id
    }

    /// How many times the download-tracking endpoint was hit for `id`.
    pub fn tracked(&self, id: &str) -> u64 {
        lock(&self.tracked).get(id).copied().unwrap_or(0)
    }

    fn find(&self, id: &str) -> Option<Photo> {
        lock(&self.photos).iter().find(|p| p.id == id).cloned()
    }

    fn photo_json(&self, p: &Photo) -> Value {
        let base = self.base.get().map(String::as_str).unwrap_or("");
        let img = format!("{base}/images/{}.jpg", p.id);
        let handle = p.author.to_lowercase().replace(' ', "");
        json!({
            "id": p.id, "created_at": "2026-01-02T10:00:00Z", "width": 4000, "height": 3000,
            "description": p.description, "alt_description": null,
            "urls": {"raw": format!("{img}?ixid=raw"), "full": format!("{img}?q=80"),
                "regular": format!("{img}?w=1080"), "small": format!("{img}?w=400"),
                "thumb": format!("{img}?w=200")},
            "links": {"self": format!("{base}/photos/{}", p.id),
                "html": format!("https://unsplash.com/photos/{}", p.id),
                "download": format!("https://unsplash.com/photos/{}/download", p.id),
                "download_location": format!("{base}/photos/{}/download?ixid=track", p.id)},
            "user": {"name": p.author, "username": handle,
                "links": {"html": format!("https://unsplash.com/@{handle}")}},
        })
    }

    fn gate(&self, headers: &HeaderMap) -> Option<Response> {
        self.api_calls.fetch_add(1, Ordering::SeqCst);
        if let Some(wait) = self.faults.take_too_many() {
            return Some(
                (
                    StatusCode::TOO_MANY_REQUESTS,
                    [(header::RETRY_AFTER, wait)],
                    "Rate Limit Exceeded",
                )
                    .into_response(),
            );
        }
        let key = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Client-ID "));
        if key != Some(self.key.as_str()) {
            return Some(errors(
                StatusCode::UNAUTHORIZED,
                "OAuth error: The access token is invalid",
            ));
        }
        None
    }
}

fn errors(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"errors": [message]}))).into_response()
}

type U = State<Arc<Unsplash>>;
type Q = Query<HashMap<String, String>>;

async fn search(State(u): U, headers: HeaderMap, Query(q): Q) -> Response {
    if let Some(r) = u.gate(&headers) {
        return r;
    }
    let Some(query) = q.get("query").filter(|s| !s.is_empty()) else {
        return errors(StatusCode::BAD_REQUEST, "query is missing");
    };
    *lock(&u.last_query) = Some(query.clone());
    let page: usize = q
        .get("page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(1)
        .max(1);
    let per_page: usize = q
        .get("per_page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(10)
        .clamp(1, 30);
    let all = lock(&u.photos).clone();
    let results: Vec<Value> = all
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .map(|p| u.photo_json(p))
        .collect();
    let total_pages = all.len().div_ceil(per_page);
    Json(json!({"total": all.len(), "total_pages": total_pages, "results": results}))
        .into_response()
}

async fn photo(State(u): U, headers: HeaderMap, Path(id): Path<String>) -> Response {
    if let Some(r) = u.gate(&headers) {
        return r;
    }
    match u.find(&id) {
        Some(p) => Json(u.photo_json(&p)).into_response(),
        None => errors(StatusCode::NOT_FOUND, "Couldn't find Photo"),
    }
}

async fn track(State(u): U, headers: HeaderMap, Path(id): Path<String>) -> Response {
    if let Some(r) = u.gate(&headers) {
        return r;
    }
    let Some(p) = u.find(&id) else {
        return errors(StatusCode::NOT_FOUND, "Couldn't find Photo");
    };
    *lock(&u.tracked).entry(id).or_default() += 1;
    let base = u.base.get().map(String::as_str).unwrap_or("");
    Json(json!({"url": format!("{base}/images/{}.jpg?ixid=raw", p.id)})).into_response()
}

async fn image(State(u): U, headers: HeaderMap, Path(file): Path<String>) -> Response {
    let id = file.strip_suffix(".jpg").unwrap_or(&file);
    if headers.contains_key(header::RANGE) {
        u.ranged.fetch_add(1, Ordering::SeqCst);
    }
    match u.find(id) {
        Some(p) => download(p.content, "image/jpeg", &headers, &u.faults),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// A running fake Unsplash.
#[derive(Debug)]
pub struct FakeUnsplash {
    pub server: TestServer,
    pub state: Arc<Unsplash>,
}

impl FakeUnsplash {
    /// Starts a fake Unsplash accepting the Access Key `key`.
    pub async fn start(key: &str) -> Self {
        let state = Arc::new(Unsplash {
            key: key.into(),
            faults: Faults::default(),
            api_calls: AtomicU64::new(0),
            ranged: AtomicU64::new(0),
            last_query: Mutex::default(),
            photos: Mutex::default(),
            tracked: Mutex::default(),
            base: OnceLock::new(),
        });
        let router = Router::new()
            .route("/search/photos", get(search))
            .route("/photos/{id}", get(photo))
            .route("/photos/{id}/download", get(track))
            .route("/images/{file}", get(image))
            .with_state(state.clone());
        let server = TestServer::start(router).await;
        let _ = state.base.set(server.url(""));
        Self { server, state }
    }

    /// `FERRY_UNSPLASH_API_URL`.
    pub fn api_url(&self) -> String {
        self.server.url("")
    }
}
