//! The multipart destination: one POST or PUT of the whole file to `endpoint`, as a
//! multipart form (file in `fieldname`, metadata as fields) or as the raw body; the answer's
//! JSON `url` is the uploaded file's URL. A form upload cannot continue half-way, so resume
//! after a pause starts it again from the first byte, and a failed attempt is not retried.

use ferry_hooks::Storage;
use futures_util::StreamExt;
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};
use url::Url;

use super::destination::Destination;
use super::request::{UploadBody, non_empty};
use super::{Done, Transfer, TransferError};
use crate::error::CompanionError;
use crate::state::AppState;

/// Largest destination answer read (it is a small JSON document).
const MAX_ANSWER: usize = 1024 * 1024;

/// The multipart destination (stateless between attempts).
#[derive(Debug)]
pub struct MultipartDestination {
    endpoint: Url,
    put: bool,
    form: bool,
    fieldname: String,
}

impl MultipartDestination {
    /// `endpoint` (required), `httpMethod` (POST or PUT), `useFormData`, `fieldname`.
    pub fn parse(
        _state: &AppState,
        body: &UploadBody,
        endpoint: Option<Url>,
    ) -> Result<Box<dyn Destination>, CompanionError> {
        let endpoint = endpoint
            .ok_or_else(|| CompanionError::BadRequest("no destination specified".into()))?;
        let method = body.http_method.as_deref().map(str::to_ascii_uppercase);
        let put = match method.as_deref() {
            None | Some("POST") => false,
            Some("PUT") => true,
            Some(_) => {
                return Err(CompanionError::BadRequest(
                    "unsupported HTTP METHOD specified".into(),
                ));
            }
        };
        Ok(Box::new(Self {
            endpoint,
            put,
            form: body.use_form_data.unwrap_or(true),
            fieldname: non_empty(body.fieldname.as_deref())
                .unwrap_or("files[]")
                .to_owned(),
        }))
    }
}

#[async_trait::async_trait]
impl Destination for MultipartDestination {
    /// Uploads the whole source once.
    async fn attempt(&mut self, transfer: &Transfer) -> Result<Done, TransferError> {
        let feeder = transfer.open(0).await?;
        let total = feeder.total();
        transfer.progress.set_total(total.or(transfer.size));
        let (body, outcome) = feeder.body(u64::MAX);
        let client = transfer.client();
        let mut req = if self.put {
            client.put(self.endpoint.clone())
        } else {
            client.post(self.endpoint.clone())
        };
        req = req.headers(transfer.headers.clone());
        if self.form {
            let mut part = match total {
                Some(len) => Part::stream_with_length(body, len),
                None => Part::stream(body),
            }
            .file_name(transfer.file_name());
            if let Some(kind) = transfer.metadata.get("type") {
                part = part
                    .mime_str(kind)
                    .map_err(|_| TransferError::Fatal("upload failed: invalid type".into()))?;
            }
            let mut form = Form::new();
            for (k, v) in &transfer.metadata {
                form = form.text(k.clone(), v.clone());
            }
            req = req.multipart(form.part(self.fieldname.clone(), part));
        } else {
            if let Some(len) = total {
                req = req.header(reqwest::header::CONTENT_LENGTH, len);
            }
            req = req.body(body);
        }
        let resp = outcome.settle(req.send().await, "multipart")?;
        let status = resp.status();
        let text = read_capped(resp).await?;
        if !status.is_success() {
            tracing::info!(status = status.as_u16(), "multipart destination refused");
            return Err(TransferError::Fatal(format!(
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

    /// The form endpoint that took the file, and the file's URL in its answer.
    fn storage(&self, done: &Done) -> Storage {
        Storage::default()
            .with("Type", "multipart")
            .with("Endpoint", self.endpoint.as_str())
            .with("URL", done.url.as_str())
    }
}

async fn read_capped(resp: reqwest::Response) -> Result<String, TransferError> {
    let mut out = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| TransferError::Retryable(format!("multipart answer: {e}")))?;
        if out.len() + chunk.len() > MAX_ANSWER {
            return Err(TransferError::Fatal(
                "upload failed: answer too large".into(),
            ));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}
