//! The tus destination: creates the upload (or resumes `uploadUrl`), asks the server for its
//! offset, re-reads the source from there and PATCHes it in chunks; deferred length when the
//! source does not say how long it is. Failed attempts are retried; cancel terminates the
//! upload.
//!
//! The protocol pieces (header names, metadata encoding) are the client's side of what
//! `ferry-tus` parses; they are written out here because the companion must not depend on the
//! server crate (it never touches a store). Requests to this server's own endpoint are handed
//! to it in process when the binary attached it ([`super::tus_call`], [`super::local`]).

use base64::Engine as _;
use ferry_hooks::Storage;
use reqwest::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderName, HeaderValue, LOCATION};
use reqwest::{Method, StatusCode};
use url::Url;

use super::destination::Destination;
use super::feeder::BodyStream;
use super::request::{UploadBody, allowed, non_empty};
use super::tus_call::{Answer, TusCall};
use super::{Done, Feeder, Transfer, TransferError};
use crate::error::CompanionError;
use crate::state::AppState;

const UPLOAD_OFFSET: HeaderName = HeaderName::from_static("upload-offset");
const UPLOAD_LENGTH: HeaderName = HeaderName::from_static("upload-length");

/// The checkpoint hint holding the tus upload's URL.
const UPLOAD_URL_HINT: &str = "upload_url";

/// One tus upload being driven.
#[derive(Debug)]
pub struct TusDestination {
    endpoint: Option<Url>,
    upload_url: Option<Url>,
}

impl TusDestination {
    /// `endpoint` and/or `uploadUrl` (an upload to resume), both held to the allowlist.
    pub fn parse(
        state: &AppState,
        body: &UploadBody,
        endpoint: Option<Url>,
    ) -> Result<Box<dyn Destination>, CompanionError> {
        let upload_url = non_empty(body.upload_url.as_deref())
            .map(|raw| allowed(state, raw))
            .transpose()?;
        if endpoint.is_none() && upload_url.is_none() {
            return Err(CompanionError::BadRequest(
                "no destination specified".into(),
            ));
        }
        Ok(Box::new(Self {
            endpoint,
            upload_url,
        }))
    }

    /// PATCHes the source from the feeder's position to its end, chunk by chunk.
    async fn patch_all(
        &self,
        transfer: &Transfer,
        url: &Url,
        feeder: Feeder,
        mut announce: bool,
    ) -> Result<(), TransferError> {
        let chunk = transfer.state.config().tus_chunk_size.max(1);
        let total = feeder.total();
        loop {
            let (position, eof) = feeder.fill().await?;
            if eof {
                if announce {
                    // Deferred length: announce it now that the source has ended.
                    let req = patch(transfer, url, position, Some(position), Some(0));
                    let resp = req.send(transfer, None).await;
                    let resp = checked(resp, StatusCode::NO_CONTENT, "PATCH")?;
                    check_offset(&resp, position)?;
                }
                return Ok(());
            }
            let len = total.map(|t| (t - position).min(chunk));
            let length = if announce { total } else { None };
            announce &= length.is_none();
            let (body, outcome): (BodyStream, _) = feeder.stream(len.unwrap_or(chunk));
            let req = patch(transfer, url, position, length, len);
            let resp = outcome.settle(req.send(transfer, Some(body)).await, "tus PATCH")?;
            let resp = status_ok(resp, StatusCode::NO_CONTENT, "PATCH")?;
            check_offset(&resp, feeder.position().await)?;
        }
    }

    /// The destination's offset and length for the upload at `url`.
    async fn head(
        &mut self,
        transfer: &Transfer,
        url: &Url,
    ) -> Result<(u64, Option<u64>), TransferError> {
        let resp = TusCall::new(transfer, Method::HEAD, url)
            .send(transfer, None)
            .await
            .map_err(|e| TransferError::Retryable(format!("tus HEAD: {e}")))?;
        if matches!(resp.status, StatusCode::NOT_FOUND | StatusCode::GONE)
            && self.endpoint.is_some()
        {
            // The upload is gone: start a new one on the next attempt.
            self.upload_url = None;
            return Err(TransferError::Retryable("tus upload gone".into()));
        }
        let resp = status_ok(resp, StatusCode::OK, "HEAD")?;
        let offset = resp
            .u64(&UPLOAD_OFFSET)
            .ok_or_else(|| TransferError::Retryable("tus HEAD: invalid offset".into()))?;
        Ok((offset, resp.u64(&UPLOAD_LENGTH)))
    }

