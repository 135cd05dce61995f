//! A fake Zoom (OAuth 2.0 + API v2) on the documented wire shapes: `/oauth/authorize`
//! (approve at once or a consent page, through the shared [`super::oauth`]), `/oauth/token` (client credentials as HTTP Basic only;
//! authorization codes and `refresh_token` grants that always rotate: each refresh token works
//! once, a spent one is `{"reason": "Invalid Token!", "error": "invalid_request"}`),
//! `/oauth/revoke?token=` (`{"status": "success"}`), `/v2/users/me` (`email`, `timezone`,
//! `created_at`), `/v2/users/me/recordings` (`from` / `to` dates, a range of a month at most,
//! `page_size` up to 300, `next_page_token` paging, an empty token on the last page),
//! `/v2/meetings/{uuid}/recordings` (a UUID starting with `/` or holding `//` must be
//! double-encoded, as Zoom asks), and each file's
//! `download_url` (`/rec/download/{id}`, bearer or `access_token` required) redirecting to a
//! pre-signed storage URL that honours `Range`. Refused access tokens get `401` with code 124;
//! rate limits `429` with code 429 and `Retry-After`.
//!
//! Here: the state, the API gate and the OAuth side (through the shared [`super::oauth`]);
//! [`api`]: the recordings routes, download URLs and the storage host.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use base64::Engine;
use bytes::Bytes;
use serde_json::{Value, json};

mod api;

use super::oauth::{
    self, Authority, ConsentPage, Dialect, Grant, OAuthServer, TokenError, bearer, lock,
};
use super::{Faults, random_hex};
use crate::TestServer;

/// Zoom's authorization server: no PKCE, no scope parameter (scopes are the app's), a consent
/// page when switched on.
const DIALECT: Dialect = Dialect {
    code_prefix: "",
    code_bytes: 16,
    pkce: false,
    scope_required: false,
    redirect_optional: false,
    consent: Some(ConsentPage {
        title: "Zoom | Authorize app",
        heading: "Fake Zoom",
        prompt: "Ferry would like to view your cloud recordings",
        action: "/oauth/consent",
        allow: "Allow Zoom access",
        deny: "Decline",
    }),
};

/// One recording file of a meeting.
#[derive(Clone, Debug)]
pub struct ZoomFile {
    pub id: String,
    /// `MP4`, `M4A`, `CHAT`, `TRANSCRIPT`, `CC`, `TIMELINE`, ...
    pub file_type: String,
    pub recording_type: String,
    /// `completed` or `processing`.
    pub status: String,
    pub content: Bytes,
}

impl ZoomFile {
    /// A finished file of `file_type` (with Zoom's usual recording type for it).
    pub fn new(file_type: &str, content: impl Into<Bytes>) -> Self {
        let recording_type = match file_type {
            "MP4" => "shared_screen_with_speaker_view",
            "M4A" => "audio_only",
            "CHAT" => "chat_file",
            "TRANSCRIPT" => "audio_transcript",
            "TIMELINE" => "timeline",
            _ => "closed_caption",
        };
        let h = random_hex(16);
        Self {
            id: format!(
                "{}-{}-{}-{}-{}",
                &h[..8],
                &h[8..12],
                &h[12..16],
                &h[16..20],
                &h[20..]
            ),
            file_type: file_type.into(),
            recording_type: recording_type.into(),
            status: "completed".into(),
            content: content.into(),
        }
    }

    /// The same file, still being processed by Zoom (listed without a download).
    pub fn processing(mut self) -> Self {
        self.status = "processing".into();
        self
    }
}

#[derive(Clone, Debug)]
struct Meeting {
    uuid: String,
    topic: String,
    start_time: String,
    files: Vec<ZoomFile>,
}

/// The fake's state; tests add meetings and flip faults through it.
#[derive(Debug)]
pub struct ZoomState {
    /// The app, its codes and the consent page switch.
    pub oauth: OAuthServer,
    pub email: String,
    /// `users/me` `created_at` (the first year the root lists).
    pub created_at: Mutex<String>,
    pub faults: Faults,
    /// API calls answered (any status), download URLs included.
    pub api_calls: AtomicU64,
    /// Refresh grants honoured.
    pub refreshes: AtomicU64,
    /// `(from, to)` of every recordings call, in order.
    pub ranges: Mutex<Vec<(String, String)>>,
    /// Tokens revoked through `/oauth/revoke`.
    pub revoked: Mutex<Vec<String>>,
    meetings: Mutex<Vec<Meeting>>,
    /// Live access token -> its refresh token.
    access: Mutex<HashMap<String, String>>,
    refresh: Mutex<HashSet<String>>,
    /// Page tokens -> offset.
    pages: Mutex<HashMap<String, usize>>,
    /// Pre-signed storage links -> file id.
    links: Mutex<HashMap<String, String>>,
    base: OnceLock<String>,
}

impl ZoomState {
    fn base(&self) -> &str {
        self.base.get().map(String::as_str).unwrap_or("")
    }

