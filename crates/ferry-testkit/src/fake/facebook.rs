//! A fake Facebook (Facebook Login + Graph API) on the documented wire shapes, under any
//! version prefix (`/v25.0/...`): the login dialog `/{v}/dialog/oauth` (approve at once or a
//! consent page, through the shared [`super::oauth`]; the requested `scope` is recorded), `/{v}/oauth/access_token` (the code
//! exchange, GET or POST, answering a short-lived token, and `grant_type=fb_exchange_token`
//! answering the long-lived one), `/{v}/me`, `/{v}/me/albums`, `/{v}/{album}/photos` and
//! `/{v}/{photo}?fields=images` (`limit`, cursor paging with `before` / `after` on every page
//! and `next` only while there is more), `DELETE /{v}/me/permissions`, and the CDN URLs of each
//! photo's renditions (`Range` honoured). Every Graph call must carry a valid
//! `appsecret_proof` (the app has "Require App Secret" on). Refused tokens get Graph's
//! `OAuthException` code 190; rate limits Graph's code 17 ("User request limit reached").

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use bytes::Bytes;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use super::oauth::{
    self, Authority, AuthorizeError, ConsentPage, Dialect, Grant, OAuthServer, TokenError, lock,
};
use super::{Faults, download, random_hex};
use crate::TestServer;

/// Facebook Login's dialog: a scope is required, no PKCE in the web code flow.
const DIALECT: Dialect = Dialect {
    code_prefix: "AQ",
    code_bytes: 24,
    pkce: false,
    scope_required: true,
    redirect_optional: false,
    consent: Some(ConsentPage {
        title: "Log in with Facebook",
        heading: "Fake Facebook",
        prompt: "Ferry is requesting access to your photos and email address",
        action: "/dialog/consent",
        allow: "Continue as Fake Facebook User",
        deny: "Cancel",
    }),
};

/// The widths of a photo's renditions; the first (largest) holds the photo's own bytes.
const WIDTHS: [u64; 3] = [2048, 720, 130];

#[derive(Clone, Debug)]
struct Photo {
    id: String,
    album: String,
    caption: Option<String>,
    /// One body per width in [`WIDTHS`].
    renditions: Vec<Bytes>,
}

/// The fake's state; tests add albums and photos and flip faults through it.
#[derive(Debug)]
pub struct FacebookState {
    /// The app, its codes and the consent page switch.
    pub oauth: OAuthServer,
    pub email: String,
    pub faults: Faults,
    /// Graph calls answered (any status).
    pub api_calls: AtomicU64,
    /// Long-lived tokens issued by `fb_exchange_token`.
    pub long_lived: AtomicU64,
    /// The `scope` of the last login dialog.
    pub last_scope: Mutex<Option<String>>,
    /// Whether `DELETE /me/permissions` was called.
    pub permissions_deleted: AtomicBool,
    next_id: AtomicU64,
    albums: Mutex<Vec<(String, String)>>,
    photos: Mutex<Vec<Photo>>,
    tokens: Mutex<HashSet<String>>,
    base: OnceLock<String>,
}

