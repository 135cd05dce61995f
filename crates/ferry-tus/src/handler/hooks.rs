//! The endpoint's lifecycle hooks (tusd's events, sent through [`ferry_hooks::Hooks`]): what
//! each event says about an upload, and what a blocking hook's answer does to the request.
//! [`super::write`] calls these at its steps, so tus and the IETF draft emit the same events:
//! pre-create and post-create around creation, post-receive while bytes arrive ([`Progress`]),
//! pre-finish and post-finish when an upload completes, pre-terminate and post-terminate
//! around termination.
//!
//! A blocking hook that cannot be asked fails the request with the hook error's status (502,
//! 504) and public message; a refusal is answered exactly as the hook chose. Notifications are
//! queued by the sender and never make the request wait.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::{ConnectInfo, FromRequestParts, OriginalUri};
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderMap, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use ferry_hooks::{
    HookDecision, HookError, HookEvent, HookReply, HookType, Hooks, HttpRequestInfo,
    ProgressThrottle, ResponseOverride, StopSignal, Storage, Upload,
};
use futures_util::Stream;

use super::state::TusState;
use crate::id::UploadId;
use crate::protocol::{Metadata, TusError};
use crate::store::{Concat, Location, NewUpload, UploadInfo};

/// The client's request, as far as the write path and its hooks need it: its method, URI (as
/// the client sent it), headers and extensions, taken once by this extractor; the body stays
/// the handler's.
pub(super) struct Caller(Parts);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        let uri = parts
            .extensions
            .get::<OriginalUri>()
            .map_or_else(|| parts.uri.clone(), |OriginalUri(uri)| uri.clone());
        let mut request = Request::new(());
        *request.method_mut() = parts.method.clone();
        *request.uri_mut() = uri;
        *request.version_mut() = parts.version;
        *request.headers_mut() = parts.headers.clone();
        *request.extensions_mut() = parts.extensions.clone();
        Ok(Self(request.into_parts().0))
    }
}

impl Caller {
    pub(super) fn headers(&self) -> &HeaderMap {
        &self.0.headers
    }

    pub(super) fn extensions(&self) -> &Extensions {
        &self.0.extensions
    }

    /// The request as hooks describe it (`HTTPRequest`).
    pub(super) fn info(&self) -> HttpRequestInfo {
        let peer = self
            .0
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| *addr);
        HttpRequestInfo::from_parts(&self.0.method, &self.0.uri, peer, &self.0.headers)
    }
}

impl TusState {
    pub(super) fn hooks(&self) -> &Arc<dyn Hooks> {
        &self.config().hooks
    }

    /// The upload as hooks describe it (`Upload`), with where its bytes are.
    pub(super) fn hook_upload(&self, info: &UploadInfo) -> Upload {
        let (is_final, partial_uploads) = match &info.concat {
            Some(Concat::Final(parts)) => {
                (true, Some(parts.iter().map(|p| p.to_string()).collect()))
            }
            _ => (false, None),
        };
        Upload {
            id: info.id.to_string(),
            size: info.length,
            offset: info.offset,
            metadata: metadata_text(&info.metadata),
            is_partial: info.concat == Some(Concat::Partial),
            is_final,
            partial_uploads,
            storage: self.store().location(info).map(storage_of),
        }
    }

    /// Sends a notification about `info` when that hook is enabled.
    pub(super) fn notify(&self, hook: HookType, info: &UploadInfo, request: &HttpRequestInfo) {
        if self.hooks().enabled(hook) {
            let event = HookEvent::new(hook, self.hook_upload(info), request.clone());
            self.hooks().notify(event);
        }
    }

    /// Asks a blocking hook; a refusal or a failure becomes the request's error.
    async fn ask(&self, event: HookEvent) -> Result<HookDecision, TusError> {
        match self.hooks().blocking(event).await {
            Ok(HookDecision::Reject(reply)) => Err(refused(reply)),
            Ok(decision) => Ok(decision),
            Err(e) => Err(hook_failed(&e)),
        }
    }

