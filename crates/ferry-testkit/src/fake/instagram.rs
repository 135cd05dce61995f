//! A fake Instagram (Instagram API with Instagram Login): `/oauth/authorize` (redirects back with
//! `code=...#_`), `/oauth/access_token` (the documented `{"data": [...]}` shape, or the flat one),
//! `/access_token` (`ig_exchange_token` -> 60-day token), `/refresh_access_token`, `/me`,
//! `/me/media` with `after` cursors and `next` only while more remain, `/{media-id}`, and
//! unauthenticated CDN URLs with `Range`. Invalid tokens get Graph's error code 190.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use base64::Engine;
use bytes::Bytes;
use serde_json::{Value, json};

use super::{Faults, download, found, random_hex};
use crate::TestServer;

/// A post: an image, a video, or an album of children.
#[derive(Clone, Debug)]
pub struct Media {
    pub id: String,
    /// `IMAGE`, `VIDEO` or `CAROUSEL_ALBUM`.
    pub kind: &'static str,
    pub content: Bytes,
    pub timestamp: String,
    pub children: Vec<Media>,
}

/// The fake's state.
#[derive(Debug)]
pub struct Instagram {
    pub client_id: String,
    pub client_secret: String,
    pub username: String,
    pub faults: Faults,
    /// Answer the code exchange flat instead of under `data`.
    pub flat_token_answer: AtomicBool,
    pub api_calls: AtomicU64,
    next_id: AtomicU64,
    media: Mutex<Vec<Media>>,
    codes: Mutex<HashMap<String, String>>,
    short: Mutex<HashSet<String>>,
    long: Mutex<HashSet<String>>,
    base: OnceLock<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Instagram {
    fn id(&self) -> String {
        (17_900_000_000_000_000 + self.next_id.fetch_add(1, Ordering::SeqCst)).to_string()
    }

    fn make(&self, kind: &'static str, content: Bytes, n: usize) -> Media {
        Media {
            id: self.id(),
            kind,
            content,
            timestamp: format!("2026-01-{:02}T10:00:00+0000", 1 + n % 28),
            children: Vec::new(),
        }
    }

    /// Adds an image or video post (newest first, like the API).
    pub fn add(&self, kind: &'static str, content: impl Into<Bytes>) -> String {
        let n = lock(&self.media).len();
        let m = self.make(kind, content.into(), n);
        let id = m.id.clone();
        lock(&self.media).insert(0, m);
        id
    }

    /// Adds an album; returns the children's ids.
    pub fn add_album(&self, children: Vec<(&'static str, Bytes)>) -> Vec<String> {
        let n = lock(&self.media).len();
        let mut album = self.make("CAROUSEL_ALBUM", Bytes::new(), n);
        album.children = children
            .into_iter()
            .map(|(k, c)| self.make(k, c, n))
            .collect();
        let ids = album.children.iter().map(|c| c.id.clone()).collect();
        lock(&self.media).insert(0, album);
        ids
    }

    fn find(&self, id: &str) -> Option<Media> {
        let all = lock(&self.media);
        all.iter()
            .flat_map(|m| std::iter::once(m).chain(m.children.iter()))
            .find(|m| m.id == id)
            .cloned()
    }

    fn media_json(&self, m: &Media) -> Value {
        let base = self.base.get().map(String::as_str).unwrap_or("");
        let mut v = json!({"id": m.id, "media_type": m.kind, "timestamp": m.timestamp,
            "permalink": format!("https://www.instagram.com/p/{}/", m.id)});
        if m.kind != "CAROUSEL_ALBUM" {
            v["media_url"] = json!(format!("{base}/cdn/{}.bin?sig={}", m.id, random_hex(4)));
        } else {
            v["media_url"] = json!(format!("{base}/cdn/{}.bin", m.children[0].id));
            let children: Vec<Value> = m.children.iter().map(|c| self.media_json(c)).collect();
            v["children"] = json!({"data": children});
        }
        if m.kind == "VIDEO" {
            v["thumbnail_url"] = json!(format!("{base}/cdn/{}.bin", m.id));
        }
        v
    }

    fn gate(&self, headers: &HeaderMap, q: &HashMap<String, String>) -> Option<Response> {
        self.api_calls.fetch_add(1, Ordering::SeqCst);
        if Faults::take(&self.faults.too_many) {
            return Some(graph_error(
                StatusCode::TOO_MANY_REQUESTS,
                4,
                "Application request limit reached",
            ));
        }
        if Faults::take(&self.faults.server_error) {
            return Some(graph_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                2,
                "An unexpected error has occurred",
            ));
        }
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_owned)
            .or_else(|| q.get("access_token").cloned());
        let live = token.is_some_and(|t| lock(&self.long).contains(&t));
        if !live || self.faults.expire_access.load(Ordering::SeqCst) {
            return Some(graph_error(
                StatusCode::BAD_REQUEST,
                190,
                "Error validating access token: Session has expired",
            ));
        }
        None
    }

