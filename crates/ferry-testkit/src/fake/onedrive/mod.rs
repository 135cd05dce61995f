//! A fake Microsoft identity platform v2.0 + Microsoft Graph v1.0 for OneDrive and SharePoint:
//! `/common/oauth2/v2.0/authorize` (PKCE S256, `offline_access` required for a refresh token),
//! `/common/oauth2/v2.0/token` (code and refresh grants; every refresh returns a new refresh
//! token, and with `one_use_refresh` the old one is refused as `invalid_grant`), `/v1.0/me`,
//! `/me/drive`, `/me/drives`, `/me/drive/sharedWithMe` (items with `remoteItem`), children of a
//! drive's root or of a folder (`$top`, `$skiptoken` paging with an absolute `@odata.nextLink`,
//! `$expand=thumbnails`), item metadata, `/content` as a `302` to a pre-authenticated download
//! URL that honours `Range`, SharePoint `sites?search=`, `me/followedSites` and a site's
//! document libraries (`sites/{id}/drives`). Refused tokens get Graph's
//! `InvalidAuthenticationToken` 401; rate limits its `TooManyRequests` 429 with `Retry-After`.
//!
//! Here: the state, the API gate and the identity platform (through the shared
//! [`super::oauth`]); [`graph`]: the Graph routes and the download host.

mod graph;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use bytes::Bytes;
use serde_json::{Value, json};

use super::oauth::{
    self, Authority, AuthorizeError, ConsentPage, Dialect, Grant, OAuthServer, TokenError, bearer,
    lock,
};
use super::{Faults, random_hex};
use crate::TestServer;

/// A drive: the user's OneDrive, or a SharePoint document library.
#[derive(Clone, Debug)]
pub struct GraphDrive {
    pub id: String,
    pub name: String,
    /// `business` (the user's OneDrive) or `documentLibrary`.
    pub drive_type: &'static str,
    /// The SharePoint site of a document library.
    pub site: Option<String>,
}

/// A file or folder.
#[derive(Clone, Debug)]
pub struct GraphItem {
    pub id: String,
    pub drive: String,
    pub name: String,
    /// The parent folder's id, or `root`.
    pub parent: String,
    pub folder: bool,
    pub content: Bytes,
    pub mime: String,
    /// Listed under `me/drive/sharedWithMe` (it lives in someone else's drive).
    pub shared_with_me: bool,
}

/// The fake's state; tests add drives, sites and items and flip faults through it.
#[derive(Debug)]
pub struct Graph {
    /// The app, its codes and the consent page switch.
    pub oauth: OAuthServer,
    /// `me` `mail`.
    pub mail: String,
    pub faults: Faults,
    /// A refresh token works once (otherwise old ones stay valid, as Microsoft's usually do).
    pub one_use_refresh: AtomicBool,
    /// API calls answered (any status).
    pub api_calls: AtomicU64,
    /// Refresh grants honoured.
    pub refreshes: AtomicU64,
    /// The user's own OneDrive.
    pub my_drive: String,
    next_id: AtomicU64,
    drives: Mutex<Vec<GraphDrive>>,
    sites: Mutex<Vec<(String, String)>>,
    items: Mutex<Vec<GraphItem>>,
    access: Mutex<HashSet<String>>,
    refresh: Mutex<HashSet<String>>,
    links: Mutex<HashMap<String, String>>,
    base: OnceLock<String>,
}

impl Graph {
    fn base(&self) -> &str {
        self.base.get().map(String::as_str).unwrap_or("")
    }

    fn new_item_id(&self) -> String {
        format!(
            "01{:030X}",
            0xABC0_0000 + self.next_id.fetch_add(1, Ordering::SeqCst)
        )
    }

    /// Adds a document library of a new SharePoint site named `site`; returns (site, drive).
    pub fn add_site_library(&self, site: &str, library: &str) -> (String, String) {
        let site_id = format!("contoso.sharepoint.com,{},{}", random_hex(8), random_hex(8));
        lock(&self.sites).push((site_id.clone(), site.into()));
        let drive = format!("b!{}", random_hex(12));
        lock(&self.drives).push(GraphDrive {
            id: drive.clone(),
            name: library.into(),
            drive_type: "documentLibrary",
            site: Some(site_id.clone()),
        });
        (site_id, drive)
    }

