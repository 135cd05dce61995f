//! The tus destination: creates the upload (or resumes `uploadUrl`), asks the server for its
//! offset, re-reads the source from there and PATCHes it in chunks; deferred length when the
//! source does not say how long it is. Cancel terminates the upload.

use std::sync::Arc;

use base64::Engine as _;
use reqwest::header::{CONTENT_LENGTH, CONTENT_TYPE, LOCATION};
use reqwest::{Response, StatusCode};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use url::Url;

use super::source::{self, Feeder};
use super::{Ctx, Done, Fail};

const TUS_RESUMABLE: &str = "Tus-Resumable";
const UPLOAD_OFFSET: &str = "Upload-Offset";
const UPLOAD_LENGTH: &str = "Upload-Length";

/// One tus upload being driven.
#[derive(Debug)]
pub struct TusDest {
    endpoint: Option<Url>,
    upload_url: Option<Url>,
}

impl TusDest {
    pub fn new(endpoint: Option<Url>, upload_url: Option<Url>) -> Self {
        Self {
            endpoint,
            upload_url,
        }
    }

    /// One attempt from the destination's current offset to the end.
    pub async fn attempt(&mut self, ctx: &Ctx) -> Result<Done, Fail> {
        let (offset, length) = match self.upload_url.clone() {
            Some(url) => self.head(ctx, &url).await?,
            None => (0, None),
        };
        let mut feeder = source::open(ctx, offset).await?;
        if let (Some(len), Some(total)) = (length, feeder.total) {
            if len != total {
                return Err(Fail::Fatal(
                    "Upload error: the source length changed".into(),
                ));
            }
        }
        ctx.progress.set_total(feeder.total.or(length));
        // Whether the destination still needs to be told the length (deferred length).
        let (upload_url, announce) = match &self.upload_url {
            Some(url) => (url.clone(), length.is_none()),
            None => {
                let url = self.create(ctx, feeder.total).await?;
                self.upload_url = Some(url.clone());
                (url, feeder.total.is_none())
            }
        };
        feeder.fill().await?;
        self.patch_all(ctx, &upload_url, feeder, announce).await?;
        Ok(Done {
            url: upload_url.to_string(),
            response: None,
        })
    }

    async fn patch_all(
        &mut self,
        ctx: &Ctx,
        url: &Url,
        feeder: Feeder,
        mut announce: bool,
    ) -> Result<(), Fail> {
        let chunk = ctx.state.config().tus_chunk_size.max(1);
        let total = feeder.total;
        let feeder = Arc::new(Mutex::new(feeder));
        loop {
            let (position, eof) = {
                let mut f = feeder.lock().await;
                f.fill().await?;
                (f.position, f.eof)
            };
            if eof {
                if announce {
                    // Deferred length: announce it now that the source has ended.
                    let resp = self
                        .patch(
                            ctx,
                            url,
                            position,
                            Some(position),
                            reqwest::Body::from(Vec::new()),
                            Some(0),
                        )
                        .await?;
                    check_offset(&resp, position)?;
                }
                return Ok(());
            }
            let len = total.map(|t| (t - position).min(chunk));
            let failure = Arc::new(std::sync::Mutex::new(None));
            // Ends the body when this attempt is dropped (pause, cancel, stall).
            let stop = CancellationToken::new();
            let _stop_on_drop = stop.clone().drop_guard();
            let body = source::body(
                feeder.clone(),
                len.unwrap_or(chunk),
                failure.clone(),
                stop.clone(),
            );
            let length = if announce { total } else { None };
            announce &= length.is_none();
            let sent = self.patch(ctx, url, position, length, body, len).await;
            if let Some(fail) = failure.lock().ok().and_then(|mut f| f.take()) {
                return Err(fail);
            }
            let resp = sent?;
            let reached = feeder.lock().await.position;
            check_offset(&resp, reached)?;
        }
    }

    async fn patch(
        &self,
        ctx: &Ctx,
        url: &Url,
        offset: u64,
        length: Option<u64>,
        body: reqwest::Body,
        content_length: Option<u64>,
    ) -> Result<Response, Fail> {
        let mut req = ctx
            .state
            .destinations()
            .client()
            .patch(url.clone())
            .headers(ctx.req.headers.clone())
            .header(TUS_RESUMABLE, "1.0.0")
            .header(UPLOAD_OFFSET, offset)
            .header(CONTENT_TYPE, "application/offset+octet-stream")
            .body(body);
        if let Some(len) = content_length {
            req = req.header(CONTENT_LENGTH, len);
        }
        if let Some(len) = length {
            req = req.header(UPLOAD_LENGTH, len);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| Fail::Retryable(format!("tus PATCH: {e}")))?;
        status_ok(resp, StatusCode::NO_CONTENT, "PATCH")
    }

