//! Ferry's companion: imports links on the user's behalf, streams them to tus / multipart-form /
//! S3 destinations, reports transfer progress over a websocket and signs object-storage uploads,
//! wire-compatible with Uppy's Companion (see `shared/reference/companion-wire.md`).
//!
//! # Layout
//!
//! - [`config`]: [`CompanionConfig`], the settings the binary fills in.
//! - [`error`]: [`CompanionError`], the one error type of the routes (`{message}` JSON).
//! - [`egress`]: the one outbound HTTP client, SSRF-safe (own DNS, vetted addresses only).
//! - [`allowlist`]: the destination allowlist (`--upload-urls`); [`headers`]: forwarded-header filter.
//! - [`url_meta`]: `POST /url/meta`; [`url_get`]: `POST /url/get` (creates a transfer job).
//! - [`names`]: file names from `Content-Disposition` and URL paths.
//! - [`jobs`]: one transfer's shared handles, state frames and controls; [`registry`]: where
//!   transfers live (the [`registry::Registry`] seam: in process, or shared by several
//!   instances); [`socket`]: the `/api/{token}` websocket.
//! - [`transfer`]: the engine that streams a source to a destination (both behind traits).
//! - [`metrics`]: the companion's figures in Prometheus text (the server's `/metrics` shows them);
//!   [`cors`]: the CORS layer.
//! - [`s3`]: the S3 signing routes.
//! - [`providers`]: cloud providers (Drive, Instagram) behind one trait, and their routes.
//! - [`oauth`]: provider login without server sessions; [`token`]: Companion's sealed tokens.
//! - [`openapi`]: the routes' part of the server's OpenAPI document ([`openapi::CompanionApi`]).

pub mod allowlist;
pub mod config;
pub mod cors;
pub mod egress;
pub mod error;
pub mod headers;
pub mod jobs;
pub mod metrics;
pub mod names;
pub mod oauth;
pub mod openapi;
pub mod providers;
pub mod registry;
pub mod s3;
pub mod socket;
pub mod state;
pub mod token;
pub mod transfer;
pub mod url_get;
pub mod url_meta;

use axum::Router;

pub use config::CompanionConfig;
pub use error::CompanionError;
pub use state::AppState;

/// The companion's routes, to be merged into the server's router. Fails when the configuration
/// is invalid (an unparsable `--upload-urls` entry, for example).
pub fn router(config: CompanionConfig) -> Result<Router, CompanionError> {
    Ok(routes(AppState::new(config)?))
}

/// [`router`] and the state behind it (the binary resumes taken-over transfers on it).
pub fn router_and_state(config: CompanionConfig) -> Result<(Router, AppState), CompanionError> {
    let state = AppState::new(config)?;
    Ok((routes(state.clone()), state))
}

/// The companion's routes over an existing state (tests build one with a fixed resolver).
pub fn routes(state: AppState) -> Router {
    let cors = cors::layer(&state.config().cors_origins);
    let app = Router::new()
        .merge(url_meta::router())
        .merge(url_get::router())
        .merge(socket::router())
        .merge(providers::routes::router())
        .merge(providers::search::router())
        .merge(providers::find::router())
        .merge(providers::google_picker::routes::router())
        .merge(providers::simple_auth::router())
        .merge(oauth::routes::router());
    // Without a provider no login can end, so nobody gets to hold a socket waiting for one.
    let app = if state.config().providers.any_enabled() {
        app.merge(oauth::auth_socket::router())
    } else {
        app
    };
    let app = app.with_state(state);
    app.layer(cors)
}