/// `appsecret_proof` of `token`: HMAC-SHA256 keyed with the app secret, hex.
pub fn appsecret_proof(secret: &str, token: &str) -> String {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("any key length"));
    mac.update(token.as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl FacebookState {
    fn base(&self) -> &str {
        self.base.get().map(String::as_str).unwrap_or("")
    }

    fn id(&self) -> String {
        (10_150_000_000_000 + self.next_id.fetch_add(1, Ordering::SeqCst)).to_string()
    }

    /// Adds an album; returns its id.
    pub fn add_album(&self, name: &str) -> String {
        let id = self.id();
        lock(&self.albums).push((id.clone(), name.into()));
        id
    }

    /// Adds a photo to `album` whose largest rendition is `content` (the smaller ones are
    /// other bytes); returns its id.
    pub fn add_photo(
        &self,
        album: &str,
        caption: Option<&str>,
        content: impl Into<Bytes>,
    ) -> String {
        let id = self.id();
        let content = content.into();
        let renditions = WIDTHS
            .iter()
            .enumerate()
            .map(|(i, w)| match i {
                0 => content.clone(),
                _ => Bytes::from(format!("rendition {w} of {id}")),
            })
            .collect();
        lock(&self.photos).push(Photo {
            id: id.clone(),
            album: album.into(),
            caption: caption.map(str::to_owned),
            renditions,
        });
        id
    }

    /// Expires every token (as when the person changes their password).
    pub fn expire_all(&self) {
        lock(&self.tokens).clear();
    }

    fn photo_json(&self, p: &Photo) -> Value {
        let images: Vec<Value> = WIDTHS
            .iter()
            .enumerate()
            .map(|(i, w)| {
                json!({"width": w, "height": w * 3 / 4,
                    "source": format!("{}/cdn/{}/{i}.jpg", self.base(), p.id)})
            })
            .collect();
        let mut v = json!({"id": p.id, "created_time": "2026-02-03T04:05:06+0000",
            "width": WIDTHS[0], "height": WIDTHS[0] * 3 / 4, "images": images,
            "icon": "https://static.xx.fbcdn.net/rsrc.php/v3/yz/r/StEh3RhPvjk.gif"});
        if let Some(c) = &p.caption {
            v["name"] = json!(c);
        }
        v
    }

    /// The Graph gate (faults, proof, token): the refusal, if any.
    fn gate(&self, headers: &HeaderMap, q: &HashMap<String, String>) -> Option<Response> {
        self.api_calls.fetch_add(1, Ordering::SeqCst);
        if Faults::take(&self.faults.too_many) {
            return Some(graph_error(
                400,
                17,
                "OAuthException",
                "(#17) User request limit reached",
            ));
        }
        if Faults::take(&self.faults.server_error) {
            return Some(graph_error(
                500,
                2,
                "OAuthException",
                "An unexpected error has occurred. Please retry your request later.",
            ));
        }
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("OAuth "))
            })
            .or_else(|| q.get("access_token").map(String::as_str));
        let Some(token) = token else {
            return Some(graph_error(
                400,
                2500,
                "OAuthException",
                "An active access token must be used to query information about the current user.",
            ));
        };
        if q.get("appsecret_proof") != Some(&appsecret_proof(&self.oauth.client_secret, token)) {
            return Some(graph_error(
                400,
                100,
                "GraphMethodException",
                "API calls from the server require an appsecret_proof argument",
            ));
        }
        if !lock(&self.tokens).contains(token) || self.faults.expire_access.load(Ordering::SeqCst) {
            return Some(graph_error(
                400,
                190,
                "OAuthException",
                "Error validating access token: Session has expired.",
            ));
        }
        None
    }
}

fn graph_error(status: u16, code: u32, kind: &str, message: &str) -> Response {
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
        Json(
            json!({"error": {"message": message, "type": kind, "code": code,
            "fbtrace_id": random_hex(8)}}),
        ),
    )
        .into_response()
}

type F = State<Arc<FacebookState>>;
type Q = Query<HashMap<String, String>>;

impl Authority for FacebookState {
    fn oauth(&self) -> &OAuthServer {
        &self.oauth
    }

    fn account(&self) -> &str {
        &self.email
    }

    fn check_authorize(&self, q: &HashMap<String, String>) -> Result<(), Response> {
        *lock(&self.last_scope) = q.get("scope").cloned();
        Ok(())
    }

    fn authorize_refusal(&self, why: AuthorizeError) -> Response {
        let page = match why {
            AuthorizeError::UnknownClient => "Invalid App ID",
            AuthorizeError::MissingParameter => "URL blocked",
            _ => "Invalid request",
        };
        (StatusCode::BAD_REQUEST, page).into_response()
    }