    /// pre-create: may refuse the upload, or change its id, metadata and storage key (applied
    /// to `new`). Returns the changes to the 201.
    pub(super) async fn pre_create(
        &self,
        request: &HttpRequestInfo,
        new: &mut NewUpload,
        parts: Option<&[UploadId]>,
    ) -> Result<ResponseOverride, TusError> {
        if !self.hooks().enabled(HookType::PreCreate) {
            return Ok(ResponseOverride::default());
        }
        let upload = Upload {
            size: new.length,
            metadata: metadata_text(&new.metadata),
            is_partial: new.partial,
            is_final: parts.is_some(),
            partial_uploads: parts.map(|p| p.iter().map(|id| id.to_string()).collect()),
            ..Upload::default()
        };
        let event = HookEvent::new(HookType::PreCreate, upload, request.clone());
        let HookDecision::Continue { response, changes } = self.ask(event).await? else {
            return Err(TusError::Internal);
        };
        if let Some(id) = changes.id {
            // ferry-hooks checked the same alphabet and bound, so this always parses.
            new.id = Some(UploadId::parse(id.as_str()).ok_or(TusError::Internal)?);
        }
        if let Some(metadata) = changes.metadata {
            new.metadata = Metadata(
                metadata
                    .into_iter()
                    .map(|(key, value)| (key, Some(value.into_bytes())))
                    .collect(),
            );
        }
        if let Some(key) = changes.storage_key {
            new.storage_key = Some(key.as_str().to_owned());
        }
        Ok(response)
    }

    /// An upload became complete: pre-finish (its answer may change the final response, and
    /// holds it until the receiver answered), then post-finish.
    pub(super) async fn finished(
        &self,
        info: &UploadInfo,
        request: &HttpRequestInfo,
    ) -> Result<ResponseOverride, TusError> {
        let mut response = ResponseOverride::default();
        if self.hooks().enabled(HookType::PreFinish) {
            let event =
                HookEvent::new(HookType::PreFinish, self.hook_upload(info), request.clone());
            if let HookDecision::Continue { response: r, .. } = self.ask(event).await? {
                response = r;
            }
        }
        self.notify(HookType::PostFinish, info, request);
        Ok(response)
    }

    /// pre-terminate: may refuse the deletion.
    pub(super) async fn pre_terminate(
        &self,
        info: &UploadInfo,
        request: &HttpRequestInfo,
    ) -> Result<ResponseOverride, TusError> {
        if !self.hooks().enabled(HookType::PreTerminate) {
            return Ok(ResponseOverride::default());
        }
        let event = HookEvent::new(
            HookType::PreTerminate,
            self.hook_upload(info),
            request.clone(),
        );
        match self.ask(event).await? {
            HookDecision::Continue { response, .. } => Ok(response),
            HookDecision::Reject(reply) => Err(refused(reply)),
        }
    }

    /// Whether any of `hooks` will be sent, so a request captures itself only when needed.
    pub(super) fn any_enabled(&self, hooks: &[HookType]) -> bool {
        hooks.iter().any(|&hook| self.hooks().enabled(hook))
    }
}

/// A hook's refusal as the request's answer.
fn refused(reply: HookReply) -> TusError {
    TusError::Refused(Box::new(reply.into_http_response()))
}

/// A hook that could not be asked: its status and public message; the cause is logged.
fn hook_failed(e: &HookError) -> TusError {
    tracing::warn!(error = %e.detail(), "blocking hook failed");
    TusError::HookFailed {
        status: e.status_code(),
        message: e.to_string(),
    }
}

/// tus metadata as hooks carry it: values as text (invalid UTF-8 replaced), a key without a
/// value as `""`.
fn metadata_text(metadata: &Metadata) -> std::collections::BTreeMap<String, String> {
    metadata
        .0
        .iter()
        .map(|(key, value)| {
            let text = value
                .as_deref()
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .unwrap_or_default();
            (key.clone(), text)
        })
        .collect()
}

