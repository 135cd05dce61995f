//! The write path tus and the IETF draft share, one function per step an upload goes through
//! (and so one place for each lifecycle event): [`create`]; [`Write::begin`] or [`first_bytes`]
//! (the client's slot, then the upload's lock, which ends a request still in flight for it);
//! [`Write::append`]; [`Write::finish`] (completion: pending finals waiting for a partial upload
//! are concatenated); [`terminate`]. Also the request checks both protocols make.
//!
//! Each step emits its lifecycle hooks ([`super::hooks`]): [`create`] pre-create (which may
//! refuse or change the upload) and post-create; [`Write::append`] post-receive while bytes
//! arrive; [`Write::finish`] pre-finish and post-finish when the write completed the upload;
//! [`terminate`] pre-terminate (which may refuse) and post-terminate. The request is captured
//! for them only when a hook is enabled.

use axum::body::Body;
use axum::http::{HeaderMap, header};
use ferry_auth::{Meter, Principal};
use ferry_body::{GuardedBody, Metered, Trailers};
use ferry_hooks::{HookType, HttpRequestInfo, ResponseOverride};

use super::body::{Bounded, write_error};
use super::hooks::{Caller, Progress};
use super::limits::SlotGuard;
use super::pending::finish_finals_of;
use super::state::TusState;
use crate::id::UploadId;
use crate::lock::UploadLease;
use crate::protocol::checksum::{ALL, Digests, Expected, HashingStream};
use crate::protocol::headers::UPLOAD_CHECKSUM;
use crate::protocol::{OFFSET_OCTET_STREAM, TusError};
use crate::store::now_secs;
use crate::store::{Concat, NewUpload, UploadInfo};

/// 413 for an upload length over the configured maximum size.
pub(super) fn check_size(state: &TusState, length: Option<u64>) -> Result<(), TusError> {
    match (state.config().max_size, length) {
        (Some(max), Some(len)) if len > max => Err(TusError::TooLarge),
        _ => Ok(()),
    }
}

/// The request as hooks describe it, when any hook is enabled.
pub(super) fn request_info(state: &TusState, caller: &Caller) -> Option<HttpRequestInfo> {
    state.any_enabled(&HookType::ALL).then(|| caller.info())
}

/// Creates an upload: pre-create may refuse it or change it first; post-create follows. An
/// upload created complete (length 0) finishes at once. Returns the hooks' changes to the 201.
/// With `bytes_follow` the caller writes the first bytes next with [`first_bytes`], which makes
/// the creation durable together with them; unless a hook is told of the upload before that.
pub(super) async fn create(
    state: &TusState,
    request: Option<&HttpRequestInfo>,
    mut upload: NewUpload,
    bytes_follow: bool,
) -> Result<(UploadInfo, ResponseOverride), TusError> {
    let mut response = match request {
        Some(request) => state.pre_create(request, &mut upload, None).await?,
        None => ResponseOverride::default(),
    };
    let info = match request {
        None if bytes_follow => state.store().create_unsettled(upload).await?,
        _ => state.store().create(upload).await?,
    };
    tracing::info!(upload = %info.id, length = info.length, "upload created");
    if let Some(request) = request {
        state.notify(HookType::PostCreate, &info, request);
        if info.is_complete() {
            let finished = state.finished(&info, request).await?;
            merge(&mut response, finished);
        }
    }
    Ok((info, response))
}

/// Adds `later`'s changes over `response`'s.
pub(super) fn merge(response: &mut ResponseOverride, later: ResponseOverride) {
    if later.status.is_some() {
        response.status = later.status;
    }
    response.headers.extend(later.headers);
    if later.body.is_some() {
        response.body = later.body;
    }
}

/// Creation-with-upload: writes the first bytes of the upload just created. The upload exists
/// whatever happens to them, so their failure is not the request's: the write carries what was
/// durably stored, for a 201 the client resumes from. The creation is durable when it returns.
pub(super) async fn first_bytes(
    state: &TusState,
    info: UploadInfo,
    caller: &Caller,
    body: Body,
    declared: Option<u64>,
    checksum: Checksum,
) -> Result<Write, TusError> {
    let id = info.id.clone();
    let written = write_first(state, info, caller, body, declared, checksum).await;
    // The creation's syncs, when its write did not make them (it failed or never began, or a
    // checksum staged the bytes): no answer names an upload a power loss could undo.
    state.store().settle(&id).await?;
    written
}