    /// Creates the upload; its URL, held to the allowlist.
    async fn create(&self, transfer: &Transfer, total: Option<u64>) -> Result<Url, TransferError> {
        let endpoint = self
            .endpoint
            .as_ref()
            .ok_or_else(|| TransferError::Fatal("upload failed: no tus endpoint".into()))?;
        let mut req = TusCall::new(transfer, Method::POST, endpoint).header(CONTENT_LENGTH, 0u64);
        match total {
            Some(len) => req = req.header(UPLOAD_LENGTH, len),
            None => {
                let defer = HeaderName::from_static("upload-defer-length");
                req = req.header(defer, HeaderValue::from_static("1"));
            }
        }
        let meta = encode_metadata(&transfer.metadata);
        if !meta.is_empty() {
            // Base64 values after printable keys: always a valid header value.
            let meta = HeaderValue::from_str(&meta)
                .map_err(|_| TransferError::Fatal("upload failed: invalid metadata".into()))?;
            req = req.header(HeaderName::from_static("upload-metadata"), meta);
        }
        let resp = checked(req.send(transfer, None).await, StatusCode::CREATED, "POST")?;
        let location = resp
            .headers
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| TransferError::Fatal("upload failed: missing Location header".into()))?;
        let url = endpoint
            .join(location)
            .map_err(|_| TransferError::Fatal("upload failed: invalid Location header".into()))?;
        if !transfer.state.allowlist().allows(&url) {
            return Err(TransferError::Fatal(
                "upload failed: Location outside the allowed destinations".into(),
            ));
        }
        Ok(url)
    }
}

#[async_trait::async_trait]
impl Destination for TusDestination {
    /// One attempt from the destination's current offset to the end.
    async fn attempt(&mut self, transfer: &Transfer) -> Result<Done, TransferError> {
        let (offset, length) = match self.upload_url.clone() {
            Some(url) => self.head(transfer, &url).await?,
            None => (0, None),
        };
        let feeder = transfer.open(offset).await?;
        if let (Some(len), Some(total)) = (length, feeder.total()) {
            if len != total {
                return Err(TransferError::Fatal(
                    "Upload error: the source length changed".into(),
                ));
            }
        }
        transfer.progress.set_total(feeder.total().or(length));
        // Whether the destination still needs to be told the length (deferred length).
        let (upload_url, announce) = match &self.upload_url {
            Some(url) => (url.clone(), length.is_none()),
            None => {
                let url = self.create(transfer, feeder.total()).await?;
                self.upload_url = Some(url.clone());
                (url, feeder.total().is_none())
            }
        };
        // Another instance taking this transfer over continues this upload.
        transfer.remember(UPLOAD_URL_HINT, upload_url.as_str());
        self.patch_all(transfer, &upload_url, feeder, announce)
            .await?;
        Ok(Done {
            url: upload_url.to_string(),
            response: None,
        })
    }

    /// Best-effort termination.
    async fn cancel(&mut self, transfer: &Transfer) {
        let Some(url) = &self.upload_url else { return };
        let sent = TusCall::new(transfer, Method::DELETE, url)
            .send(transfer, None)
            .await;
        if let Err(e) = sent {
            tracing::info!(error = %e, "tus termination failed");
        }
    }

    fn retries(&self) -> bool {
        true
    }

    fn restore(&mut self, hints: &crate::jobs::Hints) {
        if let Some(url) = hints.get(UPLOAD_URL_HINT).and_then(|u| Url::parse(u).ok()) {
            self.upload_url = Some(url);
        }
    }

    /// The tus upload the file became.
    fn storage(&self, done: &Done) -> Storage {
        Storage::default()
            .with("Type", "tus")
            .with("URL", done.url.as_str())
    }
}

/// A PATCH at `offset`, announcing `length` when given, of a body of `content_length` bytes
/// when known.
fn patch(
    transfer: &Transfer,
    url: &Url,
    offset: u64,
    length: Option<u64>,
    content_length: Option<u64>,
) -> TusCall {
    let content_type = HeaderValue::from_static("application/offset+octet-stream");
    let mut req = TusCall::new(transfer, Method::PATCH, url)
        .header(UPLOAD_OFFSET, offset)
        .header(CONTENT_TYPE, content_type);
    if let Some(len) = content_length {
        req = req.header(CONTENT_LENGTH, len);
    }
    if let Some(len) = length {
        req = req.header(UPLOAD_LENGTH, len);
    }
    req
}

/// A sent request's answer, when its status is `want`.
fn checked(
    sent: Result<Answer, String>,
    want: StatusCode,
    verb: &str,
) -> Result<Answer, TransferError> {
    let resp = sent.map_err(|e| TransferError::Retryable(format!("tus {verb}: {e}")))?;
    status_ok(resp, want, verb)
}

fn status_ok(resp: Answer, want: StatusCode, verb: &str) -> Result<Answer, TransferError> {
    let s = resp.status;
    if s == want || (want == StatusCode::NO_CONTENT && s == StatusCode::OK) {
        return Ok(resp);
    }
    let msg = format!("upload failed: tus {verb} answered {}", s.as_u16());
    if s.is_server_error() || matches!(s.as_u16(), 409 | 423 | 429) {
        Err(TransferError::Retryable(msg))
    } else {
        Err(TransferError::Fatal(msg))
    }
}

fn check_offset(resp: &Answer, expected: u64) -> Result<(), TransferError> {
    match resp.u64(&UPLOAD_OFFSET) {
        Some(o) if o == expected => Ok(()),
        _ => Err(TransferError::Retryable("tus PATCH: invalid offset".into())),
    }
}

/// `key base64(value),...` as tus wants.
fn encode_metadata(meta: &std::collections::BTreeMap<String, String>) -> String {
    meta.iter()
        .filter(|(k, _)| !k.is_empty() && k.bytes().all(|b| b.is_ascii_graphic() && b != b','))
        .map(|(k, v)| {
            format!(
                "{k} {}",
                base64::engine::general_purpose::STANDARD.encode(v)
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}
