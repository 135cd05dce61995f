//! Ferry's companion: imports links and cloud files on the user's behalf, signs object-storage
//! uploads and reports transfer progress over a websocket, wire-compatible with Uppy's Companion.
//!
//! # Layout
//!
//! Nothing is mounted yet: [`router`] answers no route. The link-import, provider and S3 issues
//! fill it in.

use axum::Router;

/// Settings of the companion.
#[derive(Clone, Debug, Default)]
pub struct CompanionConfig {}

/// The companion's routes, to be merged into the server's router.
pub fn router(_config: CompanionConfig) -> Router {
    Router::new()
}
