//! The tus endpoint as an axum router, one module per verb.
//!
//! [`router`] mounts `{base}` (OPTIONS, POST) and `{base}{id}` (HEAD, PATCH, DELETE, GET, and
//! POST with `X-HTTP-Method-Override`). The id is parsed once per request ([`path_id`]), by the
//! owner check in front of every verb ([`access::owner_only`]); a segment that is not an id is
//! answered 404 before the store is asked. With the IETF draft on, the router picks tus or the
//! draft once per request; the draft's verbs are in [`ietf`]. Shared pieces: [`write`] (the
//! write path every creation and append stands on), [`error`] (errors as answers), [`body`]
//! (the guarded request body), [`access`] (owners and token limits under `--auth-secret`),
//! [`pending`] (finals created before their parts finished), [`limits`] (per-client cap),
//! [`cors`], [`sweeper`] (expiration), [`openapi`] (the endpoint's part of the OpenAPI
//! document).

pub use openapi::TusApi;

mod access;
mod body;
mod cors;
mod delete;
mod download;
mod error;
mod head;
mod hooks;
mod ietf;
mod limits;
mod method_override;
mod openapi;
mod options;
mod patch;
mod path_id;
mod pending;
mod post;
mod sweeper;
mod write;

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue};
use axum::routing::{MethodRouter, any_service, head as head_route, post as post_route};
use ferry_hooks::{Hooks, NoHooks};
use tower::ServiceExt;

use crate::id::UploadId;
use crate::lock::{LocalLocks, UploadLock};
use crate::protocol::headers::{TUS_RESUMABLE, UPLOAD_EXPIRES};
use crate::protocol::ietf::is_draft_request;
use crate::protocol::{TUS_VERSION, TusError};
use crate::store::{Store, UploadInfo, now_secs};
use limits::ClientSlots;

/// Settings of the endpoint.
#[derive(Clone, Debug)]
pub struct TusConfig {
    /// Path the endpoint is mounted at, with a trailing slash (`/files/`).
    pub base_path: String,
    /// Largest upload accepted (`Tus-Max-Size`); `None` for no limit.
    pub max_size: Option<u64>,
    /// Unfinished uploads untouched for this long expire and are swept; `None` never.
    pub expiry: Option<Duration>,
    /// A request body that sends nothing for this long is cut off.
    pub idle_timeout: Duration,
    /// Uploads one client address may write at once; 0 for no cap.
    pub max_uploads_per_client: usize,
    /// Reverse proxies whose `X-Forwarded-For` names the client for that cap (none by default).
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Answer CORS preflights and expose the tus headers to pages of any origin.
    pub cors: bool,
    /// Also speak the IETF resumable-upload draft (interop version 8) to requests carrying
    /// `Upload-Draft-Interop-Version: 8`; off, such requests are treated as tus.
    pub ietf_draft: bool,
    /// One writer per upload: in process by default; a shared lock when several instances
    /// serve the same store.
    pub lock: Arc<dyn UploadLock>,
    /// Where lifecycle events go (tusd's hooks); none are sent by default.
    pub hooks: Arc<dyn Hooks>,
}

