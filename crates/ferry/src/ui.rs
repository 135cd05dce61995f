//! The web page served at `/`. By default it is the demo page built into the binary at compile
//! time (so a copied `ferry` serves it from any directory); `--ui-dir` serves a directory instead
//! and `--no-ui` serves none. A path that is not a file gets `index.html` only when it is a
//! navigation (GET/HEAD, accepts HTML, no file extension), so client-side routes work while a
//! missing asset (`/missing.js`) is a 404. API paths never reach the page (`surface`).

use std::path::Path;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{Html, IntoResponse, Response};
use rust_embed::RustEmbed;
use tower::ServiceExt;
use tower_http::services::{ServeDir, ServeFile};

/// Shown when the page has not been built, instead of a bare 404.
const NOT_BUILT: &str = "<!doctype html><title>Ferry</title><p>The upload page is not built. \
Run <code>make run</code> from the repository, or pass <code>--ui-dir</code>.</p>";

/// The built demo page (apps/demo/dist, source maps left out), embedded at compile time; empty
/// when the page was not built. `build.rs` makes cargo rebuild when the page changes.
#[derive(RustEmbed)]
#[folder = "../../apps/demo/dist"]
#[exclude = "*.map"]
#[allow_missing = true]
struct Page;

/// The page at `/`: the directory `dir` when given, else the page embedded in the binary.
pub fn router(dir: Option<&Path>) -> Router {
    match dir {
        Some(dir) => dir_router(dir),
        None => embedded_router(),
    }
}

/// Whether this binary was built with the page inside it.
pub fn embedded() -> bool {
    Page::get("index.html").is_some()
}

fn dir_router(dir: &Path) -> Router {
    if !dir.join("index.html").is_file() {
        tracing::warn!(dir = %dir.display(), "web page not built; serving a placeholder at /");
        return placeholder();
    }
    let index = ServeFile::new(dir.join("index.html"));
    let missing = axum::routing::any(move |request: Request| {
        let index = index.clone();
        async move {
            if !is_navigation(&request) {
                return not_found();
            }
            match index.oneshot(request).await {
                Ok(response) => response.into_response(),
                Err(never) => match never {},
            }
        }
    });
    Router::new().fallback_service(ServeDir::new(dir).fallback(missing))
}

fn embedded_router() -> Router {
    if !embedded() {
        tracing::warn!("this binary was built without the web page; serving a placeholder at /");
        return placeholder();
    }
    Router::new().fallback(serve_embedded)
}

/// The "not built" page, for navigations only: an asset is a 404 here too.
fn placeholder() -> Router {
    Router::new().fallback(|request: Request| async move {
        if is_navigation(&request) {
            Html(NOT_BUILT).into_response()
        } else {
            not_found()
        }
    })
}

/// One file of the embedded page, with the headers `ServeDir` gives a directory's files plus
/// caching: Vite's `assets/` names carry a content hash, so they never change.
async fn serve_embedded(method: Method, uri: Uri, headers: HeaderMap) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::ALLOW, HeaderValue::from_static("GET,HEAD"))],
        )
            .into_response();
    }
    let wanted = uri.path().trim_start_matches('/');
    let wanted = if wanted.is_empty() {
        "index.html"
    } else {
        wanted
    };
    let (path, file) = match Page::get(wanted) {
        Some(file) => (wanted, file),
        None if !navigation(uri.path(), &headers) => return not_found(),
        None => match Page::get("index.html") {
            Some(file) => ("index.html", file),
            None => return Html(NOT_BUILT).into_response(),
        },
    };
    let etag = format!("\"{}\"", hex(&file.metadata.sha256_hash()));
    let cache = if path.starts_with("assets/") {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|v| v.as_bytes() == etag.as_bytes());
    let builder = Response::builder()
        .header(header::ETAG, &etag)
        .header(header::CACHE_CONTROL, cache);
    let response = if fresh {
        builder.status(StatusCode::NOT_MODIFIED).body(Body::empty())
    } else {
        let builder = builder
            .header(header::CONTENT_TYPE, file.metadata.mimetype())
            .header(header::CONTENT_LENGTH, file.data.len());
        let body = if method == Method::HEAD {
            Body::empty()
        } else {
            Body::from(file.data)
        };
        builder.body(body)
    };
    // Every header above is a valid value, so building cannot fail; answer 500 if it ever does.
    response.unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Whether `request` asks for a page of the client-side router: a GET or HEAD that accepts HTML
/// for a path whose last segment has no file extension.
fn is_navigation(request: &Request) -> bool {
    (request.method() == Method::GET || request.method() == Method::HEAD)
        && navigation(request.uri().path(), request.headers())
}

/// The path and `Accept` half of [`is_navigation`]. No `Accept` means anything is accepted.
fn navigation(path: &str, headers: &HeaderMap) -> bool {
    let last = path.rsplit('/').next().unwrap_or_default();
    if last.contains('.') {
        return false;
    }
    let Some(accept) = headers.get(header::ACCEPT) else {
        return true;
    };
    accept.to_str().unwrap_or_default().split(',').any(|range| {
        let mut params = range.split(';');
        let kind = params.next().unwrap_or_default().trim();
        let refused = params.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        !refused && matches!(kind, "text/html" | "text/*" | "*/*")
    })
}

fn not_found() -> Response {
    crate::surface::message(StatusCode::NOT_FOUND, "not found")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
