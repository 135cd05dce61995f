//! A fake Box (API 2.0 and Box's OAuth 2.0): `/api/oauth2/authorize` (approve at once or a
//! consent page), `/oauth2/token` (authorization code; refresh grants that always rotate: each
//! refresh token works once, a reused one is `invalid_grant`), `/oauth2/revoke`,
//! `/2.0/users/me`, `/2.0/folders/{id}/items` with `fields`, offset paging (capped at 300,000
//! like Box) and marker paging (`usemarker=true`), `/2.0/files/{id}`, `/2.0/files/{id}/content`
//! (a `302` to a pre-authenticated download URL on this server, which honours `Range`), and
//! `/2.0/files/{id}/thumbnail.{jpg,png}` (`200` image, `202` + `Location` + `Retry-After` while
//! "generating", `302` to a placeholder for types without thumbnails). Refused access tokens get
//! Box's bare `401` with `WWW-Authenticate`; rate limits Box's `429` with `Retry-After`.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::{Faults, download, found, random_hex};
use crate::TestServer;

/// Box's largest offset for offset paging.
const MAX_OFFSET: usize = 300_000;

/// A file or folder in the fake Box.
#[derive(Clone, Debug)]
pub struct BoxItem {
    /// Box ids are decimal digits.
    pub id: String,
    /// `file` or `folder`.
    pub kind: &'static str,
    pub name: String,
    pub parent: String,
    pub content: Bytes,
}