    /// Whether `token` is a live long-lived token.
    pub fn long_token_live(&self, token: &str) -> bool {
        lock(&self.long).contains(token)
    }
}

fn graph_error(status: StatusCode, code: i64, message: &str) -> Response {
    (status, Json(json!({"error": {"message": message, "type": "OAuthException", "code": code, "fbtrace_id": "x"}}))).into_response()
}

type I = State<Arc<Instagram>>;
type Q = Query<HashMap<String, String>>;

async fn authorize(State(ig): I, Query(q): Q) -> Response {
    if q.get("client_id") != Some(&ig.client_id)
        || q.get("response_type").map(String::as_str) != Some("code")
    {
        return (StatusCode::BAD_REQUEST, "Invalid platform app").into_response();
    }
    let (Some(redirect_uri), Some(state)) = (q.get("redirect_uri"), q.get("state")) else {
        return (StatusCode::BAD_REQUEST, "invalid_request").into_response();
    };
    if !q
        .get("scope")
        .is_some_and(|s| s.contains("instagram_business_basic"))
    {
        return (StatusCode::BAD_REQUEST, "Invalid scope").into_response();
    }
    let code = random_hex(16);
    lock(&ig.codes).insert(code.clone(), redirect_uri.clone());
    let Ok(mut url) = url::Url::parse(redirect_uri) else {
        return (StatusCode::BAD_REQUEST, "bad redirect_uri").into_response();
    };
    url.query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", state);
    url.set_fragment(Some("_"));
    found(url.as_str())
}

async fn access_token(State(ig): I, Form(f): Form<HashMap<String, String>>) -> Response {
    let bad = |m: &str| {
        (
            StatusCode::BAD_REQUEST,
            Json(json!({"error_type": "OAuthException", "code": 400, "error_message": m})),
        )
            .into_response()
    };
    if f.get("client_id") != Some(&ig.client_id)
        || f.get("client_secret") != Some(&ig.client_secret)
    {
        return bad("Invalid client_secret");
    }
    if f.get("grant_type").map(String::as_str) != Some("authorization_code") {
        return bad("Invalid grant_type");
    }
    let uri = f.get("code").and_then(|c| lock(&ig.codes).remove(c));
    if uri.is_none() || uri.as_ref() != f.get("redirect_uri") {
        return bad("Matching code was not found or was already used");
    }
    let short = format!("IGQshort{}", random_hex(12));
    lock(&ig.short).insert(short.clone());
    let entry = json!({"access_token": short, "user_id": 1234567, "permissions": "instagram_business_basic"});
    if ig.flat_token_answer.load(Ordering::SeqCst) {
        Json(entry).into_response()
    } else {
        Json(json!({"data": [entry]})).into_response()
    }
}

async fn exchange(State(ig): I, Query(q): Q) -> Response {
    if q.get("grant_type").map(String::as_str) != Some("ig_exchange_token")
        || q.get("client_secret") != Some(&ig.client_secret)
    {
        return graph_error(StatusCode::BAD_REQUEST, 100, "Invalid parameter");
    }
    let short = q.get("access_token").cloned().unwrap_or_default();
    if !lock(&ig.short).remove(&short) {
        return graph_error(StatusCode::BAD_REQUEST, 190, "Invalid OAuth access token");
    }
    let long = format!("IGQlong{}", random_hex(16));
    lock(&ig.long).insert(long.clone());
    Json(json!({"access_token": long, "token_type": "bearer", "expires_in": 5_183_944}))
        .into_response()
}

async fn refresh(State(ig): I, Query(q): Q) -> Response {
    if q.get("grant_type").map(String::as_str) != Some("ig_refresh_token") {
        return graph_error(StatusCode::BAD_REQUEST, 100, "Invalid parameter");
    }
    let old = q.get("access_token").cloned().unwrap_or_default();
    if ig.faults.revoke_refresh.load(Ordering::SeqCst) || !lock(&ig.long).contains(&old) {
        return graph_error(StatusCode::BAD_REQUEST, 190, "Invalid OAuth access token");
    }
    let long = format!("IGQlong{}", random_hex(16));
    lock(&ig.long).insert(long.clone());
    Json(json!({"access_token": long, "token_type": "bearer", "expires_in": 5_183_944}))
        .into_response()
}