    fn add(&self, item: GraphItem) -> String {
        let id = item.id.clone();
        lock(&self.items).push(item);
        id
    }

    /// Adds a file to `drive` under `parent` (`root` or a folder id).
    pub fn add_file(
        &self,
        drive: &str,
        parent: &str,
        name: &str,
        mime: &str,
        content: impl Into<Bytes>,
    ) -> String {
        self.add(GraphItem {
            id: self.new_item_id(),
            drive: drive.into(),
            name: name.into(),
            parent: parent.into(),
            folder: false,
            content: content.into(),
            mime: mime.into(),
            shared_with_me: false,
        })
    }

    /// Adds a folder.
    pub fn add_folder(&self, drive: &str, parent: &str, name: &str) -> String {
        self.add(GraphItem {
            id: self.new_item_id(),
            drive: drive.into(),
            name: name.into(),
            parent: parent.into(),
            folder: true,
            content: Bytes::new(),
            mime: String::new(),
            shared_with_me: false,
        })
    }

    /// Adds a file in someone else's drive, shared with the user.
    pub fn add_shared_with_me(&self, name: &str, mime: &str, content: impl Into<Bytes>) -> String {
        let other = format!("b!{}", random_hex(12));
        self.add(GraphItem {
            id: self.new_item_id(),
            drive: other,
            name: name.into(),
            parent: "root".into(),
            folder: false,
            content: content.into(),
            mime: mime.into(),
            shared_with_me: true,
        })
    }

    /// Whether `token` is a live access token.
    pub fn access_token_live(&self, token: &str) -> bool {
        lock(&self.access).contains(token)
    }

    /// Expires one access token.
    pub fn expire(&self, token: &str) {
        lock(&self.access).remove(token);
    }

    /// Whether `token` is a live refresh token.
    pub fn refresh_token_live(&self, token: &str) -> bool {
        lock(&self.refresh).contains(token)
    }

    fn find(&self, drive: &str, id: &str) -> Option<GraphItem> {
        lock(&self.items)
            .iter()
            .find(|i| i.id == id && i.drive == drive)
            .cloned()
    }

    fn drive_json(&self, d: &GraphDrive) -> Value {
        json!({"id": d.id, "name": d.name, "driveType": d.drive_type,
            "owner": {"user": {"displayName": "Fake User"}},
            "webUrl": format!("https://contoso.sharepoint.com/{}", d.name)})
    }

    fn item_json(&self, i: &GraphItem, thumbnails: bool) -> Value {
        let mut v = json!({"id": i.id, "name": i.name, "size": i.content.len(),
            "lastModifiedDateTime": "2026-01-02T03:04:05Z",
            "parentReference": {"driveId": i.drive, "driveType": "business",
                "id": if i.parent == "root" { format!("{}-root", i.drive) } else { i.parent.clone() }}});
        if i.folder {
            let children = lock(&self.items)
                .iter()
                .filter(|c| c.parent == i.id)
                .count();
            v["folder"] = json!({"childCount": children});
        } else {
            v["file"] = json!({"mimeType": i.mime, "hashes": {}});
        }
        if thumbnails {
            v["thumbnails"] = if i.mime.starts_with("image/") {
                let url = format!("{}/thumbs/{}?sig={}", self.base(), i.id, random_hex(4));
                json!([{"id": "0", "medium": {"url": url, "width": 176, "height": 176}}])
            } else {
                json!([])
            };
        }
        v
    }