    async fn head(&mut self, ctx: &Ctx, url: &Url) -> Result<(u64, Option<u64>), Fail> {
        let resp = ctx
            .state
            .destinations()
            .client()
            .head(url.clone())
            .headers(ctx.req.headers.clone())
            .header(TUS_RESUMABLE, "1.0.0")
            .send()
            .await
            .map_err(|e| Fail::Retryable(format!("tus HEAD: {e}")))?;
        if matches!(resp.status(), StatusCode::NOT_FOUND | StatusCode::GONE)
            && self.endpoint.is_some()
        {
            // The upload is gone: start a new one on the next attempt.
            self.upload_url = None;
            return Err(Fail::Retryable("tus upload gone".into()));
        }
        let resp = status_ok(resp, StatusCode::OK, "HEAD")?;
        let offset = header_u64(&resp, UPLOAD_OFFSET)
            .ok_or_else(|| Fail::Retryable("tus HEAD: invalid offset".into()))?;
        Ok((offset, header_u64(&resp, UPLOAD_LENGTH)))
    }

    async fn create(&mut self, ctx: &Ctx, total: Option<u64>) -> Result<Url, Fail> {
        let endpoint = self
            .endpoint
            .clone()
            .ok_or_else(|| Fail::Fatal("upload failed: no tus endpoint".into()))?;
        let mut req = ctx
            .state
            .destinations()
            .client()
            .post(endpoint.clone())
            .headers(ctx.req.headers.clone())
            .header(TUS_RESUMABLE, "1.0.0")
            .header(CONTENT_LENGTH, 0);
        match total {
            Some(len) => req = req.header(UPLOAD_LENGTH, len),
            None => req = req.header("Upload-Defer-Length", "1"),
        }
        let meta = encode_metadata(&ctx.req.metadata);
        if !meta.is_empty() {
            req = req.header("Upload-Metadata", meta);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| Fail::Retryable(format!("tus POST: {e}")))?;
        let resp = status_ok(resp, StatusCode::CREATED, "POST")?;
        let location = resp
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| Fail::Fatal("upload failed: missing Location header".into()))?;
        let url = endpoint
            .join(location)
            .map_err(|_| Fail::Fatal("upload failed: invalid Location header".into()))?;
        if !ctx.state.allowlist().allows(&url) {
            return Err(Fail::Fatal(
                "upload failed: Location outside the allowed destinations".into(),
            ));
        }
        Ok(url)
    }

    /// Best-effort termination after a cancel.
    pub async fn terminate(&self, ctx: &Ctx) {
        let Some(url) = &self.upload_url else { return };
        let sent = ctx
            .state
            .destinations()
            .client()
            .delete(url.clone())
            .headers(ctx.req.headers.clone())
            .header(TUS_RESUMABLE, "1.0.0")
            .send()
            .await;
        if let Err(e) = sent {
            tracing::info!(error = %e, "tus termination failed");
        }
    }
}

fn header_u64(resp: &Response, name: &str) -> Option<u64> {
    resp.headers().get(name)?.to_str().ok()?.trim().parse().ok()
}

fn status_ok(resp: Response, want: StatusCode, verb: &str) -> Result<Response, Fail> {
    let s = resp.status();
    if s == want || (want == StatusCode::NO_CONTENT && s == StatusCode::OK) {
        return Ok(resp);
    }
    let msg = format!("upload failed: tus {verb} answered {}", s.as_u16());
    if s.is_server_error() || matches!(s.as_u16(), 409 | 423 | 429) {
        Err(Fail::Retryable(msg))
    } else {
        Err(Fail::Fatal(msg))
    }
}

fn check_offset(resp: &Response, expected: u64) -> Result<(), Fail> {
    match header_u64(resp, UPLOAD_OFFSET) {
        Some(o) if o == expected => Ok(()),
        _ => Err(Fail::Retryable("tus PATCH: invalid offset".into())),
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
