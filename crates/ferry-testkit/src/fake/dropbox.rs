//! A fake Dropbox (OAuth 2 code flow + API v2) on the documented wire shapes: `/oauth2/authorize`
//! (checks `token_access_type=offline`, `code_challenge`), `/oauth2/token` (codes with PKCE
//! verifier, `refresh_token` grant; 4-hour access tokens; `invalid_grant` errors),
//! `/2/users/get_current_account` (with `root_info`; a team account when `team_root` is set),
//! `/2/files/list_folder` and `/continue` (`limit`, `has_more`, `cursor`), `/2/auth/token/revoke`,
//! and on the content host `/2/files/download` and `/2/files/get_thumbnail_v2` (argument in the
//! `Dropbox-API-Arg` header, metadata in `Dropbox-API-Result`, `Range` honoured). Paths resolve
//! case-blind against the home namespace, or the team root under `Dropbox-API-Path-Root`.
//! Faults: expired access token (`401 expired_access_token`), 429 with `Retry-After`, cut bodies.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use base64::Engine;
use bytes::Bytes;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{Faults, download, found, random_hex};
use crate::TestServer;

/// The home namespace of the signed-in user; the team root is [`Dropbox::team_root`].
pub const HOME_NS: &str = "1001";
/// The team space's root namespace id.
pub const TEAM_NS: &str = "2002";

/// The fake's state.
#[derive(Debug)]
pub struct Dropbox {
    pub client_id: String,
    pub client_secret: String,
    pub email: String,
    pub faults: Faults,
    /// Seconds in `Retry-After` of a 429.
    pub retry_after: AtomicU64,
    /// Calls to the API and content hosts (rate-limited ones included).
    pub api_calls: AtomicU64,
    /// Access tokens issued for a refresh token.
    pub refreshes: AtomicU64,
    /// The account is in a team space: its root namespace differs from its home one.
    pub team: std::sync::atomic::AtomicBool,
    /// Files by lower-case path, per namespace id.
    files: Mutex<BTreeMap<(String, String), Bytes>>,
    codes: Mutex<HashMap<String, (String, Option<String>)>>,
    access: Mutex<HashSet<String>>,
    refresh: Mutex<HashSet<String>>,
    revoked: Mutex<HashSet<String>>,
    expired: Mutex<HashSet<String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn api_error(status: StatusCode, tag: &str) -> Response {
    (
        status,
        Json(json!({"error_summary": format!("{tag}/.."), "error": {".tag": tag}})),
    )
        .into_response()
}

fn endpoint_error(summary: &str) -> Response {
    (
        StatusCode::CONFLICT,
        Json(json!({"error_summary": summary, "error": {".tag": summary.split('/').next()}})),
    )
        .into_response()
}

fn oauth_error(error: &str, description: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"error": error, "error_description": description})),
    )
        .into_response()
}

impl Dropbox {
    /// Adds a file at `path` (`/Photos/a.jpg`) in the home namespace; folders are implied.
    pub fn add(&self, path: &str, content: impl Into<Bytes>) {
        self.add_in(HOME_NS, path, content);
    }

    /// Adds a file at `path` in the namespace `ns`.
    pub fn add_in(&self, ns: &str, path: &str, content: impl Into<Bytes>) {
        lock(&self.files).insert((ns.into(), path.into()), content.into());
    }

    /// Whether `token` is a live access token.
    pub fn access_live(&self, token: &str) -> bool {
        lock(&self.access).contains(token)
    }

    /// Expires the access token `token` (calls with it get `401 expired_access_token`).
    pub fn expire(&self, token: &str) {
        lock(&self.access).remove(token);
        lock(&self.expired).insert(token.to_owned());
    }

    /// Whether `token` was revoked through `/2/auth/token/revoke`.
    pub fn was_revoked(&self, token: &str) -> bool {
        lock(&self.revoked).contains(token)
    }

    fn issue_access(&self) -> String {
        let t = format!("sl.fake{}", random_hex(16));
        lock(&self.access).insert(t.clone());
        t
    }