    /// The API gate (faults, then the bearer token): the refusal, if any.
    fn gate(&self, headers: &HeaderMap) -> Option<Response> {
        self.api_calls.fetch_add(1, Ordering::SeqCst);
        if let Some(wait) = self.faults.take_too_many() {
            let mut r = graph_error(429, "TooManyRequests", "Too many requests");
            r.headers_mut().insert(header::RETRY_AFTER, wait);
            return Some(r);
        }
        if Faults::take(&self.faults.server_error) {
            return Some(graph_error(
                503,
                "serviceNotAvailable",
                "Service unavailable",
            ));
        }
        let token = bearer(headers);
        let live = token.is_some_and(|t| self.access_token_live(t));
        if !live || self.faults.expire_access.load(Ordering::SeqCst) {
            return Some(graph_error(
                401,
                "InvalidAuthenticationToken",
                "Access token has expired or is not yet valid.",
            ));
        }
        None
    }
}

fn graph_error(status: u16, code: &str, message: &str) -> Response {
    let body = json!({"error": {"code": code, "message": message,
        "innerError": {"date": "2026-01-02T03:04:05", "request-id": random_hex(8)}}});
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        Json(body),
    )
        .into_response()
}

fn not_found() -> Response {
    graph_error(404, "itemNotFound", "The resource could not be found.")
}

fn oauth_error(error: &str, description: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"error": error, "error_description": description, "error_codes": [70000]})),
    )
        .into_response()
}

type G = State<Arc<Graph>>;
type Q = Query<HashMap<String, String>>;

/// The identity platform: PKCE, a scope required, a refresh token only with `offline_access`,
/// a new refresh token on every refresh (the old one refused under `one_use_refresh`).
const DIALECT: Dialect = Dialect {
    code_prefix: "M.C5_",
    code_bytes: 16,
    pkce: true,
    scope_required: true,
    redirect_optional: false,
    consent: Some(ConsentPage {
        title: "Permissions requested",
        heading: "Fake Microsoft",
        prompt: "Ferry would like to read your files",
        action: "/common/oauth2/v2.0/consent",
        allow: "Accept",
        deny: "Cancel",
    }),
};

impl Authority for Graph {
    fn oauth(&self) -> &OAuthServer {
        &self.oauth
    }

    fn account(&self) -> &str {
        &self.mail
    }

    fn authorize_refusal(&self, why: AuthorizeError) -> Response {
        let text = match why {
            AuthorizeError::UnknownClient => "AADSTS700016: application not found",
            AuthorizeError::MissingParameter => "AADSTS900144: missing parameter",
            AuthorizeError::ResponseType | AuthorizeError::NoScope => {
                "AADSTS900144: invalid request"
            }
            AuthorizeError::ChallengeMethod => "AADSTS501491: only S256",
        };
        (StatusCode::BAD_REQUEST, text).into_response()
    }

    fn token_refusal(&self, why: TokenError) -> Response {
        match why {
            TokenError::InvalidClient => oauth_error(
                "invalid_client",
                "AADSTS7000215: Invalid client secret provided.",
            ),
            TokenError::UnknownCode => oauth_error(
                "invalid_grant",
                "AADSTS70000: The provided authorization code is invalid.",
            ),
            TokenError::RedirectMismatch => oauth_error(
                "invalid_grant",
                "AADSTS50011: The redirect URI does not match.",
            ),
            TokenError::VerifierMismatch => oauth_error(
                "invalid_grant",
                "AADSTS501481: The code verifier does not match.",
            ),
            TokenError::UnsupportedGrant => oauth_error(
                "unsupported_grant_type",
                "AADSTS70003: unsupported grant type",
            ),
        }
    }

    fn issue(&self, grant: &Grant) -> Response {
        issue(self, grant.has_scope("offline_access"))
    }

    fn refresh(&self, f: &HashMap<String, String>) -> Response {
        let old = f.get("refresh_token").cloned().unwrap_or_default();
        let live = if self.one_use_refresh.load(Ordering::SeqCst) {
            lock(&self.refresh).remove(&old)
        } else {
            lock(&self.refresh).contains(&old)
        };
        if !live || self.faults.revoke_refresh.load(Ordering::SeqCst) {
            return oauth_error(
                "invalid_grant",
                "AADSTS70008: The refresh token has expired or is invalid.",
            );
        }
        self.refreshes.fetch_add(1, Ordering::SeqCst);
        issue(self, true)
    }
}