/// A store's location in tusd's `Storage` vocabulary.
fn storage_of(location: Location) -> Storage {
    match location {
        Location::File { data, info } => Storage::filestore(&data, Some(&info)),
        Location::Object { bucket, key } => Storage::s3store(&bucket, &key),
    }
}

/// A successful answer with a hook's changes applied (status, headers, body).
pub(super) fn respond(
    status: StatusCode,
    headers: HeaderMap,
    change: ResponseOverride,
) -> Response {
    let mut response = (status, headers).into_response();
    change.apply_head(&mut response);
    if let Some(body) = change.body {
        *response.body_mut() = Body::from(body);
    }
    response
}

/// The error kind a body ends with when a post-receive answer stopped the upload.
const STOPPED: io::ErrorKind = io::ErrorKind::PermissionDenied;

/// A request body that reports its progress (post-receive, throttled) and ends when a
/// post-receive answer says `StopUpload`. Without post-receive enabled it only passes bytes on.
pub(super) struct Progress<S> {
    inner: S,
    tracker: Option<Tracker>,
}

struct Tracker {
    hooks: Arc<dyn Hooks>,
    event: HookEvent,
    throttle: ProgressThrottle,
    /// The highest offset the bytes seen so far can reach.
    limit: u64,
    stop: StopSignal,
    stopped: Pin<Box<dyn Future<Output = HookReply> + Send>>,
}

impl<S> Progress<S> {
    /// Tracks the writing of `info` from its offset, up to `limit` bytes more.
    pub(super) fn new(
        inner: S,
        state: &TusState,
        info: &UploadInfo,
        limit: u64,
        request: Option<&HttpRequestInfo>,
    ) -> Self {
        let tracker = request
            .filter(|_| state.hooks().enabled(HookType::PostReceive))
            .map(|request| {
                let stop = StopSignal::new();
                let waiting = stop.clone();
                Tracker {
                    hooks: state.hooks().clone(),
                    event: HookEvent::new(
                        HookType::PostReceive,
                        state.hook_upload(info),
                        request.clone(),
                    ),
                    throttle: ProgressThrottle::new(state.hooks().progress_interval(), info.offset),
                    limit: info.offset.saturating_add(limit),
                    stop,
                    stopped: Box::pin(async move { waiting.stopped().await }),
                }
            });
        Self { inner, tracker }
    }

    /// The stop reply, if a post-receive answer stopped the upload.
    pub(super) fn stopped(&self) -> Option<HookReply> {
        self.tracker.as_ref().and_then(|t| t.stop.reply())
    }

    /// The request ends with the upload at `offset`: reports it if it was not yet.
    pub(super) fn finish(&mut self, offset: u64) {
        if let Some(t) = &mut self.tracker {
            if t.throttle.finish(offset) {
                t.send(offset);
            }
        }
    }
}

impl Tracker {
    fn send(&mut self, offset: u64) {
        self.event.event.upload.offset = offset;
        self.hooks.notify_progress(self.event.clone(), &self.stop);
    }
}

impl<S: Stream<Item = io::Result<Bytes>> + Unpin> Stream for Progress<S> {
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(t) = &mut this.tracker {
            if t.stopped.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Some(Err(io::Error::new(STOPPED, "stopped by a hook"))));
            }
        }
        let polled = Pin::new(&mut this.inner).poll_next(cx);
        if let (Poll::Ready(Some(Ok(chunk))), Some(t)) = (&polled, &mut this.tracker) {
            let offset = t.event.event.upload.offset;
            let reached = offset.saturating_add(chunk.len() as u64).min(t.limit);
            t.event.event.upload.offset = reached;
            if t.throttle.tick(reached) {
                t.send(reached);
            }
        }
        polled
    }
}