    /// Checks rate limits and the bearer token; the namespace calls are rooted in, or the
    /// answer to send instead.
    // The error is the answer itself; a fake's few calls do not mind its size.
    #[allow(clippy::result_large_err)]
    fn gate(&self, headers: &HeaderMap) -> Result<String, Response> {
        self.api_calls.fetch_add(1, Ordering::SeqCst);
        if Faults::take(&self.faults.too_many) {
            let wait = self.retry_after.load(Ordering::SeqCst).to_string();
            let body = json!({"error_summary": "too_many_requests/..",
                "error": {"reason": {".tag": "too_many_requests"}, "retry_after": 1}});
            return Err((
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, wait)],
                Json(body),
            )
                .into_response());
        }
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let Some(token) = token else {
            return Err(api_error(StatusCode::UNAUTHORIZED, "missing_auth"));
        };
        if self.faults.expire_access.load(Ordering::SeqCst) || lock(&self.expired).contains(token) {
            return Err(api_error(StatusCode::UNAUTHORIZED, "expired_access_token"));
        }
        if !self.access_live(token) {
            return Err(api_error(StatusCode::UNAUTHORIZED, "invalid_access_token"));
        }
        match headers.get("dropbox-api-path-root") {
            None => Ok(HOME_NS.into()),
            Some(v) => {
                let root: Value = serde_json::from_slice(v.as_bytes()).unwrap_or(Value::Null);
                let ns = root.get("root").and_then(Value::as_str).unwrap_or("");
                let team = self.team.load(Ordering::SeqCst);
                if root.get(".tag").and_then(Value::as_str) == Some("root")
                    && ((team && ns == TEAM_NS) || ns == HOME_NS)
                {
                    Ok(ns.to_owned())
                } else {
                    Err((StatusCode::UNPROCESSABLE_ENTITY, Json(json!({"error_summary": "invalid_root/..", "error": {".tag": "invalid_root"}}))).into_response())
                }
            }
        }
    }

    fn meta(path: &str, size: Option<usize>) -> Value {
        let name = path.rsplit('/').next().unwrap_or("");
        let id = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(path.to_lowercase().as_bytes()))[..16]
            .to_owned();
        let mut v = json!({"name": name, "path_lower": path.to_lowercase(),
            "path_display": path, "id": format!("id:{id}")});
        match size {
            Some(size) => {
                v[".tag"] = json!("file");
                v["size"] = json!(size);
                v["server_modified"] = json!("2026-01-02T03:04:05Z");
                v["client_modified"] = json!("2026-01-02T03:04:05Z");
                v["rev"] = json!("015f0000000001");
                v["is_downloadable"] = json!(true);
            }
            None => v[".tag"] = json!("folder"),
        }
        v
    }

    /// Every entry directly in `dir` ("" is the root) of `ns`, folders and files, by path.
    fn children(&self, ns: &str, dir: &str) -> Option<Vec<Value>> {
        let dir = dir.to_lowercase();
        let files = lock(&self.files);
        let mut out: BTreeMap<String, Value> = BTreeMap::new();
        let mut exists = dir.is_empty();
        for ((n, path), content) in files.iter() {
            let lower = path.to_lowercase();
            if n != ns || !lower.starts_with(&format!("{dir}/")) {
                continue;
            }
            exists = true;
            let rest = &path[dir.len() + 1..];
            match rest.split_once('/') {
                None => {
                    out.insert(lower, Self::meta(path, Some(content.len())));
                }
                Some((folder, _)) => {
                    let full = format!("{}/{folder}", &path[..dir.len()]);
                    out.insert(full.to_lowercase(), Self::meta(&full, None));
                }
            }
        }
        exists.then(|| out.into_values().collect())
    }

    #[allow(clippy::result_large_err)]
    fn file(&self, ns: &str, path: &str) -> Result<(String, Bytes), Response> {
        let lower = path.to_lowercase();
        let files = lock(&self.files);
        if let Some(((_, p), c)) = files
            .iter()
            .find(|((n, p), _)| n == ns && p.to_lowercase() == lower)
        {
            return Ok((p.clone(), c.clone()));
        }
        if files
            .keys()
            .any(|(n, p)| n == ns && p.to_lowercase().starts_with(&format!("{lower}/")))
        {
            return Err(endpoint_error("path/not_file/."));
        }
        Err(endpoint_error("path/not_found/."))
    }
}

