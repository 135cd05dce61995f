//! A fake WebDAV server (RFC 4918) laid out like Nextcloud: a user's collection at
//! `/remote.php/dav/files/{user}/` behind Basic auth (user + app password), a public share
//! link `/s/{token}` whose WebDAV endpoint is `/public.php/webdav/` (Basic auth with the share
//! token as user, as Nextcloud and ownCloud take it), and an anonymous collection at `/open/`.
//!
//! `PROPFIND` with `Depth: 0` or `1` answers `207 Multi-Status` (`DAV:` namespace under the
//! `d:` prefix, percent-encoded hrefs, a `404` propstat for properties a resource lacks, as
//! sabre/dav does); `Depth: infinity` (or none) is refused with 403 as Nextcloud does. `GET`
//! serves files with `Range`. Fault switches: every credential refused (401), 429 with
//! `Retry-After: 0`, a download cut after N bytes ([`Faults`]), and listings padded past a
//! size or nested deeply, for the client's bounds.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use bytes::Bytes;
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};

use super::{Faults, download};
use crate::TestServer;

/// What an href segment escapes (as sabre/dav does: spaces, `&`, `#`, `%`, `?`...).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'&')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'\\');

/// The date every resource was last modified.
const MODIFIED: &str = "Tue, 03 Nov 2026 10:00:00 GMT";

#[derive(Clone, Debug)]
enum Node {
    Folder,
    File { mime: String, content: Bytes },
}

/// The fake's state.
#[derive(Debug)]
pub struct WebDav {
    pub user: String,
    /// The app password the user's collection takes.
    pub password: String,
    /// The public share's token (`/s/{token}`).
    pub share_token: String,
    pub faults: Faults,
    /// Requests answered (any method), so a test can tell nothing was fetched.
    pub requests: AtomicU64,
    /// PROPFIND requests, and the `Depth` of the last one.
    pub propfinds: AtomicU64,
    pub last_depth: Mutex<Option<String>>,
    /// GETs that carried `Range`.
    pub ranged: AtomicU64,
    /// Bytes of padding (an XML comment) added to every PROPFIND answer (0: off).
    pub pad_listing: AtomicUsize,
    /// Levels of nested elements added to every PROPFIND answer (0: off).
    pub nest_listing: AtomicUsize,
    /// The folder the share shows (a path in the user's tree).
    share_root: Mutex<String>,
    nodes: Mutex<BTreeMap<String, Node>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// `/a/b` from any form of a path (`a/b/`, `//a/b`); the root is the empty string.
fn normal(path: &str) -> String {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| format!("/{s}"))
        .collect()
}