/// The fake's state; tests add items and flip faults through it.
#[derive(Debug)]
pub struct BoxState {
    pub client_id: String,
    pub client_secret: String,
    /// `users/me` `login`.
    pub login: String,
    pub faults: Faults,
    /// Serve a consent page (Grant / Deny) instead of approving at once.
    pub consent_page: AtomicBool,
    /// Thumbnails answer `202` (still generating) with a placeholder `Location`.
    pub thumbnail_pending: AtomicBool,
    /// Seconds in `Retry-After` of a `429`.
    pub retry_after: AtomicU64,
    /// API calls answered (any status).
    pub api_calls: AtomicU64,
    /// Refresh grants honoured.
    pub refreshes: AtomicU64,
    next_id: AtomicU64,
    items: Mutex<Vec<BoxItem>>,
    /// Authorization code -> its redirect URI.
    codes: Mutex<HashMap<String, String>>,
    /// Consent page id -> (code, state).
    pending: Mutex<HashMap<String, (String, String)>>,
    /// Live access token -> the refresh token issued with it.
    access: Mutex<HashMap<String, String>>,
    refresh: Mutex<HashSet<String>>,
    /// Refresh tokens already spent (a second use is refused).
    spent: Mutex<HashSet<String>>,
    /// Issued download links -> file id.
    links: Mutex<HashMap<String, String>>,
    /// Tokens revoked through `/oauth2/revoke`.
    pub revoked: Mutex<Vec<String>>,
    base: OnceLock<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl BoxState {
    fn base(&self) -> &str {
        self.base.get().map(String::as_str).unwrap_or("")
    }

    fn add(&self, parent: &str, kind: &'static str, name: &str, content: Bytes) -> String {
        let id = (1_000_000_000 + self.next_id.fetch_add(1, Ordering::SeqCst)).to_string();
        lock(&self.items).push(BoxItem {
            id: id.clone(),
            kind,
            name: name.into(),
            parent: parent.into(),
            content,
        });
        id
    }

    /// Adds a file under `parent` (`0` is the root).
    pub fn add_file(&self, parent: &str, name: &str, content: impl Into<Bytes>) -> String {
        self.add(parent, "file", name, content.into())
    }

    /// Adds a folder under `parent`.
    pub fn add_folder(&self, parent: &str, name: &str) -> String {
        self.add(parent, "folder", name, Bytes::new())
    }

    /// Whether `token` is a live access token.
    pub fn access_token_live(&self, token: &str) -> bool {
        lock(&self.access).contains_key(token)
    }

    /// Expires one access token (as after its 60 minutes); its refresh token stays usable.
    pub fn expire(&self, token: &str) {
        lock(&self.access).remove(token);
    }

    /// Whether `token` is a live (unspent) refresh token.
    pub fn refresh_token_live(&self, token: &str) -> bool {
        lock(&self.refresh).contains(token)
    }

    fn find(&self, id: &str) -> Option<BoxItem> {
        lock(&self.items).iter().find(|i| i.id == id).cloned()
    }

    fn item_json(&self, i: &BoxItem, fields: Option<&str>) -> Value {
        let size = i.content.len();
        let full = json!({
            "type": i.kind, "id": i.id, "sequence_id": "0", "etag": "0", "name": i.name,
            "size": size, "modified_at": "2026-01-02T03:04:05-08:00",
            "permissions": {"can_download": true, "can_preview": true},
            "parent": {"type": "folder", "id": i.parent},
        });
        let Value::Object(all) = full else {
            return Value::Null;
        };
        // Without `fields`, folder listings hold Box's mini representation (no size, no date);
        // with it, the named fields plus `type`, `id` and `etag`.
        let keep: Vec<&str> = match fields {
            Some(f) => f
                .split(',')
                .map(str::trim)
                .chain(["type", "id", "etag"])
                .collect(),
            None => vec!["type", "id", "sequence_id", "etag", "name"],
        };
        let out: Map<String, Value> = all
            .into_iter()
            .filter(|(k, _)| keep.contains(&k.as_str()))
            .collect();
        Value::Object(out)
    }

    /// The API gate (faults, then the bearer token): the refusal, if any.
    fn gate(&self, headers: &HeaderMap) -> Option<Response> {
        self.api_calls.fetch_add(1, Ordering::SeqCst);
        if Faults::take(&self.faults.too_many) {
            let wait = self.retry_after.load(Ordering::SeqCst).to_string();
            let body = json!({"type": "error", "status": 429, "code": "rate_limit_exceeded",
                "message": "Request rate limit exceeded, please try again later",
                "request_id": random_hex(6)});
            return Some(
                (
                    StatusCode::TOO_MANY_REQUESTS,
                    [(header::RETRY_AFTER, wait)],
                    Json(body),
                )
                    .into_response(),
            );
        }
        if Faults::take(&self.faults.server_error) {
            return Some(error(500, "internal_server_error", "Internal Server Error"));
        }
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let live = token.is_some_and(|t| self.access_token_live(t));
        if !live || self.faults.expire_access.load(Ordering::SeqCst) {
            // Box answers a refused token with an empty body and this header.
            return Some(
                (
                    StatusCode::UNAUTHORIZED,
                    [(
                        header::WWW_AUTHENTICATE,
                        "Bearer realm=\"Service\", error=\"invalid_token\", \
                         error_description=\"The access token provided is invalid.\"",
                    )],
                )
                    .into_response(),
            );
        }
        None
    }
}

fn error(status: u16, code: &str, message: &str) -> Response {
    let body = json!({"type": "error", "status": status, "code": code, "message": message,
        "help_url": "http://developers.box.com/docs/#errors", "request_id": random_hex(6)});
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        Json(body),
    )
        .into_response()
}

fn not_found() -> Response {
    error(404, "not_found", "Not Found")
}

fn oauth_error(error: &str, description: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"error": error, "error_description": description})),
    )
        .into_response()
}

type B = State<Arc<BoxState>>;
type Q = Query<HashMap<String, String>>;

