//! A fake Google: the OAuth endpoints (`/o/oauth2/v2/auth` with an optional consent page,
//! `/token` with authorization-code + PKCE and refresh grants, `/revoke`) and the Drive v3
//! calls Ferry makes (`about`, `files` list with a small `q` parser, paging and
//! `orderBy=folder,name`, `files/{id}` metadata and `alt=media` with `Range`, `files/{id}/export`
//! with the export cap, `drives` paging), plus a credentialed thumbnail URL.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use base64::Engine;
use bytes::Bytes;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{Faults, download, found, random_hex};
use crate::TestServer;

const FOLDER: &str = "application/vnd.google-apps.folder";
const SHORTCUT: &str = "application/vnd.google-apps.shortcut";

/// A file in the fake Drive.
#[derive(Clone, Debug)]
pub struct DriveFile {
    pub id: String,
    pub name: String,
    pub mime: String,
    pub parents: Vec<String>,
    /// The bytes (`alt=media`), or the exported bytes of a Workspace file.
    pub content: Bytes,
    pub shared_with_me: bool,
    pub thumbnail: bool,
    pub shortcut: Option<(String, String)>,
}

#[derive(Debug)]
struct Code {
    redirect_uri: String,
    challenge: Option<String>,
}

/// The fake's state; tests add files and flip faults through it.
#[derive(Debug)]
pub struct Google {
    pub client_id: String,
    pub client_secret: String,
    pub email: String,
    pub faults: Faults,
    /// Serve a consent page (Allow / Deny) instead of approving at once.
    pub consent_page: AtomicBool,
    /// Largest export (Google's is 10 MB).
    pub export_limit: AtomicU64,
    /// API calls answered (any status).
    pub api_calls: AtomicU64,
    files: Mutex<Vec<DriveFile>>,
    drives: Mutex<Vec<(String, String)>>,
    codes: Mutex<HashMap<String, Code>>,
    pending: Mutex<HashMap<String, (String, String)>>,
    access: Mutex<HashSet<String>>,
    refresh: Mutex<HashSet<String>>,
    /// Tokens revoked through `/revoke`.
    pub revoked: Mutex<Vec<String>>,
    base: OnceLock<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Google {
    fn base(&self) -> &str {
        self.base.get().map(String::as_str).unwrap_or("")
    }

    fn add(&self, file: DriveFile) -> String {
        let id = file.id.clone();
        lock(&self.files).push(file);
        id
    }

    fn new_id() -> String {
        format!("f{}", &random_hex(12))
    }

    /// Adds a file with `content` under `parent` (`root`, a folder id or a shared drive id).
    pub fn add_file(
        &self,
        parent: &str,
        name: &str,
        mime: &str,
        content: impl Into<Bytes>,
    ) -> String {
        self.add(DriveFile {
            id: Self::new_id(),
            name: name.into(),
            mime: mime.into(),
            parents: vec![parent.into()],
            content: content.into(),
            shared_with_me: false,
            thumbnail: mime.starts_with("image/"),
            shortcut: None,
        })
    }

    /// Adds a folder.
    pub fn add_folder(&self, parent: &str, name: &str) -> String {
        self.add_file(parent, name, FOLDER, Bytes::new())
    }

    /// Adds a shortcut to `target`.
    pub fn add_shortcut(&self, parent: &str, name: &str, target: &str) -> String {
        let target_mime = lock(&self.files)
            .iter()
            .find(|f| f.id == target)
            .map(|f| f.mime.clone())
            .unwrap_or_default();
        self.add(DriveFile {
            id: Self::new_id(),
            name: name.into(),
            mime: SHORTCUT.into(),
            parents: vec![parent.into()],
            content: Bytes::new(),
            shared_with_me: false,
            thumbnail: false,
            shortcut: Some((target.into(), target_mime)),
        })
    }

    /// Adds a file only visible under "Shared with me".
    pub fn add_shared_with_me(&self, name: &str, mime: &str, content: impl Into<Bytes>) -> String {
        self.add(DriveFile {
            id: Self::new_id(),
            name: name.into(),
            mime: mime.into(),
            parents: vec!["someone-elses".into()],
            content: content.into(),
            shared_with_me: true,
            thumbnail: false,
            shortcut: None,
        })
    }

    /// Adds a shared drive.
    pub fn add_drive(&self, name: &str) -> String {
        let id = format!("d{}", random_hex(8));
        lock(&self.drives).push((id.clone(), name.into()));
        id
    }

    /// Whether `token` is a live access token.
    pub fn access_token_live(&self, token: &str) -> bool {
        lock(&self.access).contains(token)
    }

    /// Expires one access token (as after its hour).
    pub fn expire(&self, token: &str) {
        lock(&self.access).remove(token);
    }

    /// Whether `token` is a live refresh token.
    pub fn refresh_token_live(&self, token: &str) -> bool {
        lock(&self.refresh).contains(token)
    }

    fn file_json(&self, f: &DriveFile) -> Value {
        let mut v = json!({
            "kind": "drive#file", "id": f.id, "name": f.name, "mimeType": f.mime,
            "modifiedTime": "2026-01-02T03:04:05.000Z",
        });
        if !f.mime.starts_with("application/vnd.google-apps.") {
            v["size"] = json!(f.content.len().to_string());
        }
        if f.thumbnail {
            v["thumbnailLink"] = json!(format!("{}/thumbnails/{}=s220", self.base(), f.id));
            v["imageMediaMetadata"] = json!({"width": 640, "height": 480, "rotation": 0});
        }
        if let Some((target, mime)) = &f.shortcut {
            v["shortcutDetails"] = json!({"targetId": target, "targetMimeType": mime});
        }
        v
    }

    /// The API gate (faults, then the bearer token): the refusal, if any.
    fn gate(&self, headers: &HeaderMap) -> Option<Response> {
        self.api_calls.fetch_add(1, Ordering::SeqCst);
        if Faults::take(&self.faults.too_many) {
            return Some(error(429, "Rate Limit Exceeded", "rateLimitExceeded"));
        }
        if Faults::take(&self.faults.rate_limited) {
            return Some(error(
                403,
                "User Rate Limit Exceeded",
                "userRateLimitExceeded",
            ));
        }
        if Faults::take(&self.faults.server_error) {
            return Some(error(500, "Internal Error", "backendError"));
        }
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let live = token.is_some_and(|t| lock(&self.access).contains(t));
        if !live || self.faults.expire_access.load(Ordering::SeqCst) {
            return Some(error(401, "Invalid Credentials", "authError"));
        }
        None
    }

    fn find(&self, id: &str) -> Option<DriveFile> {
        lock(&self.files).iter().find(|f| f.id == id).cloned()
    }
}

fn error(status: u16, message: &str, reason: &str) -> Response {
    let body = json!({"error": {"code": status, "message": message, "errors": [{"reason": reason, "message": message}]}});
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        Json(body),
    )
        .into_response()
}

