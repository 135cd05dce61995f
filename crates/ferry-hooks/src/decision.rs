//! A receiver's answer turned into plain, checked decisions a library can act on without
//! knowing the wire format: go on (perhaps with a changed answer, id, metadata or storage key),
//! or refuse with a ready HTTP reply.
//!
//! What applies to which hook follows tusd (`pkg/hooks/hooks.go`): `RejectUpload` and
//! `ChangeFileInfo` only in pre-create, `RejectTermination` only in pre-terminate, `StopUpload`
//! only in post-receive; `HTTPResponse` changes the answer of pre-create, pre-finish and
//! pre-terminate, and is the reply of a rejection or a stop. A refusal without a status is a
//! 400, as tusd's `ERR_UPLOAD_REJECTED`, `ERR_UPLOAD_TERMINATION_REJECTED` and
//! `ERR_UPLOAD_STOPPED` are; without a body it gets a short plain-text message.
//!
//! Ferry is stricter than tusd where a hook could hurt the server: a custom id is limited to
//! `[A-Za-z0-9_-]{1,128}` (tusd allows `/`, `.`, `%` and more, which would reach paths and
//! object keys), a storage key to relative segments of `[A-Za-z0-9._-]` (tusd lets `Path`
//! point anywhere on disk), and framing headers (`Content-Length`, `Transfer-Encoding`,
//! hop-by-hop headers) are dropped from replies because the server frames the body itself.

use std::collections::BTreeMap;
use std::fmt;

use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};

use crate::error::HookError;
use crate::kind::HookType;
use crate::response::{HookResponse, HttpResponseChange};

/// Longest custom upload id a hook may set.
pub const MAX_ID_LEN: usize = 128;
/// Longest storage key a hook may set.
pub const MAX_STORAGE_KEY_LEN: usize = 1024;

/// What a blocking hook decided.
#[derive(Debug, Clone, PartialEq)]
pub enum HookDecision {
    /// Go on, applying these changes.
    Continue {
        /// Changes to the success answer (pre-create's 201, pre-finish's final answer).
        response: ResponseOverride,
        /// Changes to the upload before it is created (pre-create only; empty otherwise).
        changes: FileChanges,
    },
    /// Refuse (pre-create: the upload is not created; pre-terminate: it is not deleted) and
    /// answer the client with this reply.
    Reject(HookReply),
}

impl HookDecision {
    /// Go on unchanged: what a disabled hook or an empty answer means.
    pub fn proceed() -> Self {
        Self::Continue {
            response: ResponseOverride::default(),
            changes: FileChanges::default(),
        }
    }

    /// Checks a receiver's answer to `hook` and keeps what applies to it.
    pub fn from_response(hook: HookType, response: HookResponse) -> Result<Self, HookError> {
        let rejected = match hook {
            HookType::PreCreate => response.reject_upload.then_some(Refusal::Upload),
            HookType::PreTerminate => response.reject_termination.then_some(Refusal::Termination),
            _ => None,
        };
        if let Some(refusal) = rejected {
            return Ok(Self::Reject(HookReply::refusal(
                hook,
                refusal,
                &response.http_response,
            )?));
        }
        let response_override = match hook {
            HookType::PreCreate | HookType::PreFinish | HookType::PreTerminate => {
                ResponseOverride::from_wire(hook, &response.http_response)?
            }
            _ => ResponseOverride::default(),
        };
        let changes = match hook {
            HookType::PreCreate => FileChanges::from_wire(hook, response.change_file_info)?,
            _ => FileChanges::default(),
        };
        Ok(Self::Continue {
            response: response_override,
            changes,
        })
    }

    /// The reply that stops a running upload, if a post-receive answer asks for it.
    pub fn stop_from_response(
        hook: HookType,
        response: &HookResponse,
    ) -> Result<Option<HookReply>, HookError> {
        if hook != HookType::PostReceive || !response.stop_upload {
            return Ok(None);
        }
        HookReply::refusal(hook, Refusal::Stop, &response.http_response).map(Some)
    }
}

#[derive(Clone, Copy)]
enum Refusal {
    Upload,
    Termination,
    Stop,
}