async fn authorize(State(b): B, Query(q): Q) -> Response {
    if q.get("client_id") != Some(&b.client_id) {
        return (StatusCode::BAD_REQUEST, "invalid_client").into_response();
    }
    let (Some(redirect_uri), Some(state)) = (q.get("redirect_uri"), q.get("state")) else {
        return (StatusCode::BAD_REQUEST, "invalid_request").into_response();
    };
    if q.get("response_type").map(String::as_str) != Some("code") {
        return (StatusCode::BAD_REQUEST, "unsupported_response_type").into_response();
    }
    let code = random_hex(16);
    lock(&b.codes).insert(code.clone(), redirect_uri.clone());
    if b.consent_page.load(Ordering::SeqCst) {
        let pending = random_hex(8);
        lock(&b.pending).insert(pending.clone(), (code, state.clone()));
        let page = format!(
            "<!doctype html><title>Box | Grant Access</title><h1>Fake Box</h1>\
             <p>Ferry would like to read your Box files ({}).</p>\
             <form method=post action=/api/oauth2/consent>\
             <input type=hidden name=pending value={pending}>\
             <button name=decision value=allow id=allow>Grant access to Box</button>\
             <button name=decision value=deny id=deny>Deny</button></form>",
            b.login
        );
        return Html(page).into_response();
    }
    redirect_back(redirect_uri, &[("code", &code), ("state", state)])
}

fn redirect_back(redirect_uri: &str, params: &[(&str, &str)]) -> Response {
    let Ok(mut url) = url::Url::parse(redirect_uri) else {
        return (StatusCode::BAD_REQUEST, "bad redirect_uri").into_response();
    };
    url.query_pairs_mut().extend_pairs(params);
    found(url.as_str())
}

async fn consent(State(b): B, Form(f): Form<HashMap<String, String>>) -> Response {
    let pending = f.get("pending").and_then(|p| lock(&b.pending).remove(p));
    let Some((code, state)) = pending else {
        return (StatusCode::BAD_REQUEST, "unknown consent").into_response();
    };
    let Some(redirect_uri) = lock(&b.codes).get(&code).cloned() else {
        return (StatusCode::BAD_REQUEST, "unknown code").into_response();
    };
    if f.get("decision").map(String::as_str) == Some("allow") {
        redirect_back(&redirect_uri, &[("code", &code), ("state", &state)])
    } else {
        lock(&b.codes).remove(&code);
        redirect_back(
            &redirect_uri,
            &[("error", "access_denied"), ("state", &state)],
        )
    }
}

/// A new access + refresh pair.
fn issue(b: &BoxState) -> Response {
    let access = random_hex(16);
    let refresh = random_hex(32);
    lock(&b.access).insert(access.clone(), refresh.clone());
    lock(&b.refresh).insert(refresh.clone());
    Json(
        json!({"access_token": access, "expires_in": 3600, "restricted_to": [],
        "refresh_token": refresh, "token_type": "bearer"}),
    )
    .into_response()
}

async fn token(State(b): B, Form(f): Form<HashMap<String, String>>) -> Response {
    if f.get("client_id") != Some(&b.client_id) || f.get("client_secret") != Some(&b.client_secret)
    {
        return oauth_error("invalid_client", "The client credentials are invalid");
    }
    match f.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let code = f.get("code").and_then(|c| lock(&b.codes).remove(c));
            let Some(redirect_uri) = code else {
                return oauth_error(
                    "invalid_grant",
                    "Auth code doesn't exist or is invalid for the client",
                );
            };
            if f.get("redirect_uri").is_some_and(|r| *r != redirect_uri) {
                return oauth_error("invalid_grant", "The redirect URI is invalid");
            }
            issue(&b)
        }
        Some("refresh_token") => {
            let old = f.get("refresh_token").cloned().unwrap_or_default();
            // One use per refresh token: it is spent whether or not the answer arrives.
            let live = lock(&b.refresh).remove(&old);
            if !live || b.faults.revoke_refresh.load(Ordering::SeqCst) {
                return oauth_error("invalid_grant", "Refresh token has expired");
            }
            lock(&b.spent).insert(old);
            b.refreshes.fetch_add(1, Ordering::SeqCst);
            issue(&b)
        }
        _ => oauth_error("unsupported_grant_type", "Grant type is not supported"),
    }
}