impl Default for TusConfig {
    fn default() -> Self {
        Self {
            base_path: "/files/".to_owned(),
            max_size: None,
            expiry: Some(Duration::from_secs(24 * 60 * 60)),
            idle_timeout: Duration::from_secs(30),
            max_uploads_per_client: 32,
            trusted_proxies: Vec::new(),
            cors: true,
            ietf_draft: false,
            lock: Arc::new(LocalLocks::default()),
            hooks: Arc::new(NoHooks),
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
    slots: Arc<ClientSlots>,
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
        let slots = Arc::new(ClientSlots::new(
            config.max_uploads_per_client,
            config.trusted_proxies.clone(),
        ));
        Self {
            inner: Arc::new(Inner {
                store,
                config,
                slots,
            }),
        }
    }

    fn store(&self) -> &dyn Store {
        self.inner.store.as_ref()
    }

    fn config(&self) -> &TusConfig {
        &self.inner.config
    }

    fn lock(&self) -> &dyn UploadLock {
        self.inner.config.lock.as_ref()
    }

    fn slots(&self) -> &Arc<ClientSlots> {
        &self.inner.slots
    }

    /// Expiry applies when configured and the store can both find and delete stale uploads.
    fn expiry(&self) -> Option<Duration> {
        let store = self.store();
        let capable = store.as_expire().is_some() && store.as_terminate().is_some();
        self.config().expiry.filter(|_| capable)
    }

    /// The extensions this endpoint supports with its store, for `Tus-Extension`.
    pub fn extensions(&self) -> String {
        let store = self.store();
        let mut extensions = vec!["creation", "creation-with-upload"];
        if store.as_defer_length().is_some() {
            extensions.push("creation-defer-length");
        }
        if store.as_terminate().is_some() {
            extensions.push("termination");
        }
        if store.as_stage().is_some() {
            extensions.push("checksum");
            extensions.push("checksum-trailer");
        }
        if store.as_concatenate().is_some() {
            extensions.push("concatenation");
            if store.as_concatenate_unfinished().is_some() {
                extensions.push("concatenation-unfinished");
            }
        }
        if self.expiry().is_some() {
            extensions.push("expiration");
        }
        extensions.join(",")
    }

    fn location(&self, id: &UploadId) -> String {
        format!("{}{id}", self.config().base_path)
    }

    /// `Location` for an upload of this endpoint.
    fn location_header(&self, id: &UploadId) -> Result<HeaderValue, TusError> {
        // Fails only for a configured base path holding bytes no header may carry.
        HeaderValue::from_str(&self.location(id)).map_err(|_| TusError::Internal)
    }

    /// When an unfinished upload expires (Unix seconds), if it ever does.
    fn expires_at(&self, info: &UploadInfo) -> Option<u64> {
        let expiry = self.expiry()?;
        (!info.is_complete()).then(|| info.updated_at.saturating_add(expiry.as_secs()))
    }

    /// 410 for an upload past its expiry that the sweeper has not reclaimed yet.
    fn check_not_expired(&self, info: &UploadInfo) -> Result<(), TusError> {
        match self.expires_at(info) {
            Some(at) if at <= now_secs() => Err(TusError::Gone),
            _ => Ok(()),
        }
    }

    /// Adds `Upload-Expires` for uploads that will expire.
    fn insert_expires(&self, info: &UploadInfo, out: &mut HeaderMap) {
        if let Some(at) = self.expires_at(info) {
            let when = UNIX_EPOCH + Duration::from_secs(at);
            if let Ok(v) = HeaderValue::from_str(&httpdate::fmt_http_date(when)) {
                out.insert(UPLOAD_EXPIRES, v);
            }
        }
    }
}

/// Builds the endpoint's routes.
pub fn router(state: TusState) -> Router {
    let tus = verbs(
        &state,
        post_route(post::handle),
        head_route(head::handle)
            .patch(patch::handle)
            .delete(delete::handle),
    );
    let (collection, upload) = if state.config().ietf_draft {
        let draft = verbs(
            &state,
            post_route(ietf::create),
            head_route(ietf::offset)
                .patch(ietf::append)
                .delete(ietf::cancel),
        );
        (by_protocol(tus.0, draft.0), by_protocol(tus.1, draft.1))
    } else {
        tus
    };
    let base = state.config().base_path.clone();
    let bare = base.trim_end_matches('/').to_owned();
    let mut router = Router::new().route(&base, collection.clone()).route(
        &format!("{base}{{id}}"),
        upload.layer(axum::middleware::from_fn_with_state(
            state.clone(),
            access::owner_only,
        )),
    );
    if !bare.is_empty() {
        router = router.route(&bare, collection);
    }
    if state.config().cors {
        router.layer(axum::middleware::from_fn(cors::middleware))
    } else {
        router
    }
}

/// The verbs of the collection and of one upload, given those that differ between tus and the
/// IETF draft: creation, and HEAD, PATCH and DELETE on an upload.
fn verbs(
    state: &TusState,
    create: MethodRouter<TusState>,
    upload: MethodRouter<TusState>,
) -> (MethodRouter, MethodRouter) {
    let collection = create.options(options::handle);
    let upload = upload
        .get(download::handle)
        .post(method_override::handle)
        .options(options::on_upload);
    (
        collection.with_state(state.clone()),
        upload.with_state(state.clone()),
    )
}

/// Chooses the protocol once per request: one carrying `Upload-Draft-Interop-Version: 8` goes to
/// the draft's verbs, any other to tus's.
fn by_protocol(tus: MethodRouter, draft: MethodRouter) -> MethodRouter {
    any_service(tower::service_fn(move |request: Request| {
        let verbs = if is_draft_request(request.headers()) {
            draft.clone()
        } else {
            tus.clone()
        };
        verbs.oneshot(request)
    }))
}

/// Rejects requests that do not speak tus 1.0.0 (412).
fn require_version(headers: &HeaderMap) -> Result<(), TusError> {
    match headers.get(TUS_RESUMABLE) {
        Some(v) if v == TUS_VERSION => Ok(()),
        _ => Err(TusError::UnsupportedVersion),
    }
}

/// A header map holding `Tus-Resumable`, which every answer but OPTIONS carries.
fn tus_headers() -> HeaderMap {
    let mut out = HeaderMap::new();
    out.insert(TUS_RESUMABLE, HeaderValue::from_static(TUS_VERSION));
    out
}

fn header_u64(n: u64) -> HeaderValue {
    HeaderValue::from(n)
}
