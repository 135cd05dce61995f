//! A fake Google: the OAuth endpoints (`/o/oauth2/v2/auth` with an optional consent page,
//! `/token` with authorization-code + PKCE and refresh grants, through the shared
//! [`super::oauth`]; `/revoke`), the state and API gate here, and in [`drive`] the Drive v3 calls
//! Ferry makes (`about`, `files` list with a small `q` parser, paging and `orderBy=folder,name`,
//! `files/{id}` metadata and `alt=media` with `Range`, `files/{id}/export` with the export cap,
//! `drives` paging), plus a credentialed thumbnail URL.

mod drive;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use bytes::Bytes;
use serde_json::{Value, json};

use super::oauth::{
    self, Authority, AuthorizeError, ConsentPage, Dialect, Grant, OAuthServer, TokenError, bearer,
    lock,
};
use super::{Faults, random_hex};
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

/// The fake's state; tests add files and flip faults through it.
#[derive(Debug)]
pub struct Google {
    /// The app, its codes and the consent page switch.
    pub oauth: OAuthServer,
    pub email: String,
    pub faults: Faults,
    /// Largest export (Google's is 10 MB).
    pub export_limit: AtomicU64,
    /// API calls answered (any status).
    pub api_calls: AtomicU64,
    files: Mutex<Vec<DriveFile>>,
    drives: Mutex<Vec<(String, String)>>,
    access: Mutex<HashSet<String>>,
    refresh: Mutex<HashSet<String>>,
    /// Tokens revoked through `/revoke`.
    pub revoked: Mutex<Vec<String>>,
    base: OnceLock<String>,
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

    /// A live access token handed to a page directly, as Google Identity Services does for the
    /// pickers (no code exchange).
    pub fn issue_access_token(&self) -> String {
        let token = format!("ya29.picker-{}", random_hex(16));
        lock(&self.access).insert(token.clone());
        token
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
        if let Some(wait) = self.faults.take_too_many() {
            let mut r = error(429, "Rate Limit Exceeded", "rateLimitExceeded");
            r.headers_mut().insert(header::RETRY_AFTER, wait);
            return Some(r);
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
        let token = bearer(headers);
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

/// Google's authorization server: PKCE, a scope required, refresh tokens kept unless the
/// `rotate_refresh` fault is on.
const DIALECT: Dialect = Dialect {
    code_prefix: "",
    code_bytes: 12,
    pkce: true,
    scope_required: true,
    redirect_optional: false,
    consent: Some(ConsentPage {
        title: "Sign in - Google Accounts",
        heading: "Fake Google",
        prompt: "Ferry wants to see your Google Drive files",
        action: "/consent",
        allow: "Allow",
        deny: "Deny",
    }),
};

impl Authority for Google {
    fn oauth(&self) -> &OAuthServer {
        &self.oauth
    }

    fn account(&self) -> &str {
        &self.email
    }

    fn authorize_refusal(&self, why: AuthorizeError) -> Response {
        let text = match why {
            AuthorizeError::ResponseType => "invalid_request",
            other => other.code(),
        };
        (StatusCode::BAD_REQUEST, text).into_response()
    }

    fn token_refusal(&self, why: TokenError) -> Response {
        match why {
            TokenError::InvalidClient => oauth_error(StatusCode::UNAUTHORIZED, "invalid_client"),
            TokenError::RedirectMismatch => {
                oauth_error(StatusCode::BAD_REQUEST, "redirect_uri_mismatch")
            }
            TokenError::UnknownCode | TokenError::VerifierMismatch => {
                oauth_error(StatusCode::BAD_REQUEST, "invalid_grant")
            }
            TokenError::UnsupportedGrant => {
                oauth_error(StatusCode::BAD_REQUEST, "unsupported_grant_type")
            }
        }
    }

    fn issue(&self, _grant: &Grant) -> Response {
        let access = format!("ya29.{}", random_hex(16));
        let refresh = format!("1//{}", random_hex(16));
        lock(&self.access).insert(access.clone());
        lock(&self.refresh).insert(refresh.clone());
        Json(
            json!({"access_token": access, "expires_in": 3599, "refresh_token": refresh,
            "scope": "https://www.googleapis.com/auth/drive.readonly", "token_type": "Bearer"}),
        )
        .into_response()
    }

    fn refresh(&self, f: &HashMap<String, String>) -> Response {
        let old = f.get("refresh_token").cloned().unwrap_or_default();
        if self.faults.revoke_refresh.load(Ordering::SeqCst) || !lock(&self.refresh).contains(&old)
        {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
        }
        let access = format!("ya29.{}", random_hex(16));
        lock(&self.access).insert(access.clone());
        let mut answer =
            json!({"access_token": access, "expires_in": 3599, "token_type": "Bearer"});
        if self.faults.rotate_refresh.load(Ordering::SeqCst) {
            let rotated = format!("1//{}", random_hex(16));
            let mut live = lock(&self.refresh);
            live.remove(&old);
            live.insert(rotated.clone());
            answer["refresh_token"] = json!(rotated);
        }
        Json(answer).into_response()
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
            oauth: OAuthServer::new(client_id, client_secret, DIALECT),
            email: "fake.user@example.com".into(),
            faults: Faults::default(),
            export_limit: AtomicU64::new(10 * 1024 * 1024),
            api_calls: AtomicU64::new(0),
            files: Mutex::default(),
            drives: Mutex::default(),
            access: Mutex::default(),
            refresh: Mutex::default(),
            revoked: Mutex::default(),
            base: OnceLock::new(),
        });
        let router = Router::new()
            .route("/o/oauth2/v2/auth", get(oauth::authorize::<Google>))
            .route("/consent", post(oauth::consent::<Google>))
            .route("/token", post(oauth::token::<Google>))
            .route("/revoke", post(revoke))
            .route("/drive/v3/about", get(drive::about))
            .route("/drive/v3/files", get(drive::files))
            .route("/drive/v3/files/{id}", get(drive::file))
            .route("/drive/v3/files/{id}/export", get(drive::export))
            .route("/drive/v3/drives", get(drive::drives))
            .route("/thumbnails/{id}", get(drive::thumbnail))
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