type D = State<Arc<Dropbox>>;
type Q = Query<HashMap<String, String>>;

async fn authorize(State(d): D, Query(q): Q) -> Response {
    if q.get("client_id") != Some(&d.client_id)
        || q.get("response_type").map(String::as_str) != Some("code")
        || q.get("token_access_type").map(String::as_str) != Some("offline")
    {
        return (
            StatusCode::BAD_REQUEST,
            "Invalid client_id, response_type or token_access_type",
        )
            .into_response();
    }
    let (Some(redirect_uri), Some(state)) = (q.get("redirect_uri"), q.get("state")) else {
        return (StatusCode::BAD_REQUEST, "invalid_request").into_response();
    };
    let challenge = match q.get("code_challenge_method").map(String::as_str) {
        Some("S256") => q.get("code_challenge").cloned(),
        None => None,
        Some(_) => {
            return (StatusCode::BAD_REQUEST, "unsupported code_challenge_method").into_response();
        }
    };
    let code = random_hex(16);
    lock(&d.codes).insert(code.clone(), (redirect_uri.clone(), challenge));
    let Ok(mut url) = url::Url::parse(redirect_uri) else {
        return (StatusCode::BAD_REQUEST, "bad redirect_uri").into_response();
    };
    url.query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", state);
    found(url.as_str())
}

async fn token(State(d): D, Form(f): Form<HashMap<String, String>>) -> Response {
    if f.get("client_id") != Some(&d.client_id) || f.get("client_secret") != Some(&d.client_secret)
    {
        return oauth_error("invalid_client", "Invalid client_id or client_secret");
    }
    match f.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let Some((uri, challenge)) = f.get("code").and_then(|c| lock(&d.codes).remove(c))
            else {
                return oauth_error("invalid_grant", "code doesn't exist or has expired");
            };
            if Some(&uri) != f.get("redirect_uri") {
                return oauth_error("invalid_grant", "redirect_uri mismatch");
            }
            if let Some(challenge) = challenge {
                let verifier = f.get("code_verifier").map(String::as_str).unwrap_or("");
                let hashed = base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .encode(Sha256::digest(verifier.as_bytes()));
                if hashed != challenge {
                    return oauth_error("invalid_grant", "invalid code verifier");
                }
            }
            let refresh = format!("rt.fake{}", random_hex(16));
            lock(&d.refresh).insert(refresh.clone());
            Json(
                json!({"access_token": d.issue_access(), "token_type": "bearer",
                "expires_in": 14400, "refresh_token": refresh,
                "scope": "account_info.read files.content.read files.metadata.read",
                "uid": "12345", "account_id": "dbid:fake"}),
            )
            .into_response()
        }
        Some("refresh_token") => {
            let old = f.get("refresh_token").cloned().unwrap_or_default();
            if d.faults.revoke_refresh.load(Ordering::SeqCst) || !lock(&d.refresh).contains(&old) {
                return oauth_error("invalid_grant", "refresh token is invalid or revoked");
            }
            // Dropbox keeps the refresh token; only a new access token comes back.
            d.refreshes.fetch_add(1, Ordering::SeqCst);
            Json(json!({"access_token": d.issue_access(), "token_type": "bearer", "expires_in": 14400}))
                .into_response()
        }
        _ => oauth_error("unsupported_grant_type", "grant_type is not supported"),
    }
}