async fn write_first(
    state: &TusState,
    info: UploadInfo,
    caller: &Caller,
    body: Body,
    declared: Option<u64>,
    checksum: Checksum,
) -> Result<Write, TusError> {
    let mut write = Write::begin(state, &info.id, caller).await?;
    if let Err(e) = write.append(state, body, declared, checksum).await {
        // A hook's refusal is the request's answer, not a partial success.
        if matches!(e, TusError::Refused(_)) {
            return Err(e);
        }
        tracing::debug!(upload = %write.info.id, error = %e, "first bytes not stored whole");
        write.info = state.store().info(&write.info.id).await?;
    }
    Ok(write)
}

/// Removes an upload and its bytes, ending any request in flight for it first. pre-terminate
/// may refuse; post-terminate follows. Returns the hook's changes to the answer.
pub(super) async fn terminate(
    state: &TusState,
    id: &UploadId,
    caller: &Caller,
) -> Result<ResponseOverride, TusError> {
    let terminate = state
        .store()
        .as_terminate()
        .ok_or(TusError::UnsupportedExtension)?;
    let _lease = state.lock().acquire(id).await?;
    let hooked = state.any_enabled(&[HookType::PreTerminate, HookType::PostTerminate]);
    let before = match hooked {
        true => Some((state.store().info(id).await?, caller.info())),
        false => None,
    };
    let response = match &before {
        Some((info, request)) => state.pre_terminate(info, request).await?,
        None => ResponseOverride::default(),
    };
    terminate.terminate(id).await?;
    tracing::info!(upload = %id, "upload terminated");
    if let Some((info, request)) = &before {
        state.notify(HookType::PostTerminate, info, request);
    }
    Ok(response)
}

/// A write to one upload in progress: the client's slot and the upload's lock are held until
/// it is finished or dropped.
pub(super) struct Write {
    /// The upload as this write leaves it.
    pub(super) info: UploadInfo,
    lease: UploadLease,
    _slot: Option<SlotGuard>,
    /// The request, for the hooks (when any is enabled).
    request: Option<HttpRequestInfo>,
    /// Who writes, under `--auth-secret`: bytes of an upload whose length is not known yet are
    /// charged to its quota as they arrive, and the rest once the length is set.
    principal: Option<Principal>,
    /// Whether the upload was complete before this write: finishing is reported once.
    was_complete: bool,
}

impl Write {
    /// Starts a write to `id`: takes the client's slot (429 past its cap; first, so a client
    /// over its cap never ends another request), then the upload's lock, then loads the upload,
    /// refusing an expired (410) or final (403) one.
    pub(super) async fn begin(
        state: &TusState,
        id: &UploadId,
        caller: &Caller,
    ) -> Result<Self, TusError> {
        let slot = state.slots().take(caller.extensions(), caller.headers())?;
        let lease = state.lock().acquire(id).await?;
        let info = state.store().info(id).await?;
        state.check_not_expired(&info)?;
        if info.is_final() {
            return Err(TusError::FinalUpload);
        }
        Ok(Self {
            was_complete: info.is_complete(),
            info,
            lease,
            _slot: slot,
            request: request_info(state, caller),
            principal: caller.extensions().get::<Principal>().cloned(),
        })
    }

    /// Sets the length of an upload whose length was deferred. The caller checked it is unset
    /// and not below the offset. The bytes stored so far were charged as they arrived; the rest
    /// of the length is charged now (413 or 429 when it does not fit), before it is set.
    pub(super) async fn set_length(
        &mut self,
        state: &TusState,
        length: u64,
    ) -> Result<(), TusError> {
        let defer = state
            .store()
            .as_defer_length()
            .ok_or(TusError::UnsupportedExtension)?;
        let offset = self.info.offset;
        if let Some(principal) = &self.principal {
            principal.charge_rest(offset, length)?;
        }
        match defer.set_length(&self.info.id, length).await {
            Ok(info) => self.info = info,
            Err(e) => {
                if let Some(principal) = &self.principal {
                    principal.refund(length.saturating_sub(offset));
                }
                return Err(e.into());
            }
        }
        Ok(())
    }