async fn me(State(ig): I, Query(q): Q, headers: HeaderMap) -> Response {
    if let Some(r) = ig.gate(&headers, &q) {
        return r;
    }
    Json(json!({"user_id": "17841400000000000", "id": "17841400000000000", "username": ig.username, "account_type": "BUSINESS"})).into_response()
}

fn cursor(n: usize) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("offset:{n}"))
}

fn uncursor(c: &str) -> Option<usize> {
    let raw = base64::engine::general_purpose::STANDARD.decode(c).ok()?;
    String::from_utf8(raw)
        .ok()?
        .strip_prefix("offset:")?
        .parse()
        .ok()
}

async fn my_media(State(ig): I, Query(q): Q, headers: HeaderMap) -> Response {
    if let Some(r) = ig.gate(&headers, &q) {
        return r;
    }
    let start = match q.get("after") {
        None => 0,
        Some(c) => match uncursor(c) {
            Some(n) => n,
            None => return graph_error(StatusCode::BAD_REQUEST, 100, "Invalid cursor"),
        },
    };
    let limit = q
        .get("limit")
        .and_then(|l| l.parse().ok())
        .unwrap_or(25usize)
        .clamp(1, 100);
    let all = lock(&ig.media).clone();
    let data: Vec<Value> = all
        .iter()
        .skip(start)
        .take(limit)
        .map(|m| ig.media_json(m))
        .collect();
    let end = (start + limit).min(all.len());
    let mut paging = json!({"cursors": {"before": cursor(start), "after": cursor(end)}});
    if end < all.len() {
        let base = ig.base.get().map(String::as_str).unwrap_or("");
        paging["next"] = json!(format!(
            "{base}/me/media?limit={limit}&after={}",
            cursor(end)
        ));
    }
    Json(json!({"data": data, "paging": paging})).into_response()
}

async fn media(State(ig): I, Path(id): Path<String>, Query(q): Q, headers: HeaderMap) -> Response {
    if let Some(r) = ig.gate(&headers, &q) {
        return r;
    }
    match ig.find(&id) {
        Some(m) => Json(ig.media_json(&m)).into_response(),
        None => graph_error(StatusCode::BAD_REQUEST, 100, "Unsupported get request"),
    }
}

async fn cdn(State(ig): I, Path(file): Path<String>, headers: HeaderMap) -> Response {
    let id = file.strip_suffix(".bin").unwrap_or(&file);
    match ig.find(id) {
        Some(m) => {
            let kind = if m.kind == "VIDEO" {
                "video/mp4"
            } else {
                "image/jpeg"
            };
            download(m.content, kind, &headers, &ig.faults)
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// A running fake Instagram.
#[derive(Debug)]
pub struct FakeInstagram {
    pub server: TestServer,
    pub state: Arc<Instagram>,
}

impl FakeInstagram {
    /// Starts a fake Instagram knowing the app `client_id` / `client_secret`.
    pub async fn start(client_id: &str, client_secret: &str) -> Self {
        let state = Arc::new(Instagram {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            username: "fake_creator".into(),
            faults: Faults::default(),
            flat_token_answer: AtomicBool::new(false),
            api_calls: AtomicU64::new(0),
            next_id: AtomicU64::new(1),
            media: Mutex::default(),
            codes: Mutex::default(),
            short: Mutex::default(),
            long: Mutex::default(),
            base: OnceLock::new(),
        });
        let router = Router::new()
            .route("/oauth/authorize", get(authorize))
            .route("/oauth/access_token", post(access_token))
            .route("/access_token", get(exchange))
            .route("/refresh_access_token", get(refresh))
            .route("/me", get(me))
            .route("/me/media", get(my_media))
            .route("/cdn/{file}", get(cdn))
            .route("/{id}", get(media))
            .with_state(state.clone());
        let server = TestServer::start(router).await;
        let _ = state.base.set(server.url(""));
        Self { server, state }
    }

    /// `FERRY_INSTAGRAM_AUTH_URL`.
    pub fn auth_url(&self) -> String {
        self.server.url("/oauth/authorize")
    }
    /// `FERRY_INSTAGRAM_TOKEN_URL`.
    pub fn token_url(&self) -> String {
        self.server.url("/oauth/access_token")
    }
    /// `FERRY_INSTAGRAM_GRAPH_URL`.
    pub fn graph_url(&self) -> String {
        self.server.url("")
    }
}
