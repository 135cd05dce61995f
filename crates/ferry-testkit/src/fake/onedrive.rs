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

#[derive(Debug)]
struct Code {
    redirect_uri: String,
    challenge: Option<String>,
    offline: bool,
}

/// The fake's state; tests add drives, sites and items and flip faults through it.
#[derive(Debug)]
pub struct Graph {
    pub client_id: String,
    pub client_secret: String,
    /// `me` `mail`.
    pub mail: String,
    pub faults: Faults,
    /// Serve a consent page (Accept / Cancel) instead of approving at once.
    pub consent_page: AtomicBool,
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
    codes: Mutex<HashMap<String, Code>>,
    pending: Mutex<HashMap<String, (String, String)>>,
    access: Mutex<HashSet<String>>,
    refresh: Mutex<HashSet<String>>,
    links: Mutex<HashMap<String, String>>,
    base: OnceLock<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
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
        if Faults::take(&self.faults.too_many) {
            let mut r = graph_error(429, "TooManyRequests", "Too many requests");
            r.headers_mut().insert(
                header::RETRY_AFTER,
                axum::http::HeaderValue::from_static("1"),
            );
            return Some(r);
        }
        if Faults::take(&self.faults.server_error) {
            return Some(graph_error(
                503,
                "serviceNotAvailable",
                "Service unavailable",
            ));
        }
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
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

async fn authorize(State(g): G, Query(q): Q) -> Response {
    if q.get("client_id") != Some(&g.client_id) {
        return (
            StatusCode::BAD_REQUEST,
            "AADSTS700016: application not found",
        )
            .into_response();
    }
    let (Some(redirect_uri), Some(state)) = (q.get("redirect_uri"), q.get("state")) else {
        return (StatusCode::BAD_REQUEST, "AADSTS900144: missing parameter").into_response();
    };
    let scope = q.get("scope").cloned().unwrap_or_default();
    if q.get("response_type").map(String::as_str) != Some("code") || scope.is_empty() {
        return (StatusCode::BAD_REQUEST, "AADSTS900144: invalid request").into_response();
    }
    if q.contains_key("code_challenge")
        && q.get("code_challenge_method").map(String::as_str) != Some("S256")
    {
        return (StatusCode::BAD_REQUEST, "AADSTS501491: only S256").into_response();
    }
    let code = format!("M.C5_{}", random_hex(16));
    lock(&g.codes).insert(
        code.clone(),
        Code {
            redirect_uri: redirect_uri.clone(),
            challenge: q.get("code_challenge").cloned(),
            offline: scope.split(' ').any(|s| s == "offline_access"),
        },
    );
    if g.consent_page.load(Ordering::SeqCst) {
        let pending = random_hex(8);
        lock(&g.pending).insert(pending.clone(), (code, state.clone()));
        let page = format!(
            "<!doctype html><title>Permissions requested</title><h1>Fake Microsoft</h1>\
             <p>Ferry would like to read your files ({}).</p>\
             <form method=post action=/common/oauth2/v2.0/consent>\
             <input type=hidden name=pending value={pending}>\
             <button name=decision value=allow id=allow>Accept</button>\
             <button name=decision value=deny id=deny>Cancel</button></form>",
            g.mail
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

async fn token(State(g): G, Form(f): Form<HashMap<String, String>>) -> Response {
    if f.get("client_id") != Some(&g.client_id) || f.get("client_secret") != Some(&g.client_secret)
    {
        return oauth_error(
            "invalid_client",
            "AADSTS7000215: Invalid client secret provided.",
        );
    }
    match f.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let code = f.get("code").and_then(|c| lock(&g.codes).remove(c));
            let Some(code) = code else {
                return oauth_error(
                    "invalid_grant",
                    "AADSTS70000: The provided authorization code is invalid.",
                );
            };
            if f.get("redirect_uri") != Some(&code.redirect_uri) {
                return oauth_error(
                    "invalid_grant",
                    "AADSTS50011: The redirect URI does not match.",
                );
            }
            if let Some(challenge) = &code.challenge {
                let verifier = f.get("code_verifier").map(String::as_str).unwrap_or("");
                let digest = base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .encode(Sha256::digest(verifier.as_bytes()));
                if &digest != challenge {
                    return oauth_error(
                        "invalid_grant",
                        "AADSTS501481: The code verifier does not match.",
                    );
                }
            }
            issue(&g, code.offline)
        }
        Some("refresh_token") => {
            let old = f.get("refresh_token").cloned().unwrap_or_default();
            let live = if g.one_use_refresh.load(Ordering::SeqCst) {
                lock(&g.refresh).remove(&old)
            } else {
                lock(&g.refresh).contains(&old)
            };
            if !live || g.faults.revoke_refresh.load(Ordering::SeqCst) {
                return oauth_error(
                    "invalid_grant",
                    "AADSTS70008: The refresh token has expired or is invalid.",
                );
            }
            g.refreshes.fetch_add(1, Ordering::SeqCst);
            issue(&g, true)
        }
        _ => oauth_error(
            "unsupported_grant_type",
            "AADSTS70003: unsupported grant type",
        ),
    }
}

async fn me(State(g): G, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    Json(json!({"displayName": "Fake User", "mail": g.mail, "userPrincipalName": g.mail}))
        .into_response()
}

async fn my_drive(State(g): G, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let drives = lock(&g.drives).clone();
    match drives.iter().find(|d| d.id == g.my_drive) {
        Some(d) => Json(g.drive_json(d)).into_response(),
        None => not_found(),
    }
}

async fn my_drives(State(g): G, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let drives = lock(&g.drives).clone();
    let value: Vec<Value> = drives
        .iter()
        .filter(|d| d.site.is_none())
        .map(|d| g.drive_json(d))
        .collect();
    Json(json!({"value": value})).into_response()
}

async fn shared_with_me(State(g): G, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let items = lock(&g.items).clone();
    let value: Vec<Value> = items
        .iter()
        .filter(|i| i.shared_with_me)
        .map(|i| {
            let remote = g.item_json(i, false);
            json!({"id": format!("local{}", i.id), "name": i.name, "size": i.content.len(),
                "parentReference": {"driveId": g.my_drive}, "remoteItem": remote})
        })
        .collect();
    Json(json!({"value": value})).into_response()
}

/// Children of `parent` in `drive`, one `$top` page from `$skiptoken`.
fn children(
    g: &Graph,
    drive: &str,
    parent: &str,
    q: &HashMap<String, String>,
    path: &str,
) -> Response {
    if !lock(&g.drives).iter().any(|d| d.id == drive) {
        return not_found();
    }
    if parent != "root" && g.find(drive, parent).is_none_or(|p| !p.folder) {
        return not_found();
    }
    let top = q
        .get("$top")
        .and_then(|t| t.parse::<usize>().ok())
        .unwrap_or(200)
        .clamp(1, 999);
    let start = match q.get("$skiptoken") {
        None => 0,
        Some(t) => match t.strip_prefix("sk").and_then(|n| n.parse().ok()) {
            Some(n) => n,
            None => return graph_error(400, "invalidRequest", "Invalid skip token."),
        },
    };
    let thumbnails = q.get("$expand").is_some_and(|e| e.contains("thumbnails"));
    let all: Vec<GraphItem> = lock(&g.items)
        .iter()
        .filter(|i| i.drive == drive && i.parent == parent && !i.shared_with_me)
        .cloned()
        .collect();
    let value: Vec<Value> = all
        .iter()
        .skip(start)
        .take(top)
        .map(|i| g.item_json(i, thumbnails))
        .collect();
    let mut answer = json!({"value": value});
    if start + top < all.len() {
        let mut next = url::Url::parse(&format!("{}{path}", g.base())).expect("own url");
        next.query_pairs_mut()
            .append_pair("$top", &top.to_string())
            .append_pair("$skiptoken", &format!("sk{}", start + top));
        if thumbnails {
            next.query_pairs_mut().append_pair("$expand", "thumbnails");
        }
        answer["@odata.nextLink"] = json!(next.as_str());
    }
    Json(answer).into_response()
}

async fn my_root_children(State(g): G, Query(q): Q, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    children(&g, &g.my_drive, "root", &q, "/v1.0/me/drive/root/children")
}

async fn my_children(
    State(g): G,
    Path(id): Path<String>,
    Query(q): Q,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let path = format!("/v1.0/me/drive/items/{id}/children");
    children(&g, &g.my_drive, &id, &q, &path)
}

async fn drive_root_children(
    State(g): G,
    Path(drive): Path<String>,
    Query(q): Q,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let path = format!("/v1.0/drives/{drive}/root/children");
    children(&g, &drive, "root", &q, &path)
}

async fn drive_children(
    State(g): G,
    Path((drive, id)): Path<(String, String)>,
    Query(q): Q,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let path = format!("/v1.0/drives/{drive}/items/{id}/children");
    children(&g, &drive, &id, &q, &path)
}

async fn item(
    State(g): G,
    Path((drive, id)): Path<(String, String)>,
    Query(q): Q,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let thumbnails = q.get("$expand").is_some_and(|e| e.contains("thumbnails"));
    match g.find(&drive, &id) {
        Some(i) => Json(g.item_json(&i, thumbnails)).into_response(),
        None => not_found(),
    }
}

async fn content(
    State(g): G,
    Path((drive, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    match g.find(&drive, &id).filter(|i| !i.folder) {
        Some(i) => {
            let link = random_hex(12);
            lock(&g.links).insert(link.clone(), format!("{drive}/{}", i.id));
            found(&format!("{}/download/{link}", g.base()))
        }
        None => not_found(),
    }
}

/// The pre-authenticated download URL: no bearer token.
async fn dl(State(g): G, Path(link): Path<String>, headers: HeaderMap) -> Response {
    let Some(key) = lock(&g.links).get(&link).cloned() else {
        return (StatusCode::UNAUTHORIZED, "expired download link").into_response();
    };
    let (drive, id) = key.split_once('/').unwrap_or(("", ""));
    match g.find(drive, id) {
        Some(i) => download(i.content, &i.mime, &headers, &g.faults),
        None => not_found(),
    }
}

async fn thumb(Path(id): Path<String>) -> Response {
    (
        [(header::CONTENT_TYPE, "image/jpeg")],
        format!("thumbnail of {id}"),
    )
        .into_response()
}

fn site_json(id: &str, name: &str) -> Value {
    json!({"id": id, "displayName": name, "name": name,
        "webUrl": format!("https://contoso.sharepoint.com/sites/{name}")})
}

async fn sites(State(g): G, Query(q): Q, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let needle = q
        .get("search")
        .map(|s| s.trim_matches('*').to_lowercase())
        .unwrap_or_default();
    let value: Vec<Value> = lock(&g.sites)
        .iter()
        .filter(|(_, name)| name.to_lowercase().contains(&needle))
        .map(|(id, name)| site_json(id, name))
        .collect();
    Json(json!({"value": value})).into_response()
}

async fn followed_sites(State(g): G, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let value: Vec<Value> = lock(&g.sites)
        .iter()
        .map(|(id, name)| site_json(id, name))
        .collect();
    Json(json!({"value": value})).into_response()
}

async fn site_drives(State(g): G, Path(site): Path<String>, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    if !lock(&g.sites).iter().any(|(id, _)| *id == site) {
        return not_found();
    }
    let drives = lock(&g.drives).clone();
    let value: Vec<Value> = drives
        .iter()
        .filter(|d| d.site.as_deref() == Some(site.as_str()))
        .map(|d| g.drive_json(d))
        .collect();
    Json(json!({"value": value})).into_response()
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
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            mail: "fake.user@contoso.example".into(),
            faults: Faults::default(),
            consent_page: AtomicBool::new(false),
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
            codes: Mutex::default(),
            pending: Mutex::default(),
            access: Mutex::default(),
            refresh: Mutex::default(),
            links: Mutex::default(),
            base: OnceLock::new(),
        });
        let router = Router::new()
            .route("/common/oauth2/v2.0/authorize", get(authorize))
            .route("/common/oauth2/v2.0/consent", post(consent))
            .route("/common/oauth2/v2.0/token", post(token))
            .route("/v1.0/me", get(me))
            .route("/v1.0/me/drive", get(my_drive))
            .route("/v1.0/me/drives", get(my_drives))
            .route("/v1.0/me/drive/sharedWithMe", get(shared_with_me))
            .route("/v1.0/me/drive/root/children", get(my_root_children))
            .route("/v1.0/me/drive/items/{id}/children", get(my_children))
            .route(
                "/v1.0/drives/{drive}/root/children",
                get(drive_root_children),
            )
            .route("/v1.0/drives/{drive}/items/{id}", get(item))
            .route(
                "/v1.0/drives/{drive}/items/{id}/children",
                get(drive_children),
            )
            .route("/v1.0/drives/{drive}/items/{id}/content", get(content))
            .route("/v1.0/sites", get(sites))
            .route("/v1.0/me/followedSites", get(followed_sites))
            .route("/v1.0/sites/{site}/drives", get(site_drives))
            .route("/download/{link}", get(dl))
            .route("/thumbs/{id}", get(thumb))
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
mod tests {
    use super::*;

    #[tokio::test]
    async fn children_page_with_absolute_next_links_and_content_redirects() {
        let fake = FakeOneDrive::start("k", "s").await;
        let g = &fake.state;
        for i in 0..5u8 {
            g.add_file(
                &g.my_drive,
                "root",
                &format!("{i}.jpg"),
                "image/jpeg",
                vec![i; 3],
            );
        }
        let token = "EwBtest".to_owned();
        lock(&g.access).insert(token.clone());
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        let mut next = Some(
            fake.server
                .url("/v1.0/me/drive/root/children?$top=2&$expand=thumbnails"),
        );
        let mut ids = Vec::new();
        while let Some(url) = next {
            let page: Value = http
                .get(&url)
                .bearer_auth(&token)
                .send()
                .await
                .expect("page")
                .json()
                .await
                .expect("json");
            for v in page["value"].as_array().expect("value") {
                assert!(v["thumbnails"][0]["medium"]["url"].is_string());
                ids.push(v["id"].as_str().expect("id").to_owned());
            }
            next = page["@odata.nextLink"].as_str().map(str::to_owned);
        }
        assert_eq!(ids.len(), 5);
        let r = http
            .get(fake.server.url(&format!(
                "/v1.0/drives/{}/items/{}/content",
                g.my_drive, ids[4]
            )))
            .bearer_auth(&token)
            .send()
            .await
            .expect("content");
        assert_eq!(r.status(), StatusCode::FOUND);
        let location = r.headers()[header::LOCATION]
            .to_str()
            .expect("location")
            .to_owned();
        let bytes = reqwest::get(&location)
            .await
            .expect("dl")
            .bytes()
            .await
            .expect("bytes");
        assert_eq!(&bytes[..], &[4u8; 3]);
        let r = http
            .get(fake.server.url("/v1.0/me"))
            .send()
            .await
            .expect("me");
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    }
}