    /// Adds a meeting (its UUID is the caller's: Zoom's may hold `/`, `+`, `=`) recorded at
    /// `start_time` (`2026-03-04T10:00:00Z`); returns its files' ids.
    pub fn add_meeting(
        &self,
        uuid: &str,
        topic: &str,
        start_time: &str,
        files: Vec<ZoomFile>,
    ) -> Vec<String> {
        let ids = files.iter().map(|f| f.id.clone()).collect();
        lock(&self.meetings).push(Meeting {
            uuid: uuid.into(),
            topic: topic.into(),
            start_time: start_time.into(),
            files,
        });
        ids
    }

    /// Expires one access token (as after its hour); its refresh token stays usable.
    pub fn expire(&self, token: &str) {
        lock(&self.access).remove(token);
    }

    /// Whether `token` is a live access token.
    pub fn access_token_live(&self, token: &str) -> bool {
        lock(&self.access).contains_key(token)
    }

    /// Whether `token` is a live (unspent) refresh token.
    pub fn refresh_token_live(&self, token: &str) -> bool {
        lock(&self.refresh).contains(token)
    }

    fn file_json(&self, m: &Meeting, f: &ZoomFile) -> Value {
        let mut v = json!({"id": f.id, "meeting_id": m.uuid, "recording_start": m.start_time,
            "recording_end": m.start_time, "file_type": f.file_type,
            "file_extension": f.file_type, "file_size": f.content.len(),
            "play_url": format!("{}/rec/play/{}", self.base(), f.id),
            "recording_type": f.recording_type, "status": f.status});
        if f.status == "completed" {
            v["download_url"] = json!(format!("{}/rec/download/{}", self.base(), f.id));
        }
        v
    }

    fn meeting_json(&self, m: &Meeting) -> Value {
        let total: usize = m.files.iter().map(|f| f.content.len()).sum();
        json!({"uuid": m.uuid, "id": 81_234_567_890u64, "account_id": "acc1", "host_id": "u1",
            "topic": m.topic, "type": 2, "start_time": m.start_time, "timezone": "UTC",
            "duration": 30, "total_size": total, "recording_count": m.files.len(),
            "share_url": format!("{}/rec/share/x", self.base()),
            "recording_files": m.files.iter().map(|f| self.file_json(m, f)).collect::<Vec<_>>()})
    }

    /// The API gate (faults, then the token): the refusal, if any.
    fn gate(&self, headers: &HeaderMap, q: &HashMap<String, String>) -> Option<Response> {
        self.api_calls.fetch_add(1, Ordering::SeqCst);
        if let Some(wait) = self.faults.take_too_many() {
            return Some(
                (
                    StatusCode::TOO_MANY_REQUESTS,
                    [
                        (header::RETRY_AFTER, wait),
                        (
                            header::HeaderName::from_static("x-ratelimit-type"),
                            header::HeaderValue::from_static("QPS"),
                        ),
                    ],
                    Json(json!({"code": 429, "message": "You have reached the maximum per-second rate limit for this API. Try again later."})),
                )
                    .into_response(),
            );
        }
        if Faults::take(&self.faults.server_error) {
            return Some(api_error(500, 500, "Internal server error."));
        }
        let token = bearer(headers).or_else(|| q.get("access_token").map(String::as_str));
        let live = token.is_some_and(|t| self.access_token_live(t));
        if !live || self.faults.expire_access.load(Ordering::SeqCst) {
            return Some(api_error(401, 124, "Invalid access token."));
        }
        None
    }
}

fn api_error(status: u16, code: u32, message: &str) -> Response {
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        Json(json!({"code": code, "message": message})),
    )
        .into_response()
}

fn oauth_error(error: &str, reason: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"reason": reason, "error": error})),
    )
        .into_response()
}

type Z = State<Arc<ZoomState>>;
type Q = Query<HashMap<String, String>>;

/// Whether the request carries the app's credentials as HTTP Basic.
fn basic_ok(z: &ZoomState, headers: &HeaderMap) -> bool {
    let want = base64::engine::general_purpose::STANDARD
        .encode(format!("{}:{}", z.oauth.client_id, z.oauth.client_secret));
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        == Some(want.as_str())
}

fn issue(z: &ZoomState) -> Response {
    let access = random_hex(24);
    let refresh = random_hex(32);
    lock(&z.access).insert(access.clone(), refresh.clone());
    lock(&z.refresh).insert(refresh.clone());
    Json(
        json!({"access_token": access, "token_type": "bearer", "refresh_token": refresh,
        "expires_in": 3599, "scope": "cloud_recording:read:list_user_recordings user:read:user"}),
    )
    .into_response()
}

impl Authority for ZoomState {
    fn oauth(&self) -> &OAuthServer {
        &self.oauth
    }

    fn account(&self) -> &str {
        &self.email
    }