async fn revoke(State(b): B, Form(f): Form<HashMap<String, String>>) -> Response {
    if f.get("client_id") != Some(&b.client_id) || f.get("client_secret") != Some(&b.client_secret)
    {
        return oauth_error("invalid_client", "The client credentials are invalid");
    }
    let Some(token) = f.get("token").cloned() else {
        return oauth_error("invalid_request", "Missing token");
    };
    // Revoking either token of a pair ends the session.
    let pair = lock(&b.access).remove(&token);
    if let Some(refresh) = pair {
        lock(&b.refresh).remove(&refresh);
    } else if lock(&b.refresh).remove(&token) {
        lock(&b.access).retain(|_, r| *r != token);
    }
    lock(&b.revoked).push(token);
    StatusCode::OK.into_response()
}

async fn me(State(b): B, headers: HeaderMap) -> Response {
    if let Some(r) = b.gate(&headers) {
        return r;
    }
    Json(
        json!({"type": "user", "id": "11446498", "name": "Fake Box User", "login": b.login,
        "status": "active"}),
    )
    .into_response()
}

/// A numeric query parameter; the error is Box's message for a malformed one.
fn number(q: &HashMap<String, String>, key: &str) -> Result<Option<usize>, String> {
    match q.get(key) {
        None => Ok(None),
        Some(v) => v
            .parse()
            .map(Some)
            .map_err(|_| format!("Invalid value '{v}' for '{key}'")),
    }
}

async fn folder_items(
    State(b): B,
    Path(id): Path<String>,
    Query(q): Q,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = b.gate(&headers) {
        return r;
    }
    if id != "0" && b.find(&id).is_none_or(|f| f.kind != "folder") {
        return not_found();
    }
    let limit = match number(&q, "limit") {
        Ok(l) => l.unwrap_or(100).clamp(1, 1000),
        Err(m) => return error(400, "bad_request", &m),
    };
    let mut children: Vec<BoxItem> = lock(&b.items)
        .iter()
        .filter(|i| i.parent == id)
        .cloned()
        .collect();
    children.sort_by(|a, c| {
        (a.kind != "folder", a.name.to_lowercase())
            .cmp(&(c.kind != "folder", c.name.to_lowercase()))
    });
    let fields = q.get("fields").map(String::as_str);
    let marker_paging = q.get("usemarker").map(String::as_str) == Some("true");
    let start = if marker_paging {
        match q.get("marker").filter(|m| !m.is_empty()) {
            None => 0,
            Some(m) => match m.strip_prefix("mk").and_then(|n| n.parse().ok()) {
                Some(n) => n,
                None => return error(400, "bad_request", "Invalid marker"),
            },
        }
    } else {
        match number(&q, "offset") {
            Ok(o) => o.unwrap_or(0),
            Err(m) => return error(400, "bad_request", &m),
        }
    };
    if !marker_paging && start > MAX_OFFSET {
        return error(
            400,
            "bad_request",
            &format!(
                "Invalid value '{start}'. The offset must not exceed the maximum offset of {MAX_OFFSET}"
            ),
        );
    }
    let entries: Vec<Value> = children
        .iter()
        .skip(start)
        .take(limit)
        .map(|i| b.item_json(i, fields))
        .collect();
    let answer = if marker_paging {
        let next = (start + limit < children.len()).then(|| format!("mk{}", start + limit));
        json!({"entries": entries, "limit": limit, "next_marker": next})
    } else {
        json!({"total_count": children.len(), "entries": entries, "offset": start, "limit": limit,
            "order": [{"by": "type", "direction": "ASC"}, {"by": "name", "direction": "ASC"}]})
    };
    Json(answer).into_response()
}

