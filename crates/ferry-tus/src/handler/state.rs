//! The endpoint's settings ([`TusConfig`]) and the state its handlers share ([`TusState`]): the
//! store, the settings, the per-client slots, and what follows from them (the extensions to
//! advertise, `Location`, expiry). Verbs take it from here, not from the module that mounts them.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use axum::http::{HeaderMap, HeaderValue};
use ferry_hooks::{Hooks, NoHooks};

use super::limits::ClientSlots;
use crate::id::UploadId;
use crate::lock::{LocalLocks, UploadLock};
use crate::protocol::TusError;
use crate::protocol::headers::UPLOAD_EXPIRES;
use crate::store::{Store, UploadInfo, now_secs};

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

    pub(super) fn store(&self) -> &dyn Store {
        self.inner.store.as_ref()
    }

    pub(super) fn config(&self) -> &TusConfig {
        &self.inner.config
    }

    pub(super) fn lock(&self) -> &dyn UploadLock {
        self.inner.config.lock.as_ref()
    }

    pub(super) fn slots(&self) -> &Arc<ClientSlots> {
        &self.inner.slots
    }

    /// Expiry applies when configured and the store can both find and delete stale uploads.
    pub(super) fn expiry(&self) -> Option<Duration> {
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

    pub(super) fn location(&self, id: &UploadId) -> String {
        format!("{}{id}", self.config().base_path)
    }

    /// `Location` for an upload of this endpoint.
    pub(super) fn location_header(&self, id: &UploadId) -> Result<HeaderValue, TusError> {
        // Fails only for a configured base path holding bytes no header may carry.
        HeaderValue::from_str(&self.location(id)).map_err(|_| TusError::Internal)
    }

    /// When an unfinished upload expires (Unix seconds), if it ever does.
    pub(super) fn expires_at(&self, info: &UploadInfo) -> Option<u64> {
        let expiry = self.expiry()?;
        (!info.is_complete()).then(|| info.updated_at.saturating_add(expiry.as_secs()))
    }

    /// 410 for an upload past its expiry that the sweeper has not reclaimed yet.
    pub(super) fn check_not_expired(&self, info: &UploadInfo) -> Result<(), TusError> {
        match self.expires_at(info) {
            Some(at) if at <= now_secs() => Err(TusError::Gone),
            _ => Ok(()),
        }
    }

    /// Adds `Upload-Expires` for uploads that will expire.
    pub(super) fn insert_expires(&self, info: &UploadInfo, out: &mut HeaderMap) {
        if let Some(at) = self.expires_at(info) {
            let when = UNIX_EPOCH + Duration::from_secs(at);
            if let Ok(v) = HeaderValue::from_str(&httpdate::fmt_http_date(when)) {
                out.insert(UPLOAD_EXPIRES, v);
            }
        }
    }
}
