//! The multipart destination: one POST or PUT of the whole file to `endpoint`, as a
//! multipart form (file in `fieldname`, metadata as fields) or as the raw body; the answer's
//! JSON `url` is the uploaded file's URL. A form upload cannot continue half-way, so resume
//! after a pause starts it again from the first byte.

use std::sync::Arc;

use futures_util::StreamExt;
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::request::Destination;
use super::{Ctx, Done, Fail, source};

/// Largest destination answer read (it is a small JSON document).
const MAX_ANSWER: usize = 1024 * 1024;

/// The multipart destination (stateless between attempts).
#[derive(Debug)]
pub struct MultipartDest;

impl MultipartDest {
    /// Uploads the whole source once.
    pub async fn attempt(&mut self, ctx: &Ctx) -> Result<Done, Fail> {
        let Destination::Multipart {
            endpoint,
            put,
            form,
            fieldname,
        } = &ctx.req.destination
        else {
            return Err(Fail::Fatal("upload failed".into()));
        };
        let feeder = source::open(ctx, 0).await?;
        let total = feeder.total;
        ctx.progress.set_total(total.or(ctx.req.size));
        let failure = Arc::new(std::sync::Mutex::new(None));
        // Ends the body when this attempt is dropped (pause, cancel, stall).
        let stop = CancellationToken::new();
        let _stop_on_drop = stop.clone().drop_guard();
        let body = source::body(
            Arc::new(Mutex::new(feeder)),
            u64::MAX,
            failure.clone(),
            stop.clone(),
        );
        let client = ctx.state.destinations().client();
        let mut req = if *put {
            client.put(endpoint.clone())
        } else {
            client.post(endpoint.clone())
        };
        req = req.headers(ctx.req.headers.clone());
        let name = ctx
            .req
            .metadata
            .get("name")
            .cloned()
            .or_else(|| crate::url_meta::path_name(&ctx.req.source))
            .unwrap_or_else(|| "file".into());
        if *form {
            let mut part = match total {
                Some(len) => Part::stream_with_length(body, len),
                None => Part::stream(body),
            }
            .file_name(name);
            if let Some(kind) = ctx.req.metadata.get("type") {
                part = match part.mime_str(kind) {
                    Ok(p) => p,
                    Err(_) => return Err(Fail::Fatal("upload failed: invalid type".into())),
                };
            }
            let mut f = Form::new();
            for (k, v) in &ctx.req.metadata {
                f = f.text(k.clone(), v.clone());
            }
            req = req.multipart(f.part(fieldname.clone(), part));
        } else {
            if let Some(len) = total {
                req = req.header(reqwest::header::CONTENT_LENGTH, len);
            }
            req = req.body(body);
        }
        let sent = req.send().await;
        if let Some(fail) = failure.lock().ok().and_then(|mut f| f.take()) {
            return Err(fail);
        }
        let resp = sent.map_err(|e| Fail::Retryable(format!("multipart: {e}")))?;
        let status = resp.status();
        let text = read_capped(resp).await?;
        if !status.is_success() {
            tracing::info!(status = status.as_u16(), "multipart destination refused");
            return Err(Fail::Fatal(format!(
                "upload failed: the destination answered {}",
                status.as_u16()
            )));
        }
        let url = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("url").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_default();
        let response = json!({ "responseText": text, "status": status.as_u16(), "headers": {} });
        Ok(Done {
            url,
            response: Some(response),
        })
    }
}

async fn read_capped(resp: reqwest::Response) -> Result<String, Fail> {
    let mut out = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| Fail::Retryable(format!("multipart answer: {e}")))?;
        if out.len() + chunk.len() > MAX_ANSWER {
            return Err(Fail::Fatal("upload failed: answer too large".into()));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}
