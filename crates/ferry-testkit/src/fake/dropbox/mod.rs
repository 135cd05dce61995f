//! A fake Dropbox (OAuth 2 code flow + API v2) on the documented wire shapes: `/oauth2/authorize`
//! (checks `token_access_type=offline`, `code_challenge`), `/oauth2/token` (codes with PKCE
//! verifier, `refresh_token` grant; 4-hour access tokens; `invalid_grant` errors),
//! `/2/users/get_current_account` (with `root_info`; a team account when `team_root` is set),
//! `/2/files/list_folder` and `/continue` (`limit`, `has_more`, `cursor`), `/2/auth/token/revoke`,
//! and on the content host `/2/files/download` and `/2/files/get_thumbnail_v2` (argument in the
//! `Dropbox-API-Arg` header, metadata in `Dropbox-API-Result`, `Range` honoured). Paths resolve
//! case-blind against the home namespace, or the team root under `Dropbox-API-Path-Root`.
//! Faults: expired access token (`401 expired_access_token`), 429 with `Retry-After`, cut bodies.
//!
//! Here: the state, the API gate, the OAuth side (through the shared [`super::oauth`]) and the
//! account; [`files`]: listing, revoke, downloads and thumbnails; [`search`]: `files/search_v2`
//! and `files/search/continue_v2`.

mod files;
mod search;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use bytes::Bytes;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub use files::thumbnail_of;

use super::oauth::{
    self, Authority, AuthorizeError, Dialect, Grant, OAuthServer, TokenError, bearer, lock,
};
use super::{Faults, random_hex};
use crate::TestServer;

/// The home namespace of the signed-in user; the team root is [`Dropbox::team_root`].
pub const HOME_NS: &str = "1001";
/// The team space's root namespace id.
pub const TEAM_NS: &str = "2002";

/// The fake's state.
#[derive(Debug)]
pub struct Dropbox {
    /// The app and its codes.
    pub oauth: OAuthServer,
    pub email: String,
    pub faults: Faults,
    /// Calls to the API and content hosts (rate-limited ones included).
    pub api_calls: AtomicU64,
    /// Access tokens issued for a refresh token.
    pub refreshes: AtomicU64,
    /// The account is in a team space: its root namespace differs from its home one.
    pub team: std::sync::atomic::AtomicBool,
    /// Files by lower-case path, per namespace id.
    files: Mutex<BTreeMap<(String, String), Bytes>>,
    access: Mutex<HashSet<String>>,
    refresh: Mutex<HashSet<String>>,
    revoked: Mutex<HashSet<String>>,
    expired: Mutex<HashSet<String>>,
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
        if let Some(wait) = self.faults.take_too_many() {
            let secs = self.faults.retry_after.load(Ordering::SeqCst);
            let body = json!({"error_summary": "too_many_requests/..",
                "error": {"reason": {".tag": "too_many_requests"}, "retry_after": secs}});
            return Err((
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, wait)],
                Json(body),
            )
                .into_response());
        }
        let Some(token) = bearer(headers) else {
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

/// Dropbox's authorization server: PKCE, no consent page (it approves at once), and refresh
/// tokens that last (a refresh returns only a new access token).
const DIALECT: Dialect = Dialect {
    code_prefix: "",
    code_bytes: 16,
    pkce: true,
    scope_required: false,
    redirect_optional: false,
    consent: None,
};

impl Authority for Dropbox {
    fn oauth(&self) -> &OAuthServer {
        &self.oauth
    }

    fn account(&self) -> &str {
        &self.email
    }

    fn check_authorize(&self, q: &HashMap<String, String>) -> Result<(), Response> {
        if q.get("token_access_type").map(String::as_str) != Some("offline") {
            return Err(self.authorize_refusal(AuthorizeError::ResponseType));
        }
        Ok(())
    }

    fn authorize_refusal(&self, why: AuthorizeError) -> Response {
        let text = match why {
            AuthorizeError::UnknownClient | AuthorizeError::ResponseType => {
                "Invalid client_id, response_type or token_access_type"
            }
            AuthorizeError::ChallengeMethod => "unsupported code_challenge_method",
            AuthorizeError::MissingParameter | AuthorizeError::NoScope => "invalid_request",
        };
        (StatusCode::BAD_REQUEST, text).into_response()
    }

    fn token_refusal(&self, why: TokenError) -> Response {
        match why {
            TokenError::InvalidClient => {
                oauth_error("invalid_client", "Invalid client_id or client_secret")
            }
            TokenError::UnknownCode => {
                oauth_error("invalid_grant", "code doesn't exist or has expired")
            }
            TokenError::RedirectMismatch => oauth_error("invalid_grant", "redirect_uri mismatch"),
            TokenError::VerifierMismatch => oauth_error("invalid_grant", "invalid code verifier"),
            TokenError::UnsupportedGrant => {
                oauth_error("unsupported_grant_type", "grant_type is not supported")
            }
        }
    }

    fn issue(&self, _grant: &Grant) -> Response {
        let refresh = format!("rt.fake{}", random_hex(16));
        lock(&self.refresh).insert(refresh.clone());
        Json(
            json!({"access_token": self.issue_access(), "token_type": "bearer",
            "expires_in": 14400, "refresh_token": refresh,
            "scope": "account_info.read files.content.read files.metadata.read",
            "uid": "12345", "account_id": "dbid:fake"}),
        )
        .into_response()
    }

    fn refresh(&self, f: &HashMap<String, String>) -> Response {
        let old = f.get("refresh_token").cloned().unwrap_or_default();
        if self.faults.revoke_refresh.load(Ordering::SeqCst) || !lock(&self.refresh).contains(&old)
        {
            return oauth_error("invalid_grant", "refresh token is invalid or revoked");
        }
        // Dropbox keeps the refresh token; only a new access token comes back.
        self.refreshes.fetch_add(1, Ordering::SeqCst);
        Json(json!({"access_token": self.issue_access(), "token_type": "bearer", "expires_in": 14400}))
            .into_response()
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
            oauth: OAuthServer::new(client_id, client_secret, DIALECT),
            email: "fake.user@example.com".into(),
            faults: Faults::default(),
            api_calls: AtomicU64::new(0),
            refreshes: AtomicU64::new(0),
            team: std::sync::atomic::AtomicBool::new(false),
            files: Mutex::default(),
            access: Mutex::default(),
            refresh: Mutex::default(),
            revoked: Mutex::default(),
            expired: Mutex::default(),
        });
        let router = Router::new()
            .route("/oauth2/authorize", get(oauth::authorize::<Dropbox>))
            .route("/oauth2/token", post(oauth::token::<Dropbox>))
            .route("/2/users/get_current_account", post(current_account))
            .route("/2/files/list_folder", post(files::list_folder))
            .route("/2/files/list_folder/continue", post(files::list_continue))
            .route("/2/files/search_v2", post(search::search))
            .route("/2/files/search/continue_v2", post(search::search_continue))
            .route("/2/auth/token/revoke", post(files::revoke))
            .route("/content/2/files/download", post(files::file_download))
            .route("/content/2/files/get_thumbnail_v2", post(files::thumbnail))
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