    /// The meter for this write's body: an upload whose length is not known yet is charged
    /// as its bytes arrive (those stored so far were charged already). A declared body is
    /// charged whole before it is read, so one over the quota stores nothing. Returns the meter
    /// the write settles afterwards and the budget the body is read under (none when charged
    /// whole).
    fn meter(&self, declared: Option<u64>) -> Result<(Option<Meter>, Option<Meter>), TusError> {
        let meter = match (&self.principal, self.info.length) {
            (Some(principal), None) => principal.meter(self.info.offset),
            _ => None,
        };
        match (meter, declared) {
            (Some(meter), Some(n)) => {
                meter.reserve(n)?;
                Ok((Some(meter), None))
            }
            (meter, _) => Ok((meter.clone(), meter)),
        }
    }

    /// Streams `body` into the upload at its offset and returns the new offset. Never stores
    /// past the upload's length (or the maximum size while the length is deferred). With a
    /// checksum, a chunk that does not match, or that did not arrive whole, is cut off again.
    pub(super) async fn append(
        &mut self,
        state: &TusState,
        body: Body,
        declared: Option<u64>,
        checksum: Checksum,
    ) -> Result<u64, TusError> {
        let (id, offset) = (&self.info.id, self.info.offset);
        let limit = self.info.length.or(state.config().max_size);
        let remaining = limit.map_or(u64::MAX, |l| l.saturating_sub(offset));
        // While the length is deferred the limit is the server's maximum size: running past it
        // makes the upload too large, not the body longer than the upload.
        let deferred = self.info.length.is_none();
        let past_limit = || match deferred {
            true => TusError::TooLarge,
            false => TusError::BodyTooLong,
        };
        if declared.is_some_and(|n| n > remaining) {
            return Err(past_limit());
        }
        let (meter, budget) = self.meter(declared)?;
        let idle = state.config().idle_timeout;
        let guarded = GuardedBody::new(body, idle).stopped_by(self.lease.stop_signal());
        let trailers = guarded.trailers();
        let metered = Metered::new(guarded, budget);
        let progress = Progress::new(metered, state, &self.info, remaining, self.request.as_ref());
        let mut body = Bounded::new(progress, remaining);
        let store = state.store();
        let algorithms: &[_] = match &checksum {
            Checksum::None => &[],
            Checksum::Header(expected) => std::slice::from_ref(&expected.algorithm),
            Checksum::Trailer => &ALL,
        };
        // A checksummed chunk is held aside and appended only once its digest matched.
        let stage = match checksum {
            Checksum::None => None,
            _ => Some(store.as_stage().ok_or(TusError::UnsupportedExtension)?),
        };
        let (written, digests) = match stage {
            None => (store.write(id, offset, &mut body).await, None),
            Some(stage) => {
                let mut hashing = HashingStream::new(&mut body, algorithms);
                let staged = stage.stage(id, offset, &mut hashing).await;
                (staged.map(|n| offset + n), Some(hashing.finish()))
            }
        };
        let outcome = match written {
            // A body may run past the length: what fitted is stored, the rest is refused.
            // Reading on to the end also collects the trailers.
            Ok(n) if n - offset == remaining && body.went_past_limit().await => Err(past_limit()),
            Ok(n) => match (&checksum, digests) {
                (Checksum::Header(expected), Some(d)) if !d.matches(expected) => {
                    Err(TusError::ChecksumMismatch)
                }
                (Checksum::Trailer, Some(d)) => verify_trailer(&trailers, &d).map(|()| n),
                _ => Ok(n),
            },
            // A post-receive answer stopped the upload: its reply is the answer.
            Err(_) if body.inner_mut().stopped().is_some() => {
                let reply = body.inner_mut().stopped().ok_or(TusError::Internal)?;
                Err(TusError::Refused(Box::new(reply.into_http_response())))
            }
            // The quota stopped the body: what fitted is stored, the answer is the quota's.
            Err(e) => match meter.as_ref().and_then(Meter::refusal) {
                Some(refusal) => Err(refusal.into()),
                None => Err(write_error(e)),
            },
        };
        let new_offset = match (stage, outcome) {
            (None, outcome) => outcome,
            (Some(stage), Ok(_)) => stage.commit(id).await.map_err(TusError::from),
            (Some(stage), Err(e)) => match stage.discard(id).await {
                Ok(()) => Err(e),
                Err(discard) => Err(discard.into()),
            },
        };
        if let Some(meter) = &meter {
            // Only what was stored stays charged.
            let now = match &new_offset {
                Ok(n) => *n,
                Err(_) => store.info(id).await.map_or(offset, |info| info.offset),
            };
            meter.keep(now.saturating_sub(offset));
        }
        let new_offset = new_offset?;
        body.inner_mut().finish(new_offset);
        tracing::debug!(upload = %id, from = offset, to = new_offset, "bytes stored");
        self.info.offset = new_offset;
        self.info.updated_at = now_secs();
        Ok(new_offset)
    }

