//! A plain upload endpoint for clients that do not speak tus (the widget's XHR uploader, HTML
//! forms, `curl -F`): files arrive as a multipart form or as a raw body, are streamed to disk
//! under one directory, and can be fetched back as attachments.
//!
//! # Layout
//!
//! - [`answer`]: the JSON bodies of the answers, as types (also the OpenAPI schemas).
//! - [`FormApi`]: the endpoint's part of the server's OpenAPI document.
//! - [`error`]: the crate's error enum, its status codes and JSON body `{ "message" }`.
//! - [`store`]: files on disk (content + a small JSON sidecar), written chunk by chunk.
//! - `upload`: `POST /upload` (multipart form, one file or a bundle of several).
//! - `raw`: `PUT`/`POST /upload/raw?name=...` (the body is the file).
//! - `download`: `GET /upload/{id}` (the stored bytes, as an attachment).
//! - `body`: the request body under the idle rule and the quota (shared with tus through
//!   `ferry-body`), and why a read failed.
//! - `name`: client file names reduced to plain base names.
//! - `access`: the token's limits, quota and file owners under `--auth-secret`.
//! - `hooks`: the lifecycle hooks of each stored file (pre-create, which may refuse it;
//!   post-create and post-finish, with where it is stored).

pub mod answer;
pub mod error;
pub mod store;

mod access;
mod body;
mod download;
mod hooks;
mod name;
mod raw;
mod upload;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use ferry_hooks::{Hooks, NoHooks};

pub use error::FormError;
pub use store::FormStore;

/// Settings of the endpoint.
#[derive(Debug, Clone)]
pub struct FormConfig {
    /// Directory holding the stored files.
    pub dir: PathBuf,
    /// Largest accepted file, in bytes; `None` = no limit.
    pub max_size: Option<u64>,
    /// Path prefix of the routes (`/upload`); URLs in answers are built from it.
    pub base_path: String,
}

/// Shared state of the routes.
#[derive(Debug, Clone)]
pub struct FormState {
    pub(crate) store: Arc<FormStore>,
    pub(crate) max_size: Option<u64>,
    pub(crate) base_path: String,
    pub(crate) hooks: Arc<dyn Hooks>,
    /// A body delivering less than 1 KiB in this long is cut off (408).
    pub(crate) idle_timeout: Duration,
}

/// The idle window when none is set: tus's default (`--idle-timeout`).
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

impl FormState {
    /// Opens (creating if needed) the directory of `config`.
    pub async fn open(config: FormConfig) -> std::io::Result<Self> {
        let store = FormStore::open(config.dir).await?;
        Ok(Self {
            store: Arc::new(store),
            max_size: config.max_size,
            base_path: config.base_path.trim_end_matches('/').to_owned(),
            hooks: Arc::new(NoHooks),
            idle_timeout: IDLE_TIMEOUT,
        })
    }

    /// The same endpoint cutting off a body that delivers less than 1 KiB in `idle` (30 s by
    /// default), as tus does.
    pub fn with_idle_timeout(self, idle: Duration) -> Self {
        Self {
            idle_timeout: idle,
            ..self
        }
    }

    /// The same endpoint emitting lifecycle hooks through `hooks` (none by default).
    pub fn with_hooks(self, hooks: Arc<dyn Hooks>) -> Self {
        Self { hooks, ..self }
    }

    /// Where the stored file `id` can be fetched.
    pub(crate) fn url_of(&self, id: &str) -> String {
        format!("{}/{id}", self.base_path)
    }
}

/// The endpoint's operations for the server's OpenAPI document (mounted at `/upload`); the
/// `bearerAuth` scheme they name is defined by the application that merges this part.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(
    paths(upload::handle, raw::handle, download::handle),
    components(schemas(answer::Uploaded, answer::StoredFile, answer::ErrorMessage)),
    tags((name = "form", description = "Plain uploads: a multipart form or a raw body."))
)]
pub struct FormApi;

/// The endpoint's routes under `state.base_path`.
pub fn router(state: FormState) -> Router {
    let base = state.base_path.clone();
    Router::new()
        .route(&base, post(upload::handle))
        .route(&format!("{base}/raw"), post(raw::handle).put(raw::handle))
        .route(&format!("{base}/{{id}}"), get(download::handle))
        // The size cap is enforced while streaming (per file), not by buffering the body.
        .layer(DefaultBodyLimit::disable())
        .with_state(state)
}