/// `files/{id}` (metadata), `files/{id}/content`, `files/{id}/thumbnail.{jpg,png}`.
async fn file(State(b): B, Path(id): Path<String>, Query(q): Q, headers: HeaderMap) -> Response {
    if let Some(r) = b.gate(&headers) {
        return r;
    }
    match b.find(&id).filter(|f| f.kind == "file") {
        Some(f) => Json(b.item_json(&f, q.get("fields").map(String::as_str))).into_response(),
        None => not_found(),
    }
}

async fn file_part(
    State(b): B,
    Path((id, part)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = b.gate(&headers) {
        return r;
    }
    let Some(f) = b.find(&id).filter(|f| f.kind == "file") else {
        return not_found();
    };
    match part.as_str() {
        "content" => {
            let link = random_hex(12);
            lock(&b.links).insert(link.clone(), f.id);
            found(&format!("{}/dl/{link}/download", b.base()))
        }
        "thumbnail.jpg" | "thumbnail.png" => {
            let placeholder = format!("{}/placeholder.png", b.base());
            if !is_image(&f.name) {
                return found(&placeholder);
            }
            if b.thumbnail_pending.load(Ordering::SeqCst) {
                return (
                    StatusCode::ACCEPTED,
                    [
                        (header::LOCATION, placeholder),
                        (header::RETRY_AFTER, "2".to_owned()),
                    ],
                )
                    .into_response();
            }
            let kind = if part.ends_with("png") {
                "image/png"
            } else {
                "image/jpeg"
            };
            (
                [(header::CONTENT_TYPE, kind)],
                format!("thumbnail of {}", f.id),
            )
                .into_response()
        }
        _ => not_found(),
    }
}

fn is_image(name: &str) -> bool {
    let lower = name.to_lowercase();
    [".jpg", ".jpeg", ".png", ".gif", ".mp4", ".mov"]
        .iter()
        .any(|e| lower.ends_with(e))
}

/// The pre-authenticated download URL (Box's `dl.boxcloud.com`): no bearer token.
async fn dl(State(b): B, Path(link): Path<String>, headers: HeaderMap) -> Response {
    let Some(id) = lock(&b.links).get(&link).cloned() else {
        return (StatusCode::FORBIDDEN, "expired download link").into_response();
    };
    match b.find(&id) {
        Some(f) => download(f.content, "application/octet-stream", &headers, &b.faults),
        None => not_found(),
    }
}

async fn placeholder() -> Response {
    ([(header::CONTENT_TYPE, "image/png")], "placeholder").into_response()
}

/// A running fake Box.
#[derive(Debug)]
pub struct FakeBox {
    pub server: TestServer,
    pub state: Arc<BoxState>,
}

impl FakeBox {
    /// Starts a fake Box knowing the app `client_id` / `client_secret`.
    pub async fn start(client_id: &str, client_secret: &str) -> Self {
        let state = Arc::new(BoxState {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            login: "fake.user@example.com".into(),
            faults: Faults::default(),
            consent_page: AtomicBool::new(false),
            thumbnail_pending: AtomicBool::new(false),
            retry_after: AtomicU64::new(1),
            api_calls: AtomicU64::new(0),
            refreshes: AtomicU64::new(0),
            next_id: AtomicU64::new(0),
            items: Mutex::default(),
            codes: Mutex::default(),
            pending: Mutex::default(),
            access: Mutex::default(),
            refresh: Mutex::default(),
            spent: Mutex::default(),
            links: Mutex::default(),
            revoked: Mutex::default(),
            base: OnceLock::new(),
        });
        let router = Router::new()
            .route("/api/oauth2/authorize", get(authorize))
            .route("/api/oauth2/consent", post(consent))
            .route("/oauth2/token", post(token))
            .route("/oauth2/revoke", post(revoke))
            .route("/2.0/users/me", get(me))
            .route("/2.0/folders/{id}/items", get(folder_items))
            .route("/2.0/files/{id}", get(file))
            .route("/2.0/files/{id}/{part}", get(file_part))
            .route("/dl/{link}/download", get(dl))
            .route("/placeholder.png", get(placeholder))
            .with_state(state.clone());
        let server = TestServer::start(router).await;
        let _ = state.base.set(server.url(""));
        Self { server, state }
    }

    /// `FERRY_BOX_AUTH_URL`.
    pub fn auth_url(&self) -> String {
        self.server.url("/api/oauth2/authorize")
    }
    /// `FERRY_BOX_TOKEN_URL`.
    pub fn token_url(&self) -> String {
        self.server.url("/oauth2/token")
    }
    /// `FERRY_BOX_API_URL`.
    pub fn api_url(&self) -> String {
        self.server.url("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn signed_in(b: &FakeBox) -> (reqwest::Client, String, String) {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        let resp = http
            .get(b.auth_url())
            .query(&[
                ("client_id", "k"),
                ("response_type", "code"),
                ("redirect_uri", "http://app.test/box/redirect"),
                ("state", "s"),
            ])
            .send()
            .await
            .expect("authorize");
        let location = resp.headers()[header::LOCATION].to_str().expect("location");
        let code = url::Url::parse(location)
            .expect("url")
            .query_pairs()
            .find(|(k, _)| k == "code")
            .map(|(_, v)| v.into_owned())
            .expect("code");
        let t: Value = http
            .post(b.token_url())
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("client_id", "k"),
                ("client_secret", "s"),
            ])
            .send()
            .await
            .expect("token")
            .json()
            .await
            .expect("json");
        let access = t["access_token"].as_str().expect("access").to_owned();
        let refresh = t["refresh_token"].as_str().expect("refresh").to_owned();
        (http, access, refresh)
    }

    #[tokio::test]
    async fn refresh_tokens_work_once() {
        let b = FakeBox::start("k", "s").await;
        let (http, _, refresh) = signed_in(&b).await;
        let form = [
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh.as_str()),
            ("client_id", "k"),
            ("client_secret", "s"),
        ];
        let first: Value = http
            .post(b.token_url())
            .form(&form)
            .send()
            .await
            .expect("refresh")
            .json()
            .await
            .expect("json");
        let rotated = first["refresh_token"].as_str().expect("rotated");
        assert_ne!(rotated, refresh);
        assert!(b.state.refresh_token_live(rotated));
        let again = http
            .post(b.token_url())
            .form(&form)
            .send()
            .await
            .expect("reuse");
        assert_eq!(again.status(), StatusCode::BAD_REQUEST);
        let body: Value = again.json().await.expect("json");
        assert_eq!(body["error"], "invalid_grant");
    }

    #[tokio::test]
    async fn marker_paging_and_mini_items() {
        let b = FakeBox::start("k", "s").await;
        let (http, access, _) = signed_in(&b).await;
        for i in 0..5 {
            b.state.add_file("0", &format!("f{i}.txt"), vec![b'x'; i]);
        }
        let list = |marker: Option<String>| {
            let mut q = vec![
                ("usemarker", "true".to_owned()),
                ("limit", "2".to_owned()),
                ("fields", "name,size".to_owned()),
            ];
            if let Some(m) = marker {
                q.push(("marker", m));
            }
            http.get(b.server.url("/2.0/folders/0/items"))
                .bearer_auth(&access)
                .query(&q)
                .send()
        };
        let mut names = Vec::new();
        let mut marker = None;
        loop {
            let page: Value = list(marker)
                .await
                .expect("list")
                .json()
                .await
                .expect("json");
            for e in page["entries"].as_array().expect("entries") {
                assert!(e.get("size").is_some() && e.get("modified_at").is_none());
                names.push(e["name"].as_str().expect("name").to_owned());
            }
            match page["next_marker"].as_str() {
                Some(m) => marker = Some(m.to_owned()),
                None => break,
            }
        }
        assert_eq!(names, ["f0.txt", "f1.txt", "f2.txt", "f3.txt", "f4.txt"]);
    }
}