impl Refusal {
    fn message(self) -> &'static str {
        match self {
            Self::Upload => "upload rejected by the server\n",
            Self::Termination => "deletion of the upload rejected by the server\n",
            Self::Stop => "upload stopped by the server\n",
        }
    }
}

/// A complete answer for the client: status, extra headers and body.
#[derive(Debug, Clone, PartialEq)]
pub struct HookReply {
    /// A 4xx or 5xx status.
    pub status: StatusCode,
    /// Headers to set on the answer (`Content-Type` among them).
    pub headers: HeaderMap,
    /// The body, verbatim.
    pub body: String,
}

impl HookReply {
    /// The receiver's reply merged over the default one, as tusd merges a hook's
    /// `HTTPResponse` over its own error: a non-zero status, a non-empty body and each header
    /// replace the default's.
    fn refusal(
        hook: HookType,
        refusal: Refusal,
        wire: &HttpResponseChange,
    ) -> Result<Self, HookError> {
        let status = match status_of(hook, wire.status_code)? {
            None => StatusCode::BAD_REQUEST,
            Some(status) if status.is_client_error() || status.is_server_error() => status,
            Some(status) => {
                return Err(HookError::invalid(
                    hook,
                    format!("a refusal needs a 4xx or 5xx status, got {status}"),
                ));
            }
        };
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        headers.extend(headers_of(hook, &wire.header)?);
        let body = if wire.body.is_empty() {
            refusal.message().to_owned()
        } else {
            wire.body.clone()
        };
        Ok(Self {
            status,
            headers,
            body,
        })
    }
}

impl HookReply {
    /// The reply as an `http` response (axum answers `http::Response<String>` as is).
    pub fn into_http_response(self) -> http::Response<String> {
        let mut response = http::Response::new(self.body);
        *response.status_mut() = self.status;
        *response.headers_mut() = self.headers;
        response
    }
}

/// Changes a hook makes to a successful answer; `None` and empty mean unchanged.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResponseOverride {
    /// Replaces the status.
    pub status: Option<StatusCode>,
    /// Set on the answer, replacing headers of the same name.
    pub headers: HeaderMap,
    /// Replaces the body.
    pub body: Option<String>,
}

impl ResponseOverride {
    fn from_wire(hook: HookType, wire: &HttpResponseChange) -> Result<Self, HookError> {
        Ok(Self {
            status: status_of(hook, wire.status_code)?,
            headers: headers_of(hook, &wire.header)?,
            body: (!wire.body.is_empty()).then(|| wire.body.clone()),
        })
    }

    /// Whether nothing is changed.
    pub fn is_empty(&self) -> bool {
        self.status.is_none() && self.headers.is_empty() && self.body.is_none()
    }

    /// Sets the status and headers on `response`; the body, if replaced, is `self.body`.
    pub fn apply_head<B>(&self, response: &mut http::Response<B>) {
        if let Some(status) = self.status {
            *response.status_mut() = status;
        }
        for (name, value) in &self.headers {
            response.headers_mut().insert(name, value.clone());
        }
    }
}

/// Changes to an upload before it is created; `None` keeps the upload's own value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileChanges {
    /// Use this id instead of a generated one. The store must still refuse an id that exists.
    pub id: Option<CustomId>,
    /// Replace the whole metadata with this (an empty map clears it).
    pub metadata: Option<BTreeMap<String, String>>,
    /// Store the bytes under this key (relative to the data directory or bucket prefix).
    pub storage_key: Option<StorageKey>,
}

impl FileChanges {
    fn from_wire(
        hook: HookType,
        wire: crate::response::FileInfoChanges,
    ) -> Result<Self, HookError> {
        let id = if wire.id.is_empty() {
            None
        } else {
            Some(CustomId::parse(&wire.id).map_err(|why| HookError::invalid(hook, why))?)
        };
        if let Some(metadata) = &wire.metadata {
            for key in metadata.keys() {
                check_metadata_key(key).map_err(|why| HookError::invalid(hook, why))?;
            }
        }
        // tusd's filestore reads `Path`; object stores would read `Key`. Other entries name
        // nothing Ferry's stores can place, so they are ignored as tusd's stores ignore them.
        let storage_key = wire
            .storage
            .as_ref()
            .and_then(|storage| storage.get("Key").or_else(|| storage.get("Path")))
            .map(|raw| StorageKey::parse(raw).map_err(|why| HookError::invalid(hook, why)))
            .transpose()?;
        Ok(Self {
            id,
            metadata: wire.metadata,
            storage_key,
        })
    }