    fn token_refusal(&self, why: TokenError) -> Response {
        match why {
            TokenError::InvalidClient => (
                StatusCode::UNAUTHORIZED,
                Json(json!({"reason": "Invalid client_id or client_secret", "error": "invalid_client"})),
            )
                .into_response(),
            TokenError::RedirectMismatch => oauth_error("invalid_request", "Redirect URI mismatch."),
            TokenError::UnsupportedGrant => {
                oauth_error("unsupported_grant_type", "Unsupported grant type")
            }
            TokenError::UnknownCode | TokenError::VerifierMismatch => {
                oauth_error("invalid_grant", "Invalid authorization code")
            }
        }
    }

    fn issue(&self, _grant: &Grant) -> Response {
        issue(self)
    }

    fn refresh(&self, f: &HashMap<String, String>) -> Response {
        let old = f.get("refresh_token").cloned().unwrap_or_default();
        let live = lock(&self.refresh).remove(&old);
        if !live || self.faults.revoke_refresh.load(Ordering::SeqCst) {
            return oauth_error("invalid_request", "Invalid Token!");
        }
        // The old pair is retired with the refresh token.
        lock(&self.access).retain(|_, r| *r != old);
        self.refreshes.fetch_add(1, Ordering::SeqCst);
        issue(self)
    }
}

/// Zoom's token endpoint: the app's credentials only as HTTP Basic, then the shared grants.
async fn token(
    State(z): Z,
    headers: HeaderMap,
    Form(f): Form<HashMap<String, String>>,
) -> Response {
    if !basic_ok(&z, &headers) {
        return z.token_refusal(TokenError::InvalidClient);
    }
    match f.get("grant_type").map(String::as_str) {
        Some("authorization_code") => match z.oauth.redeem(&f) {
            Ok(grant) => z.issue(&grant),
            Err(why) => z.token_refusal(why),
        },
        Some("refresh_token") => Authority::refresh(&*z, &f),
        _ => z.token_refusal(TokenError::UnsupportedGrant),
    }
}

async fn revoke(State(z): Z, headers: HeaderMap, Query(q): Q) -> Response {
    if !basic_ok(&z, &headers) {
        return oauth_error("invalid_client", "Invalid client_id or client_secret");
    }
    let Some(token) = q.get("token").cloned() else {
        return oauth_error("invalid_request", "Missing token");
    };
    if let Some(refresh) = lock(&z.access).remove(&token) {
        lock(&z.refresh).remove(&refresh);
    } else if lock(&z.refresh).remove(&token) {
        lock(&z.access).retain(|_, r| *r != token);
    }
    lock(&z.revoked).push(token);
    Json(json!({"status": "success"})).into_response()
}

async fn me(State(z): Z, headers: HeaderMap, Query(q): Q) -> Response {
    if let Some(r) = z.gate(&headers, &q) {
        return r;
    }
    Json(
        json!({"id": "u1", "first_name": "Fake", "last_name": "Zoomer", "email": z.email,
        "type": 2, "timezone": "Europe/Berlin", "account_id": "acc1",
        "created_at": *lock(&z.created_at), "status": "active"}),
    )
    .into_response()
}

/// A running fake Zoom.
#[derive(Debug)]
pub struct FakeZoom {
    pub server: TestServer,
    pub state: Arc<ZoomState>,
}

impl FakeZoom {
    /// Starts a fake Zoom knowing the app `client_id` / `client_secret`.
    pub async fn start(client_id: &str, client_secret: &str) -> Self {
        let state = Arc::new(ZoomState {
            oauth: OAuthServer::new(client_id, client_secret, DIALECT),
            email: "zoomer@example.com".into(),
            created_at: Mutex::new("2019-05-01T08:00:00Z".into()),
            faults: Faults::default(),
            api_calls: AtomicU64::new(0),
            refreshes: AtomicU64::new(0),
            ranges: Mutex::default(),
            revoked: Mutex::default(),
            meetings: Mutex::default(),
            access: Mutex::default(),
            refresh: Mutex::default(),
            pages: Mutex::default(),
            links: Mutex::default(),
            base: OnceLock::new(),
        });
        let router = Router::new()
            .route("/oauth/authorize", get(oauth::authorize::<ZoomState>))
            .route("/oauth/consent", post(oauth::consent::<ZoomState>))
            .route("/oauth/token", post(token))
            .route("/oauth/revoke", post(revoke))
            .route("/v2/users/me", get(me))
            .route("/v2/users/me/recordings", get(api::recordings))
            .route(
                "/v2/meetings/{uuid}/recordings",
                get(api::meeting_recordings),
            )
            .route("/rec/download/{id}", get(api::rec_download))
            .route("/storage/{link}", get(api::storage))
            .with_state(state.clone());
        let server = TestServer::start(router).await;
        let _ = state.base.set(server.url(""));
        Self { server, state }
    }

    /// `FERRY_ZOOM_AUTH_URL`.
    pub fn auth_url(&self) -> String {
        self.server.url("/oauth/authorize")
    }
    /// `FERRY_ZOOM_TOKEN_URL`.
    pub fn token_url(&self) -> String {
        self.server.url("/oauth/token")
    }
    /// `FERRY_ZOOM_API_URL`.
    pub fn api_url(&self) -> String {
        self.server.url("")
    }
}