fn issue(g: &Graph, offline: bool) -> Response {
    let access = format!("EwB{}", random_hex(20));
    lock(&g.access).insert(access.clone());
    let mut answer = json!({"token_type": "Bearer", "expires_in": 3600, "ext_expires_in": 3600,
        "scope": "Files.Read.All Sites.Read.All User.Read", "access_token": access});
    if offline {
        let refresh = format!("M.R3_{}", random_hex(24));
        lock(&g.refresh).insert(refresh.clone());
        answer["refresh_token"] = json!(refresh);
    }
    Json(answer).into_response()
}

/// A running fake Microsoft.
#[derive(Debug)]
pub struct FakeOneDrive {
    pub server: TestServer,
    pub state: Arc<Graph>,
}

impl FakeOneDrive {
    /// Starts a fake Microsoft knowing the app `client_id` / `client_secret`, with the user's
    /// own OneDrive (`state.my_drive`).
    pub async fn start(client_id: &str, client_secret: &str) -> Self {
        let own = format!("b!{}", random_hex(12));
        let state = Arc::new(Graph {
            oauth: OAuthServer::new(client_id, client_secret, DIALECT),
            mail: "fake.user@contoso.example".into(),
            faults: Faults::default(),
            one_use_refresh: AtomicBool::new(false),
            api_calls: AtomicU64::new(0),
            refreshes: AtomicU64::new(0),
            my_drive: own.clone(),
            next_id: AtomicU64::new(0),
            drives: Mutex::new(vec![GraphDrive {
                id: own,
                name: "OneDrive".into(),
                drive_type: "business",
                site: None,
            }]),
            sites: Mutex::default(),
            items: Mutex::default(),
            access: Mutex::default(),
            refresh: Mutex::default(),
            links: Mutex::default(),
            base: OnceLock::new(),
        });
        let router = Router::new()
            .route(
                "/common/oauth2/v2.0/authorize",
                get(oauth::authorize::<Graph>),
            )
            .route("/common/oauth2/v2.0/consent", post(oauth::consent::<Graph>))
            .route("/common/oauth2/v2.0/token", post(oauth::token::<Graph>))
            .route("/v1.0/me", get(graph::me))
            .route("/v1.0/me/drive", get(graph::my_drive))
            .route("/v1.0/me/drives", get(graph::my_drives))
            .route("/v1.0/me/drive/sharedWithMe", get(graph::shared_with_me))
            .route("/v1.0/me/drive/root/children", get(graph::my_root_children))
            .route(
                "/v1.0/me/drive/items/{id}/children",
                get(graph::my_children),
            )
            .route(
                "/v1.0/drives/{drive}/root/children",
                get(graph::drive_root_children),
            )
            .route("/v1.0/drives/{drive}/items/{id}", get(graph::item))
            .route(
                "/v1.0/drives/{drive}/items/{id}/children",
                get(graph::drive_children),
            )
            .route(
                "/v1.0/drives/{drive}/items/{id}/content",
                get(graph::content),
            )
            .route("/v1.0/sites", get(graph::sites))
            .route("/v1.0/me/followedSites", get(graph::followed_sites))
            .route("/v1.0/sites/{site}/drives", get(graph::site_drives))
            .route("/download/{link}", get(graph::dl))
            .route("/thumbs/{id}", get(graph::thumb))
            .with_state(state.clone());
        let server = TestServer::start(router).await;
        let _ = state.base.set(server.url(""));
        Self { server, state }
    }

    /// `FERRY_ONEDRIVE_AUTH_URL`.
    pub fn auth_url(&self) -> String {
        self.server.url("/common/oauth2/v2.0/authorize")
    }
    /// `FERRY_ONEDRIVE_TOKEN_URL`.
    pub fn token_url(&self) -> String {
        self.server.url("/common/oauth2/v2.0/token")
    }
    /// `FERRY_ONEDRIVE_API_URL`.
    pub fn api_url(&self) -> String {
        self.server.url("")
    }
}

#[cfg(test)]
mod tests;