    fn token_refusal(&self, why: TokenError) -> Response {
        let message = match why {
            TokenError::InvalidClient => "Error validating client secret.",
            TokenError::RedirectMismatch => {
                "Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request"
            }
            TokenError::UnknownCode | TokenError::VerifierMismatch => {
                "Invalid verification code format."
            }
            TokenError::UnsupportedGrant => "Unsupported grant_type.",
        };
        let code = if why == TokenError::InvalidClient {
            1
        } else {
            100
        };
        graph_error(400, code, "OAuthException", message)
    }

    fn issue(&self, _grant: &Grant) -> Response {
        // The web code flow answers a short-lived token.
        new_token(self, 5_400)
    }

    fn refresh(&self, _f: &HashMap<String, String>) -> Response {
        self.token_refusal(TokenError::UnsupportedGrant)
    }
}

fn new_token(f: &FacebookState, expires_in: u64) -> Response {
    let token = format!("EAA{}", random_hex(24));
    lock(&f.tokens).insert(token.clone());
    Json(json!({"access_token": token, "token_type": "bearer", "expires_in": expires_in}))
        .into_response()
}

/// The code exchange and the long-lived token exchange; GET (as documented) or a form POST.
async fn access_token(State(f): F, method: Method, Query(q): Q, body: Bytes) -> Response {
    let mut p = q;
    if method == Method::POST {
        p.extend(url::form_urlencoded::parse(&body).into_owned());
    }
    if !f.oauth.client_matches(&p) {
        return f.token_refusal(TokenError::InvalidClient);
    }
    if p.get("grant_type").map(String::as_str) == Some("fb_exchange_token") {
        let short = p.get("fb_exchange_token").cloned().unwrap_or_default();
        if !lock(&f.tokens).contains(&short) {
            return graph_error(400, 190, "OAuthException", "Error validating access token.");
        }
        f.long_lived.fetch_add(1, Ordering::SeqCst);
        return new_token(&f, 5_183_944);
    }
    match f.oauth.redeem(&p) {
        Ok(grant) => f.issue(&grant),
        Err(why) => f.token_refusal(why),
    }
}

async fn me(State(f): F, headers: HeaderMap, Query(q): Q) -> Response {
    if let Some(r) = f.gate(&headers, &q) {
        return r;
    }
    Json(json!({"id": "100001", "name": "Fake Facebook User", "email": f.email})).into_response()
}

/// One page of `all` from the `after` cursor, in Graph's `data` + `paging` shape.
fn paged(f: &FacebookState, edge: &str, all: Vec<Value>, q: &HashMap<String, String>) -> Response {
    let limit = q
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(25)
        .clamp(1, 100);
    let start = match q.get("after") {
        None => 0,
        Some(a) => match a.strip_prefix("QVFH").and_then(|n| n.parse::<usize>().ok()) {
            Some(n) => n,
            None => return graph_error(400, 100, "OAuthException", "Invalid cursor"),
        },
    };
    let data: Vec<Value> = all.iter().skip(start).take(limit).cloned().collect();
    let end = start + data.len();
    let mut paging =
        json!({"cursors": {"before": format!("QVFH{start}"), "after": format!("QVFH{end}")}});
    if end < all.len() {
        paging["next"] = json!(format!(
            "{}/v25.0/{edge}?limit={limit}&after=QVFH{end}",
            f.base()
        ));
    }
    Json(json!({"data": data, "paging": paging})).into_response()
}

async fn albums(State(f): F, headers: HeaderMap, Query(q): Q) -> Response {
    if let Some(r) = f.gate(&headers, &q) {
        return r;
    }
    let all = lock(&f.albums)
        .iter()
        .map(|(id, name)| {
            json!({"id": id, "name": name, "type": "normal",
            "created_time": "2026-01-01T00:00:00+0000"})
        })
        .collect();
    paged(&f, "me/albums", all, &q)
}