    /// Ends the write and returns the upload as it now is, with the hooks' changes to the
    /// answer. When this write completed the upload, pre-finish holds the answer until the
    /// application answered, then post-finish is sent; a partial upload that is complete
    /// finishes the pending final uploads waiting for it.
    pub(super) async fn finish(
        self,
        state: &TusState,
    ) -> Result<(UploadInfo, ResponseOverride), TusError> {
        let completed = self.info.is_complete() && !self.was_complete;
        if self.info.is_complete() && self.info.concat == Some(Concat::Partial) {
            finish_finals_of(state, &self.info.id).await;
        }
        let response = match (&self.request, completed) {
            (Some(request), true) => state.finished(&self.info, request).await?,
            _ => ResponseOverride::default(),
        };
        Ok((self.info, response))
    }
}

/// `Content-Type: application/offset+octet-stream` (parameters are not allowed).
pub(super) fn is_offset_stream(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).map(|v| v.as_bytes()) == Some(OFFSET_OCTET_STREAM.as_bytes())
}

/// How a body's checksum is given (checksum and checksum-trailer).
#[derive(Debug)]
pub(super) enum Checksum {
    None,
    Header(Expected),
    /// `Trailer: Upload-Checksum`: the digest follows the body; every algorithm is hashed.
    Trailer,
}

/// `Upload-Checksum` as a header or announced as a trailer; 400 when the store cannot discard a
/// failed chunk.
pub(super) fn parse_checksum(state: &TusState, headers: &HeaderMap) -> Result<Checksum, TusError> {
    let trailer = headers
        .get_all(header::TRAILER)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|name| name.trim().eq_ignore_ascii_case(UPLOAD_CHECKSUM.as_str()));
    let raw = headers.get(UPLOAD_CHECKSUM);
    if raw.is_none() && !trailer {
        return Ok(Checksum::None);
    }
    if state.store().as_stage().is_none() {
        return Err(TusError::UnsupportedExtension);
    }
    match raw {
        Some(raw) => {
            let raw = raw.to_str().map_err(|_| TusError::InvalidChecksum)?;
            Expected::parse(raw).map(Checksum::Header)
        }
        None => Ok(Checksum::Trailer),
    }
}

/// Checks the trailer's digest against what was hashed.
fn verify_trailer(trailers: &Trailers, digests: &Digests) -> Result<(), TusError> {
    let trailers = trailers.lock().unwrap_or_else(|p| p.into_inner()).take();
    let raw = trailers
        .as_ref()
        .and_then(|t| t.get(UPLOAD_CHECKSUM))
        .ok_or(TusError::InvalidChecksum)?;
    let expected = Expected::parse(raw.to_str().map_err(|_| TusError::InvalidChecksum)?)?;
    if digests.matches(&expected) {
        Ok(())
    } else {
        Err(TusError::ChecksumMismatch)
    }
}