fn oauth_error(status: StatusCode, error: &str) -> Response {
    (
        status,
        Json(json!({"error": error, "error_description": error})),
    )
        .into_response()
}

type G = State<Arc<Google>>;
type Q = Query<HashMap<String, String>>;

async fn authorize(State(g): G, Query(q): Q) -> Response {
    if q.get("client_id") != Some(&g.client_id) {
        return (StatusCode::BAD_REQUEST, "invalid_client").into_response();
    }
    let (Some(redirect_uri), Some(state)) = (q.get("redirect_uri"), q.get("state")) else {
        return (StatusCode::BAD_REQUEST, "invalid_request").into_response();
    };
    if q.get("response_type").map(String::as_str) != Some("code")
        || q.get("scope").is_none_or(|s| s.is_empty())
    {
        return (StatusCode::BAD_REQUEST, "invalid_request").into_response();
    }
    if q.contains_key("code_challenge")
        && q.get("code_challenge_method").map(String::as_str) != Some("S256")
    {
        return (StatusCode::BAD_REQUEST, "invalid_request: only S256").into_response();
    }
    let code = random_hex(12);
    lock(&g.codes).insert(
        code.clone(),
        Code {
            redirect_uri: redirect_uri.clone(),
            challenge: q.get("code_challenge").cloned(),
        },
    );
    if g.consent_page.load(Ordering::SeqCst) {
        let pending = random_hex(8);
        lock(&g.pending).insert(pending.clone(), (code, state.clone()));
        let page = format!(
            "<!doctype html><title>Sign in - Google Accounts</title><h1>Fake Google</h1>\
             <p>Ferry wants to see your Google Drive files ({}).</p>\
             <form method=post action=/consent><input type=hidden name=pending value={pending}>\
             <button name=decision value=allow id=allow>Allow</button>\
             <button name=decision value=deny id=deny>Deny</button></form>",
            g.email
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

async fn consent(State(g): G, Form(f): Form<HashMap<String, String>>) -> Response {
    let pending = f.get("pending").and_then(|p| lock(&g.pending).remove(p));
    let Some((code, state)) = pending else {
        return (StatusCode::BAD_REQUEST, "unknown consent").into_response();
    };
    let Some(redirect_uri) = lock(&g.codes).get(&code).map(|c| c.redirect_uri.clone()) else {
        return (StatusCode::BAD_REQUEST, "unknown code").into_response();
    };
    if f.get("decision").map(String::as_str) == Some("allow") {
        redirect_back(&redirect_uri, &[("code", &code), ("state", &state)])
    } else {
        lock(&g.codes).remove(&code);
        redirect_back(
            &redirect_uri,
            &[("error", "access_denied"), ("state", &state)],
        )
    }
}

async fn token(State(g): G, Form(f): Form<HashMap<String, String>>) -> Response {
    if f.get("client_id") != Some(&g.client_id) || f.get("client_secret") != Some(&g.client_secret)
    {
        return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client");
    }
    let access = format!("ya29.{}", random_hex(16));
    match f.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let code = f.get("code").and_then(|c| lock(&g.codes).remove(c));
            let Some(code) = code else {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
            };
            if f.get("redirect_uri") != Some(&code.redirect_uri) {
                return oauth_error(StatusCode::BAD_REQUEST, "redirect_uri_mismatch");
            }
            if let Some(challenge) = &code.challenge {
                let verifier = f.get("code_verifier").map(String::as_str).unwrap_or("");
                let digest = base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .encode(Sha256::digest(verifier.as_bytes()));
                if &digest != challenge {
                    return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
                }
            }
            let refresh = format!("1//{}", random_hex(16));
            lock(&g.access).insert(access.clone());
            lock(&g.refresh).insert(refresh.clone());
            Json(
                json!({"access_token": access, "expires_in": 3599, "refresh_token": refresh,
                "scope": "https://www.googleapis.com/auth/drive.readonly", "token_type": "Bearer"}),
            )
            .into_response()
        }
        Some("refresh_token") => {
            let old = f.get("refresh_token").cloned().unwrap_or_default();
            if g.faults.revoke_refresh.load(Ordering::SeqCst) || !lock(&g.refresh).contains(&old) {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
            }
            lock(&g.access).insert(access.clone());
            let mut answer =
                json!({"access_token": access, "expires_in": 3599, "token_type": "Bearer"});
            if g.faults.rotate_refresh.load(Ordering::SeqCst) {
                let rotated = format!("1//{}", random_hex(16));
                let mut live = lock(&g.refresh);
                live.remove(&old);
                live.insert(rotated.clone());
                answer["refresh_token"] = json!(rotated);
            }
            Json(answer).into_response()
        }
        _ => oauth_error(StatusCode::BAD_REQUEST, "unsupported_grant_type"),
    }
}

async fn revoke(
    State(g): G,
    Query(q): Q,
    body: Result<Form<HashMap<String, String>>, axum::extract::rejection::FormRejection>,
) -> Response {
    let token = q
        .get("token")
        .cloned()
        .or_else(|| body.ok().and_then(|Form(f)| f.get("token").cloned()));
    let Some(token) = token else {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_request");
    };
    let known = lock(&g.access).remove(&token) | lock(&g.refresh).remove(&token);
    if !known {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_token");
    }
    lock(&g.revoked).push(token);
    StatusCode::OK.into_response()
}

async fn about(State(g): G, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    Json(json!({"user": {"emailAddress": g.email, "displayName": "Fake User"}})).into_response()
}

/// `'<id>' in parents and trashed=false` or `sharedWithMe and trashed=false`.
fn parse_q(q: &str) -> Option<Result<String, ()>> {
    let rest = q.trim().strip_suffix("and trashed=false")?.trim();
    if rest == "sharedWithMe" {
        return Some(Err(()));
    }
    let id = rest
        .strip_suffix("in parents")?
        .trim()
        .strip_prefix('\'')?
        .strip_suffix('\'')?;
    (!id.contains('\'')).then(|| Ok(id.to_owned()))
}

fn offset(q: &HashMap<String, String>) -> Option<usize> {
    match q.get("pageToken").filter(|t| !t.is_empty()) {
        None => Some(0),
        Some(t) => t.strip_prefix("o")?.parse().ok(),
    }
}

fn page_size(q: &HashMap<String, String>, default: usize, max: usize) -> usize {
    q.get("pageSize")
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
        .clamp(1, max)
}

async fn files(State(g): G, Query(q): Q, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let Some(filter) = q.get("q").and_then(|q| parse_q(q)) else {
        return error(400, "Invalid Value", "invalid");
    };
    let Some(start) = offset(&q) else {
        return error(400, "Invalid Value", "invalidPageToken");
    };
    let size = page_size(&q, 100, 1000);
    let mut matching: Vec<DriveFile> = lock(&g.files)
        .iter()
        .filter(|f| match &filter {
            Ok(parent) => f.parents.iter().any(|p| p == parent),
            Err(()) => f.shared_with_me,
        })
        .cloned()
        .collect();
    if q.get("orderBy").map(String::as_str) == Some("folder,name") {
        matching.sort_by(|a, b| {
            (a.mime != FOLDER, a.name.to_lowercase())
                .cmp(&(b.mime != FOLDER, b.name.to_lowercase()))
        });
    }
    let page: Vec<Value> = matching
        .iter()
        .skip(start)
        .take(size)
        .map(|f| g.file_json(f))
        .collect();
    let mut answer = json!({"kind": "drive#fileList", "incompleteSearch": false, "files": page});
    if start + size < matching.len() {
        answer["nextPageToken"] = json!(format!("o{}", start + size));
    }
    Json(answer).into_response()
}

async fn file(State(g): G, Path(id): Path<String>, Query(q): Q, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let Some(f) = g.find(&id) else {
        return error(404, &format!("File not found: {id}."), "notFound");
    };
    if q.get("alt").map(String::as_str) != Some("media") {
        return Json(g.file_json(&f)).into_response();
    }
    if f.mime.starts_with("application/vnd.google-apps.") {
        return error(
            403,
            "Only files with binary content can be downloaded. Use Export with Docs Editors files.",
            "fileNotDownloadable",
        );
    }
    download(f.content, &f.mime, &headers, &g.faults)
}

async fn export(State(g): G, Path(id): Path<String>, Query(q): Q, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let Some(f) = g.find(&id) else {
        return error(404, &format!("File not found: {id}."), "notFound");
    };
    let expected = match f.mime.as_str() {
        "application/vnd.google-apps.document" => {
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        }
        "application/vnd.google-apps.spreadsheet" => {
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
        }
        "application/vnd.google-apps.presentation" => {
            "application/vnd.openxmlformats-officedocument.presentationml.presentation"
        }
        "application/vnd.google-apps.drawing" => "application/pdf",
        _ => {
            return error(
                403,
                "Export only supports Docs Editors files.",
                "fileNotExportable",
            );
        }
    };
    if q.get("mimeType").map(String::as_str) != Some(expected) {
        return error(
            400,
            "The requested conversion is not supported.",
            "badRequest",
        );
    }
    if f.content.len() as u64 > g.export_limit.load(Ordering::SeqCst) {
        return error(
            403,
            "This file is too large to be exported.",
            "exportSizeLimitExceeded",
        );
    }
    // Exports have no Range support and no length, like Google's.
    let mut resp = download(f.content, expected, &HeaderMap::new(), &g.faults);
    resp.headers_mut().remove(header::CONTENT_LENGTH);
    resp.headers_mut().remove(header::ACCEPT_RANGES);
    resp
}

async fn drives(State(g): G, Query(q): Q, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let Some(start) = offset(&q) else {
        return error(400, "Invalid Value", "invalidPageToken");
    };
    let size = page_size(&q, 10, 100);
    let all = lock(&g.drives).clone();
    let page: Vec<Value> = all
        .iter()
        .skip(start)
        .take(size)
        .map(|(id, name)| json!({"kind": "drive#drive", "id": id, "name": name}))
        .collect();
    let mut answer = json!({"kind": "drive#driveList", "drives": page});
    if start + size < all.len() {
        answer["nextPageToken"] = json!(format!("o{}", start + size));
    }
    Json(answer).into_response()
}

async fn thumbnail(State(g): G, Path(id): Path<String>, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let id = id.split('=').next().unwrap_or("");
    match g.find(id).filter(|f| f.thumbnail) {
        Some(f) => (
            [(header::CONTENT_TYPE, "image/png")],
            format!("PNG thumbnail of {}", f.id),
        )
            .into_response(),
        None => error(404, "no thumbnail", "notFound"),
    }
}

/// A running fake Google.
#[derive(Debug)]
pub struct FakeGoogle {
    pub server: TestServer,
    pub state: Arc<Google>,
}

impl FakeGoogle {
    /// Starts a fake Google knowing the app `client_id` / `client_secret`.
    pub async fn start(client_id: &str, client_secret: &str) -> Self {
        let state = Arc::new(Google {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            email: "fake.user@example.com".into(),
            faults: Faults::default(),
            consent_page: AtomicBool::new(false),
            export_limit: AtomicU64::new(10 * 1024 * 1024),
            api_calls: AtomicU64::new(0),
            files: Mutex::default(),
            drives: Mutex::default(),
            codes: Mutex::default(),
            pending: Mutex::default(),
            access: Mutex::default(),
            refresh: Mutex::default(),
            revoked: Mutex::default(),
            base: OnceLock::new(),
        });
        let router = Router::new()
            .route("/o/oauth2/v2/auth", get(authorize))
            .route("/consent", post(consent))
            .route("/token", post(token))
            .route("/revoke", post(revoke))
            .route("/drive/v3/about", get(about))
            .route("/drive/v3/files", get(files))
            .route("/drive/v3/files/{id}", get(file))
            .route("/drive/v3/files/{id}/export", get(export))
            .route("/drive/v3/drives", get(drives))
            .route("/thumbnails/{id}", get(thumbnail))
            .with_state(state.clone());
        let server = TestServer::start(router).await;
        let _ = state.base.set(server.url(""));
        Self { server, state }
    }

    /// `FERRY_GOOGLE_AUTH_URL`.
    pub fn auth_url(&self) -> String {
        self.server.url("/o/oauth2/v2/auth")
    }
    /// `FERRY_GOOGLE_TOKEN_URL`.
    pub fn token_url(&self) -> String {
        self.server.url("/token")
    }
    /// `FERRY_GOOGLE_API_URL`.
    pub fn api_url(&self) -> String {
        self.server.url("")
    }
}