impl WebDav {
    /// Adds a file at `path` (`/Photos/a.jpg`), with its folders.
    pub fn add_file(&self, path: &str, mime: &str, content: impl Into<Bytes>) {
        let path = normal(path);
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.add_folder(parent);
        }
        let node = Node::File {
            mime: mime.into(),
            content: content.into(),
        };
        lock(&self.nodes).insert(path, node);
    }

    /// Adds a folder at `path`, with its parents.
    pub fn add_folder(&self, path: &str) {
        let mut nodes = lock(&self.nodes);
        let mut at = String::new();
        for s in path.split('/').filter(|s| !s.is_empty()) {
            at.push('/');
            at.push_str(s);
            nodes.entry(at.clone()).or_insert(Node::Folder);
        }
    }

    /// Makes the public share show the folder `path`.
    pub fn share(&self, path: &str) {
        self.add_folder(path);
        *lock(&self.share_root) = normal(path);
    }

    fn basic_ok(&self, headers: &HeaderMap, user: &str, password: Option<&str>) -> bool {
        let Some(raw) = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Basic "))
        else {
            return false;
        };
        let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(raw.trim()) else {
            return false;
        };
        let text = String::from_utf8_lossy(&decoded);
        match text.split_once(':') {
            Some((u, p)) => u == user && password.is_none_or(|want| want == p),
            None => false,
        }
    }

    /// The `(href prefix, tree root, rest of the path)` of a request, if it is authorized.
    fn scope(
        &self,
        path: &str,
        headers: &HeaderMap,
    ) -> Result<(String, String, String), StatusCode> {
        let user_prefix = format!("/remote.php/dav/files/{}", self.user);
        if let Some(rest) = path.strip_prefix(&user_prefix) {
            if !self.basic_ok(headers, &self.user, Some(&self.password)) {
                return Err(StatusCode::UNAUTHORIZED);
            }
            return Ok((user_prefix, String::new(), rest.to_owned()));
        }
        if let Some(rest) = path.strip_prefix("/public.php/webdav") {
            // An unprotected share takes any password with its token.
            if !self.basic_ok(headers, &self.share_token, None) {
                return Err(StatusCode::UNAUTHORIZED);
            }
            let root = lock(&self.share_root).clone();
            return Ok(("/public.php/webdav".into(), root, rest.to_owned()));
        }
        if let Some(rest) = path.strip_prefix("/open") {
            return Ok(("/open".into(), String::new(), rest.to_owned()));
        }
        Err(StatusCode::NOT_FOUND)
    }

    fn propfind(&self, prefix: &str, root: &str, rel: &str, depth: Option<&str>) -> Response {
        self.propfinds.fetch_add(1, Ordering::SeqCst);
        *lock(&self.last_depth) = depth.map(str::to_owned);
        let children = match depth {
            Some("0") => false,
            Some("1") => true,
            _ => return (StatusCode::FORBIDDEN, "Depth infinity is not supported").into_response(),
        };
        let nodes = lock(&self.nodes);
        let full = format!("{root}{rel}");
        let Some(own) = (if full.is_empty() {
            Some(&Node::Folder)
        } else {
            nodes.get(&full)
        }) else {
            return StatusCode::NOT_FOUND.into_response();
        };
        let mut body = String::from(
            r#"<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns">"#,
        );
        response(&mut body, prefix, rel, own);
        if children {
            let under = format!("{full}/");
            for (path, node) in nodes.range(under.clone()..) {
                let Some(name) = path.strip_prefix(&under) else {
                    break;
                };
                if !name.contains('/') {
                    response(&mut body, prefix, &format!("{rel}/{name}"), node);
                }
            }
        }
        let nest = self.nest_listing.load(Ordering::SeqCst);
        body.push_str(&"<d:x>".repeat(nest));
        body.push_str(&"</d:x>".repeat(nest));
        let pad = self.pad_listing.load(Ordering::SeqCst);
        if pad > 0 {
            body.push_str("<!--");
            body.push_str(&" ".repeat(pad));
            body.push_str("-->");
        }
        body.push_str("</d:multistatus>");
        (
            StatusCode::MULTI_STATUS,
            [(header::CONTENT_TYPE, "application/xml; charset=utf-8")],
            body,
        )
            .into_response()
    }
}

/// One `d:response` for `node` at `rel` (below `prefix`).
fn response(out: &mut String, prefix: &str, rel: &str, node: &Node) {
    let mut href = prefix.to_owned();
    for s in rel.split('/').filter(|s| !s.is_empty()) {
        href.push('/');
        href.extend(utf8_percent_encode(s, SEGMENT));
    }
    let _ = write!(out, "<d:response><d:href>");
    match node {
        Node::Folder => {
            let _ = write!(
                out,
                "{href}/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype>\
                 <d:getlastmodified>{MODIFIED}</d:getlastmodified></d:prop>\
                 <d:status>HTTP/1.1 200 OK</d:status></d:propstat><d:propstat><d:prop>\
                 <d:getcontentlength/><d:getcontenttype/></d:prop>\
                 <d:status>HTTP/1.1 404 Not Found</d:status></d:propstat></d:response>"
            );
        }
        Node::File { mime, content } => {
            let _ = write!(
                out,
                "{href}</d:href><d:propstat><d:prop><d:resourcetype/>\
                 <d:getcontentlength>{}</d:getcontentlength><d:getcontenttype>{mime}</d:getcontenttype>\
                 <d:getlastmodified>{MODIFIED}</d:getlastmodified></d:prop>\
                 <d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>",
                content.len()
            );
        }
    }
}

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, r#"Basic realm="Nextcloud""#)],
        "No public access to this resource.",
    )
        .into_response()
}

