//! The tus endpoint as an axum router, one module per verb.
//!
//! [`router`] mounts `{base}` (OPTIONS, POST) and `{base}{id}` (HEAD, PATCH, DELETE, GET).
//! Path segments that are not server-issued ids are answered 404 before the store is asked.

mod delete;
mod download;
mod head;
mod options;
mod patch;
mod post;

use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderMap, HeaderValue};
use axum::routing::{options as options_route, post as post_route};

use crate::id::UploadId;
use crate::lock::UploadLocks;
use crate::protocol::headers::TUS_RESUMABLE;
use crate::protocol::{TUS_VERSION, TusError};
use crate::store::{Store, StoreError};

/// Settings of the endpoint.
#[derive(Clone, Debug)]
pub struct TusConfig {
    /// Path the endpoint is mounted at, with a trailing slash (`/files/`).
    pub base_path: String,
    /// Largest upload accepted (`Tus-Max-Size`); `None` for no limit.
    pub max_size: Option<u64>,
}

impl Default for TusConfig {
    fn default() -> Self {
        Self {
            base_path: "/files/".to_owned(),
            max_size: None,
        }
    }
}

/// Shared state of the endpoint's handlers.
#[derive(Clone)]
pub struct TusState {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn Store>,
    config: TusConfig,
    locks: UploadLocks,
}

impl std::fmt::Debug for TusState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TusState")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl TusState {
    pub fn new(store: Arc<dyn Store>, config: TusConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                store,
                config,
                locks: UploadLocks::default(),
            }),
        }
    }

    fn store(&self) -> &dyn Store {
        self.inner.store.as_ref()
    }

    fn config(&self) -> &TusConfig {
        &self.inner.config
    }

    fn locks(&self) -> &UploadLocks {
        &self.inner.locks
    }

    /// The extensions this endpoint supports with its store, for `Tus-Extension`.
    fn extensions(&self) -> String {
        let mut extensions = vec!["creation"];
        if self.store().as_terminate().is_some() {
            extensions.push("termination");
        }
        extensions.join(",")
    }

    fn location(&self, id: &str) -> String {
        format!("{}{id}", self.config().base_path)
    }
}

/// Builds the endpoint's routes.
pub fn router(state: TusState) -> Router {
    let base = state.config().base_path.clone();
    let bare = base.trim_end_matches('/').to_owned();
    let collection = options_route(options::handle).post(post_route(post::handle));
    let upload = axum::routing::head(head::handle)
        .patch(patch::handle)
        .delete(delete::handle)
        .get(download::handle)
        .options(options::handle);
    let mut router = Router::new()
        .route(&base, collection.clone())
        .route(&format!("{base}{{id}}"), upload);
    if !bare.is_empty() {
        router = router.route(&bare, collection);
    }
    router.with_state(state)
}

/// Rejects requests that do not speak tus 1.0.0 (412).
fn require_version(headers: &HeaderMap) -> Result<(), TusError> {
    match headers.get(TUS_RESUMABLE) {
        Some(v) if v == TUS_VERSION => Ok(()),
        _ => Err(TusError::UnsupportedVersion),
    }
}

/// Maps a path segment to an id, or 404 without touching storage.
fn parse_id(raw: &str) -> Result<UploadId, TusError> {
    UploadId::parse(raw).ok_or(TusError::NotFound)
}

fn tus_resumable() -> (axum::http::HeaderName, HeaderValue) {
    (TUS_RESUMABLE, HeaderValue::from_static(TUS_VERSION))
}

fn header_u64(n: u64) -> HeaderValue {
    HeaderValue::from(n)
}

impl From<StoreError> for TusError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => Self::NotFound,
            StoreError::OffsetMismatch { sent, current } => Self::OffsetMismatch { sent, current },
            StoreError::Io(e) => {
                tracing::error!(error = %e, "tus store failure");
                Self::Internal
            }
        }
    }
}