async fn current_account(State(d): D, headers: HeaderMap) -> Response {
    if let Err(r) = d.gate(&headers) {
        return r;
    }
    let team = d.team.load(Ordering::SeqCst);
    let root_info = if team {
        json!({".tag": "team", "root_namespace_id": TEAM_NS, "home_namespace_id": HOME_NS, "home_path": "/Fake User"})
    } else {
        json!({".tag": "user", "root_namespace_id": HOME_NS, "home_namespace_id": HOME_NS})
    };
    Json(
        json!({"account_id": "dbid:fake", "name": {"display_name": "Fake User"},
        "email": d.email, "email_verified": true, "disabled": false,
        "root_info": root_info}),
    )
    .into_response()
}

/// Cursor: base64 of `ns|dir|offset|limit`.
fn cursor(ns: &str, dir: &str, offset: usize, limit: usize) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{ns}|{dir}|{offset}|{limit}"))
}

fn page(d: &Dropbox, ns: &str, dir: &str, offset: usize, limit: usize) -> Response {
    let Some(all) = d.children(ns, dir) else {
        return endpoint_error("path/not_found/..");
    };
    let end = (offset + limit).min(all.len());
    let entries = all.get(offset..end).unwrap_or_default().to_vec();
    Json(json!({"entries": entries, "cursor": cursor(ns, dir, end, limit), "has_more": end < all.len()}))
        .into_response()
}

async fn list_folder(State(d): D, headers: HeaderMap, body: Bytes) -> Response {
    let ns = match d.gate(&headers) {
        Ok(ns) => ns,
        Err(r) => return r,
    };
    let Ok(arg) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "Error in call to API function \"files/list_folder\": request body: could not decode input as JSON").into_response();
    };
    let path = arg.get("path").and_then(Value::as_str).unwrap_or("/");
    if !(path.is_empty() || (path.starts_with('/') && !path.ends_with('/'))) {
        return (StatusCode::BAD_REQUEST, "Error in call to API function \"files/list_folder\": request body: path: 'x' did not match pattern").into_response();
    }
    let limit = arg
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(500)
        .clamp(1, 2000) as usize;
    page(&d, &ns, path, 0, limit)
}

async fn list_continue(State(d): D, headers: HeaderMap, body: Bytes) -> Response {
    let ns = match d.gate(&headers) {
        Ok(ns) => ns,
        Err(r) => return r,
    };
    let raw = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("cursor").and_then(Value::as_str).map(str::to_owned))
        .and_then(|c| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(c)
                .ok()
        })
        .and_then(|b| String::from_utf8(b).ok());
    let parts: Option<(String, String, usize, usize)> = raw.and_then(|r| {
        let mut it = r.splitn(4, '|');
        Some((
            it.next()?.to_owned(),
            it.next()?.to_owned(),
            it.next()?.parse().ok()?,
            it.next()?.parse().ok()?,
        ))
    });
    match parts {
        Some((cns, dir, offset, limit)) if cns == ns => page(&d, &ns, &dir, offset, limit),
        _ => endpoint_error("reset/.."),
    }
}

async fn revoke(State(d): D, headers: HeaderMap) -> Response {
    if let Err(r) = d.gate(&headers) {
        return r;
    }
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("")
        .to_owned();
    lock(&d.access).remove(&token);
    lock(&d.revoked).insert(token);
    Json(Value::Null).into_response()
}

/// The `Dropbox-API-Arg` header, parsed (it must be ASCII: non-ASCII arrives `\u` escaped).
fn arg(headers: &HeaderMap) -> Option<Value> {
    let raw = headers.get("dropbox-api-arg")?;
    if !raw.as_bytes().iter().all(u8::is_ascii) {
        return None;
    }
    serde_json::from_slice(raw.as_bytes()).ok()
}

