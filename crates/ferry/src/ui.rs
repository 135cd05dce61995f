//! The web page served at `/`: static files from the built demo app, with `index.html` for any
//! path that is not a file, so client-side routes work.

use std::path::Path;

use axum::Router;
use axum::response::Html;
use axum::routing::get;
use tower_http::services::{ServeDir, ServeFile};

/// Shown when the page has not been built, instead of a bare 404.
const NOT_BUILT: &str = "<!doctype html><title>Ferry</title><p>The upload page is not built. \
Run <code>make run</code> from the repository, or pass <code>--ui-dir</code>.</p>";

pub fn router(dir: &Path) -> Router {
    if !dir.join("index.html").is_file() {
        tracing::warn!(dir = %dir.display(), "web page not built; serving a placeholder at /");
        return Router::new().fallback(get(|| async { Html(NOT_BUILT) }));
    }
    let index = ServeFile::new(dir.join("index.html"));
    Router::new().fallback_service(ServeDir::new(dir).fallback(index))
}
