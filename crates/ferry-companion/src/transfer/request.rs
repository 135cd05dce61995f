//! The upload body of `/url/get` (Companion's field names) and its validated form.

use std::collections::BTreeMap;

use reqwest::header::HeaderMap;
use serde::Deserialize;
use serde_json::{Map, Value};
use url::Url;

use crate::error::CompanionError;
use crate::state::AppState;

/// The JSON body as Uppy sends it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UploadBody {
    pub url: Option<String>,
    pub protocol: Option<String>,
    pub endpoint: Option<String>,
    pub upload_url: Option<String>,
    pub size: Option<Value>,
    pub metadata: Option<Map<String, Value>>,
    pub headers: Option<Map<String, Value>>,
    pub fieldname: Option<String>,
    pub http_method: Option<String>,
    pub use_form_data: Option<bool>,
}

/// Where the bytes go.
#[derive(Clone, Debug)]
pub enum Destination {
    Tus {
        endpoint: Option<Url>,
        upload_url: Option<Url>,
    },
    Multipart {
        endpoint: Url,
        put: bool,
        form: bool,
        fieldname: String,
    },
    /// A multipart upload into the configured bucket.
    S3(crate::s3::S3State),
}

/// A validated transfer.
#[derive(Clone, Debug)]
pub struct TransferRequest {
    pub source: Url,
    pub destination: Destination,
    /// Size the client announced (the source's own length wins when it gives one).
    pub size: Option<u64>,
    /// Metadata values as strings.
    pub metadata: BTreeMap<String, String>,
    /// Filtered headers for the destination.
    pub headers: HeaderMap,
}

impl TransferRequest {
    /// Validates `body` against the allowlist.
    pub fn from_body(
        state: &AppState,
        source: Url,
        body: UploadBody,
    ) -> Result<Self, CompanionError> {
        let allowed = |raw: &str| -> Result<Url, CompanionError> {
            let url = Url::parse(raw.trim())
                .map_err(|_| CompanionError::BadRequest("Invalid request body".into()))?;
            if !state.allowlist().allows(&url) {
                return Err(CompanionError::Forbidden(
                    "upload destination does not match any allowed destinations".into(),
                ));
            }
            Ok(url)
        };
        let endpoint = body
            .endpoint
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(allowed)
            .transpose()?;
        let protocol = body.protocol.as_deref().unwrap_or("multipart");
        let destination = match protocol {
            "tus" => {
                let upload_url = body
                    .upload_url
                    .as_deref()
                    .filter(|s| !s.is_empty())
                    .map(allowed)
                    .transpose()?;
                if endpoint.is_none() && upload_url.is_none() {
                    return Err(CompanionError::BadRequest(
                        "no destination specified".into(),
                    ));
                }
                Destination::Tus {
                    endpoint,
                    upload_url,
                }
            }
            "multipart" => {
                let endpoint = endpoint
                    .ok_or_else(|| CompanionError::BadRequest("no destination specified".into()))?;
                let put = match body
                    .http_method
                    .as_deref()
                    .map(str::to_ascii_uppercase)
                    .as_deref()
                {
                    None | Some("POST") => false,
                    Some("PUT") => true,
                    Some(_) => {
                        return Err(CompanionError::BadRequest(
                            "unsupported HTTP METHOD specified".into(),
                        ));
                    }
                };
                Destination::Multipart {
                    endpoint,
                    put,
                    form: body.use_form_data.unwrap_or(true),
                    fieldname: body
                        .fieldname
                        .filter(|f| !f.is_empty())
                        .unwrap_or_else(|| "files[]".into()),
                }
            }
            "s3-multipart" => match &state.config().s3 {
                Some(s3) => Destination::S3(s3.clone()),
                None => {
                    return Err(CompanionError::BadRequest(
                        "s3-multipart transfers are not available on this server".into(),
                    ));
                }
            },
            _ => {
                return Err(CompanionError::BadRequest(
                    "unsupported protocol specified".into(),
                ));
            }
        };
        let size = match &body.size {
            Some(Value::Number(n)) => n.as_u64(),
            Some(Value::String(s)) => s.parse().ok(),
            _ => None,
        };
        if let (Some(size), Some(max)) = (size, state.config().max_file_size) {
            if size > max {
                return Err(CompanionError::BadRequest("File size exceeds limit".into()));
            }
        }
        let metadata = body
            .metadata
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(k, v)| match v {
                Value::String(s) => Some((k, s)),
                Value::Number(n) => Some((k, n.to_string())),
                Value::Bool(b) => Some((k, b.to_string())),
                _ => None,
            })
            .collect();
        let headers =
            crate::headers::filter(body.headers.as_ref(), state.config().forward_authorization);
        Ok(Self {
            source,
            destination,
            size,
            metadata,
            headers,
        })
    }
}