async fn file_download(State(d): D, headers: HeaderMap) -> Response {
    let ns = match d.gate(&headers) {
        Ok(ns) => ns,
        Err(r) => return r,
    };
    let Some(path) =
        arg(&headers).and_then(|a| a.get("path").and_then(Value::as_str).map(str::to_owned))
    else {
        return (
            StatusCode::BAD_REQUEST,
            "Error in call to API function \"files/download\": Bad Dropbox-API-Arg",
        )
            .into_response();
    };
    let (real, content) = match d.file(&ns, &path) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let meta = Dropbox::meta(&real, Some(content.len()));
    let mut resp = download(content, "application/octet-stream", &headers, &d.faults);
    if let Ok(v) = meta.to_string().parse() {
        resp.headers_mut().insert("dropbox-api-result", v);
    }
    resp
}

async fn thumbnail(State(d): D, headers: HeaderMap) -> Response {
    let ns = match d.gate(&headers) {
        Ok(ns) => ns,
        Err(r) => return r,
    };
    let a = arg(&headers).unwrap_or(Value::Null);
    let path = a.pointer("/resource/path").and_then(Value::as_str);
    if a.pointer("/resource/.tag").and_then(Value::as_str) != Some("path") || path.is_none() {
        return (StatusCode::BAD_REQUEST, "Bad Dropbox-API-Arg").into_response();
    }
    let (real, content) = match d.file(&ns, path.unwrap_or_default()) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let image = thumbnail_of(&content);
    let meta = Dropbox::meta(&real, Some(content.len()));
    let mut resp = (
        [(header::CONTENT_TYPE, "application/octet-stream")],
        Bytes::from(image),
    )
        .into_response();
    if let Ok(v) = json!({"file_metadata": meta}).to_string().parse() {
        resp.headers_mut().insert("dropbox-api-result", v);
    }
    resp
}

/// The thumbnail bytes the fake serves for `content`.
pub fn thumbnail_of(content: &[u8]) -> Vec<u8> {
    [b"JPEGTHUMB:".as_slice(), &Sha256::digest(content)].concat()
}

/// A running fake Dropbox: one server is the authorize page, the API and the content host.
#[derive(Debug)]
pub struct FakeDropbox {
    pub server: TestServer,
    pub state: Arc<Dropbox>,
}

impl FakeDropbox {
    /// Starts a fake Dropbox knowing the app `client_id` / `client_secret`.
    pub async fn start(client_id: &str, client_secret: &str) -> Self {
        let state = Arc::new(Dropbox {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            email: "fake.user@example.com".into(),
            faults: Faults::default(),
            retry_after: AtomicU64::new(1),
            api_calls: AtomicU64::new(0),
            refreshes: AtomicU64::new(0),
            team: std::sync::atomic::AtomicBool::new(false),
            files: Mutex::default(),
            codes: Mutex::default(),
            access: Mutex::default(),
            refresh: Mutex::default(),
            revoked: Mutex::default(),
            expired: Mutex::default(),
        });
        let router = Router::new()
            .route("/oauth2/authorize", get(authorize))
            .route("/oauth2/token", post(token))
            .route("/2/users/get_current_account", post(current_account))
            .route("/2/files/list_folder", post(list_folder))
            .route("/2/files/list_folder/continue", post(list_continue))
            .route("/2/auth/token/revoke", post(revoke))
            .route("/content/2/files/download", post(file_download))
            .route("/content/2/files/get_thumbnail_v2", post(thumbnail))
            .with_state(state.clone());
        let server = TestServer::start(router).await;
        Self { server, state }
    }

    /// `FERRY_DROPBOX_AUTH_URL`.
    pub fn auth_url(&self) -> String {
        self.server.url("/oauth2/authorize")
    }
    /// `FERRY_DROPBOX_TOKEN_URL`.
    pub fn token_url(&self) -> String {
        self.server.url("/oauth2/token")
    }
    /// `FERRY_DROPBOX_API_URL`.
    pub fn api_url(&self) -> String {
        self.server.url("")
    }
    /// `FERRY_DROPBOX_CONTENT_URL` (a path prefix on the same server stands for the host).
    pub fn content_url(&self) -> String {
        self.server.url("/content")
    }
}