async fn handle(
    axum::extract::State(dav): axum::extract::State<Arc<WebDav>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    dav.requests.fetch_add(1, Ordering::SeqCst);
    if Faults::take(&dav.faults.too_many) {
        return (StatusCode::TOO_MANY_REQUESTS, [(header::RETRY_AFTER, "0")]).into_response();
    }
    if dav.faults.expire_access.load(Ordering::SeqCst) {
        return unauthorized();
    }
    let Ok(path) = percent_decode_str(uri.path()).decode_utf8() else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    if path.starts_with("/s/") || path.starts_with("/index.php/s/") {
        return (StatusCode::OK, "<html>a public share page</html>").into_response();
    }
    let (prefix, root, rest) = match dav.scope(&path, &headers) {
        Ok(s) => s,
        Err(StatusCode::UNAUTHORIZED) => return unauthorized(),
        Err(status) => return status.into_response(),
    };
    let rel = normal(&rest);
    if method.as_str() == "PROPFIND" {
        let depth = headers.get("depth").and_then(|d| d.to_str().ok());
        return dav.propfind(&prefix, &root, &rel, depth);
    }
    if method != Method::GET {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let node = lock(&dav.nodes).get(&format!("{root}{rel}")).cloned();
    match node {
        Some(Node::File { mime, content }) => {
            if headers.contains_key(header::RANGE) {
                dav.ranged.fetch_add(1, Ordering::SeqCst);
            }
            download(content, &mime, &headers, &dav.faults)
        }
        Some(Node::Folder) => StatusCode::METHOD_NOT_ALLOWED.into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// A running fake WebDAV server.
#[derive(Debug)]
pub struct FakeWebDav {
    pub server: TestServer,
    pub state: Arc<WebDav>,
}

impl FakeWebDav {
    /// Starts on `127.0.0.1:0` for `user` with the app password `password`.
    pub async fn start(user: &str, password: &str) -> Self {
        Self::start_on("127.0.0.1:0", user, password).await
    }

    /// Starts on `addr` (`127.0.0.2:0` stands for a public host in tests).
    pub async fn start_on(addr: &str, user: &str, password: &str) -> Self {
        let state = Arc::new(WebDav {
            user: user.into(),
            password: password.into(),
            share_token: "kFy9Lek5sm928xP".into(),
            faults: Faults::default(),
            requests: AtomicU64::new(0),
            propfinds: AtomicU64::new(0),
            last_depth: Mutex::default(),
            ranged: AtomicU64::new(0),
            pad_listing: AtomicUsize::new(0),
            nest_listing: AtomicUsize::new(0),
            share_root: Mutex::default(),
            nodes: Mutex::default(),
        });
        let router = Router::new().fallback(handle).with_state(state.clone());
        let server = TestServer::start_on(addr, router).await;
        Self { server, state }
    }

    /// The user's collection (what a person types, without credentials).
    pub fn user_url(&self) -> String {
        self.server
            .url(&format!("/remote.php/dav/files/{}/", self.state.user))
    }

    /// The user's collection with `user:password@` in it (Uppy's one-field form).
    pub fn user_url_with(&self, user: &str, password: &str) -> String {
        let enc = |s: &str| utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string();
        format!(
            "http://{}:{}@{}/remote.php/dav/files/{}/",
            enc(user),
            enc(password),
            self.server.addr,
            self.state.user
        )
    }

    /// The public share link (`/index.php/s/{token}`).
    pub fn share_url(&self) -> String {
        self.server
            .url(&format!("/index.php/s/{}", self.state.share_token))
    }

    /// The anonymous collection.
    pub fn open_url(&self) -> String {
        self.server.url("/open/")
    }
}
