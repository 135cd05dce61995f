//! A fake Box (API 2.0 and Box's OAuth 2.0): `/api/oauth2/authorize` (approve at once or a
//! consent page), `/oauth2/token` (authorization code; refresh grants that always rotate: each
//! refresh token works once, a reused one is `invalid_grant`), `/oauth2/revoke`,
//! `/2.0/users/me`, `/2.0/folders/{id}/items` with `fields`, offset paging (capped at 300,000
//! like Box) and marker paging (`usemarker=true`), `/2.0/files/{id}`, `/2.0/files/{id}/content`
//! (a `302` to a pre-authenticated download URL on this server, which honours `Range`), and
//! `/2.0/files/{id}/thumbnail.{jpg,png}` (`200` image, `202` + `Location` + `Retry-After` while
//! "generating", `302` to a placeholder for types without thumbnails). Refused access tokens get
//! Box's bare `401` with `WWW-Authenticate`; rate limits Box's `429` with `Retry-After`.
//!
//! Here: the state, the API gate and the OAuth side (through the shared [`super::oauth`]);
//! [`api`]: the API 2.0 routes and the download host.

mod api;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::oauth::{
    self, Authority, ConsentPage, Dialect, Grant, OAuthServer, TokenError, bearer, lock,
};
use super::{Faults, random_hex};
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
    /// The app, its codes and the consent page switch.
    pub oauth: OAuthServer,
    /// `users/me` `login`.
    pub login: String,
    pub faults: Faults,
    /// Thumbnails answer `202` (still generating) with a placeholder `Location`.
    pub thumbnail_pending: AtomicBool,
    /// API calls answered (any status).
    pub api_calls: AtomicU64,
    /// Refresh grants honoured.
    pub refreshes: AtomicU64,
    next_id: AtomicU64,
    items: Mutex<Vec<BoxItem>>,
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
        if let Some(wait) = self.faults.take_too_many() {
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
        let token = bearer(headers);
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

/// Box's authorization server: no PKCE, `redirect_uri` optional on the token request, and
/// every refresh rotates (each refresh token works once).
const DIALECT: Dialect = Dialect {
    code_prefix: "",
    code_bytes: 16,
    pkce: false,
    scope_required: false,
    redirect_optional: true,
    consent: Some(ConsentPage {
        title: "Box | Grant Access",
        heading: "Fake Box",
        prompt: "Ferry would like to read your Box files",
        action: "/api/oauth2/consent",
        allow: "Grant access to Box",
        deny: "Deny",
    }),
};

impl Authority for BoxState {
    fn oauth(&self) -> &OAuthServer {
        &self.oauth
    }

    fn account(&self) -> &str {
        &self.login
    }

    fn token_refusal(&self, why: TokenError) -> Response {
        match why {
            TokenError::InvalidClient => {
                oauth_error("invalid_client", "The client credentials are invalid")
            }
            TokenError::UnknownCode | TokenError::VerifierMismatch => oauth_error(
                "invalid_grant",
                "Auth code doesn't exist or is invalid for the client",
            ),
            TokenError::RedirectMismatch => {
                oauth_error("invalid_grant", "The redirect URI is invalid")
            }
            TokenError::UnsupportedGrant => {
                oauth_error("unsupported_grant_type", "Grant type is not supported")
            }
        }
    }

    fn issue(&self, _grant: &Grant) -> Response {
        issue(self)
    }

    fn refresh(&self, f: &HashMap<String, String>) -> Response {
        let old = f.get("refresh_token").cloned().unwrap_or_default();
        // One use per refresh token: it is spent whether or not the answer arrives.
        let live = lock(&self.refresh).remove(&old);
        if !live || self.faults.revoke_refresh.load(Ordering::SeqCst) {
            return oauth_error("invalid_grant", "Refresh token has expired");
        }
        lock(&self.spent).insert(old);
        self.refreshes.fetch_add(1, Ordering::SeqCst);
        issue(self)
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

async fn revoke(State(b): B, Form(f): Form<HashMap<String, String>>) -> Response {
    if !b.oauth.client_matches(&f) {
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
            oauth: OAuthServer::new(client_id, client_secret, DIALECT),
            login: "fake.user@example.com".into(),
            faults: Faults::default(),
            thumbnail_pending: AtomicBool::new(false),
            api_calls: AtomicU64::new(0),
            refreshes: AtomicU64::new(0),
            next_id: AtomicU64::new(0),
            items: Mutex::default(),
            access: Mutex::default(),
            refresh: Mutex::default(),
            spent: Mutex::default(),
            links: Mutex::default(),
            revoked: Mutex::default(),
            base: OnceLock::new(),
        });
        let router = Router::new()
            .route("/api/oauth2/authorize", get(oauth::authorize::<BoxState>))
            .route("/api/oauth2/consent", post(oauth::consent::<BoxState>))
            .route("/oauth2/token", post(oauth::token::<BoxState>))
            .route("/oauth2/revoke", post(revoke))
            .route("/2.0/users/me", get(api::me))
            .route("/2.0/folders/{id}/items", get(api::folder_items))
            .route("/2.0/files/{id}", get(api::file))
            .route("/2.0/files/{id}/{part}", get(api::file_part))
            .route("/dl/{link}/download", get(api::dl))
            .route("/placeholder.png", get(api::placeholder))
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
mod tests;