    /// Whether nothing is changed.
    pub fn is_empty(&self) -> bool {
        self.id.is_none() && self.metadata.is_none() && self.storage_key.is_none()
    }
}

/// An upload id chosen by a hook: 1 to [`MAX_ID_LEN`] characters of `[A-Za-z0-9_-]`, safe in
/// a URL, a file name and an object key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CustomId(String);

impl CustomId {
    /// Checks `raw`; the error says why it is refused.
    pub fn parse(raw: &str) -> Result<Self, String> {
        if raw.is_empty() || raw.len() > MAX_ID_LEN {
            return Err(format!(
                "ChangeFileInfo.ID must be 1 to {MAX_ID_LEN} characters, got {}",
                raw.len()
            ));
        }
        if !raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(format!(
                "ChangeFileInfo.ID may only contain A-Z a-z 0-9 _ -, got {raw:?}"
            ));
        }
        Ok(Self(raw.to_owned()))
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CustomId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A storage key chosen by a hook: `/`-separated segments of `[A-Za-z0-9._-]`, none empty,
/// `.` or `..`, at most [`MAX_STORAGE_KEY_LEN`] bytes; never absolute, never escaping.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StorageKey(String);

impl StorageKey {
    /// Checks `raw` (a leading `./`, as in tusd's documented example, is dropped).
    pub fn parse(raw: &str) -> Result<Self, String> {
        let key = raw.strip_prefix("./").unwrap_or(raw);
        if key.is_empty() || key.len() > MAX_STORAGE_KEY_LEN {
            return Err(format!(
                "ChangeFileInfo.Storage key must be 1 to {MAX_STORAGE_KEY_LEN} bytes, got {}",
                key.len()
            ));
        }
        let safe_segment = |segment: &str| {
            !segment.is_empty()
                && segment != "."
                && segment != ".."
                && segment
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        };
        if !key.split('/').all(safe_segment) {
            return Err(format!(
                "ChangeFileInfo.Storage key must be a relative path of A-Z a-z 0-9 . _ - segments, got {raw:?}"
            ));
        }
        Ok(Self(key.to_owned()))
    }

    /// The key, relative.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for StorageKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// tus metadata keys: non-empty, no spaces or commas (tus 1.0.0 `Upload-Metadata`).
fn check_metadata_key(key: &str) -> Result<(), String> {
    let valid = !key.is_empty() && key.bytes().all(|b| b.is_ascii_graphic() && b != b',');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "ChangeFileInfo.MetaData key {key:?} must be non-empty, visible ASCII without commas"
        ))
    }
}

/// `0` is "not set"; anything else must be a final status (200-599).
fn status_of(hook: HookType, code: i64) -> Result<Option<StatusCode>, HookError> {
    if code == 0 {
        return Ok(None);
    }
    u16::try_from(code)
        .ok()
        .filter(|code| (200..=599).contains(code))
        .and_then(|code| StatusCode::from_u16(code).ok())
        .map(Some)
        .ok_or_else(|| HookError::invalid(hook, format!("HTTPResponse.StatusCode {code}")))
}

/// Headers the server sets itself; a hook's values would corrupt the framing of the answer.
const FRAMING_HEADERS: [&str; 7] = [
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
];

fn headers_of(hook: HookType, wire: &BTreeMap<String, String>) -> Result<HeaderMap, HookError> {
    let mut headers = HeaderMap::new();
    for (name, value) in wire {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| HookError::invalid(hook, format!("header name {name:?}")))?;
        if FRAMING_HEADERS.contains(&name.as_str()) {
            tracing::debug!(%hook, header = %name, "dropping a framing header set by a hook");
            continue;
        }
        let value = HeaderValue::from_str(value)
            .map_err(|_| HookError::invalid(hook, format!("value of header {name}")))?;
        headers.insert(name, value);
    }
    Ok(headers)
}

#[cfg(test)]
mod tests;