async fn photos(
    State(f): F,
    Path((_, album)): Path<(String, String)>,
    headers: HeaderMap,
    Query(q): Q,
) -> Response {
    if let Some(r) = f.gate(&headers, &q) {
        return r;
    }
    if !lock(&f.albums).iter().any(|(id, _)| *id == album) {
        return graph_error(
            400,
            100,
            "GraphMethodException",
            "Unsupported get request. Object does not exist.",
        );
    }
    let all = lock(&f.photos)
        .iter()
        .filter(|p| p.album == album)
        .map(|p| f.photo_json(p))
        .collect();
    paged(&f, &format!("{album}/photos"), all, &q)
}

async fn node(
    State(f): F,
    Path((_, id)): Path<(String, String)>,
    headers: HeaderMap,
    Query(q): Q,
) -> Response {
    if let Some(r) = f.gate(&headers, &q) {
        return r;
    }
    match lock(&f.photos).iter().find(|p| p.id == id) {
        Some(p) => {
            let full = f.photo_json(p);
            Json(json!({"id": p.id, "images": full["images"]})).into_response()
        }
        None => graph_error(
            400,
            100,
            "GraphMethodException",
            "Unsupported get request. Object does not exist.",
        ),
    }
}

async fn delete_permissions(State(f): F, headers: HeaderMap, Query(q): Q) -> Response {
    if let Some(r) = f.gate(&headers, &q) {
        return r;
    }
    f.permissions_deleted.store(true, Ordering::SeqCst);
    // Deauthorizing the app invalidates every token it holds for the person.
    lock(&f.tokens).clear();
    Json(json!({"success": true})).into_response()
}

async fn cdn(
    State(f): F,
    Path((id, file)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let index = file
        .strip_suffix(".jpg")
        .and_then(|i| i.parse::<usize>().ok());
    let body = lock(&f.photos)
        .iter()
        .find(|p| p.id == id)
        .and_then(|p| index.and_then(|i| p.renditions.get(i)).cloned());
    match body {
        Some(b) => download(b, "image/jpeg", &headers, &f.faults),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// A running fake Facebook.
#[derive(Debug)]
pub struct FakeFacebook {
    pub server: TestServer,
    pub state: Arc<FacebookState>,
}

impl FakeFacebook {
    /// Starts a fake Facebook knowing the app `client_id` / `client_secret`.
    pub async fn start(client_id: &str, client_secret: &str) -> Self {
        let state = Arc::new(FacebookState {
            oauth: OAuthServer::new(client_id, client_secret, DIALECT),
            email: "fb.user@example.com".into(),
            faults: Faults::default(),
            api_calls: AtomicU64::new(0),
            long_lived: AtomicU64::new(0),
            last_scope: Mutex::default(),
            permissions_deleted: AtomicBool::new(false),
            next_id: AtomicU64::new(0),
            albums: Mutex::default(),
            photos: Mutex::default(),
            tokens: Mutex::default(),
            base: OnceLock::new(),
        });
        let router = Router::new()
            .route("/{v}/dialog/oauth", get(oauth::authorize::<FacebookState>))
            .route("/dialog/consent", post(oauth::consent::<FacebookState>))
            .route(
                "/{v}/oauth/access_token",
                get(access_token).post(access_token),
            )
            .route("/{v}/me", get(me))
            .route("/{v}/me/albums", get(albums))
            .route("/{v}/me/permissions", delete(delete_permissions))
            .route("/{v}/{id}/photos", get(photos))
            .route("/{v}/{id}", get(node))
            .route("/cdn/{id}/{file}", get(cdn))
            .with_state(state.clone());
        let server = TestServer::start(router).await;
        let _ = state.base.set(server.url(""));
        Self { server, state }
    }

    /// `FERRY_FACEBOOK_AUTH_URL`.
    pub fn auth_url(&self) -> String {
        self.server.url("/v25.0/dialog/oauth")
    }
    /// `FERRY_FACEBOOK_API_URL`.
    pub fn api_url(&self) -> String {
        self.server.url("")
    }
}
