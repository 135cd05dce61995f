//! The upload body of `/url/get` (Companion's field names) and the validated transfer: the
//! fields every transfer shares are read here, each destination reads its own
//! ([`super::destination`]), and every destination URL is held to the allowlist by [`allowed`].

use std::collections::BTreeMap;
use std::net::SocketAddr;

use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use ferry_hooks::{HookType, HttpRequestInfo};

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use url::Url;

use super::{Destination, Source, destination};
use crate::error::CompanionError;
use crate::registry::{SourceSpec, TransferSpec};
use crate::state::AppState;

/// The JSON body as Uppy sends it.
#[derive(Clone, Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadBody {
    pub url: Option<String>,
    pub protocol: Option<String>,
    pub endpoint: Option<String>,
    pub upload_url: Option<String>,
    #[schema(value_type = Option<u64>)]
    pub size: Option<Value>,
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Map<String, Value>>,
    #[schema(value_type = Option<Object>)]
    pub headers: Option<Map<String, Value>>,
    pub fieldname: Option<String>,
    pub http_method: Option<String>,
    pub use_form_data: Option<bool>,
}

/// A validated transfer, ready to run.
#[derive(Debug)]
pub struct TransferRequest {
    pub source: Box<dyn Source>,
    pub destination: Box<dyn Destination>,
    /// Size the client announced (the source's own length wins when it gives one).
    pub size: Option<u64>,
    /// Metadata values as strings.
    pub metadata: BTreeMap<String, String>,
    /// Filtered headers for the destination.
    pub headers: HeaderMap,
    /// The client's `/url/get` request as hooks describe it (set by the route, when hooks are
    /// on).
    pub hook_request: Option<ferry_hooks::HttpRequestInfo>,
    /// Largest file this transfer may carry: the server's cap, lowered by the token's.
    pub limit: Option<u64>,
    /// The token's subject under `--auth-secret`: the transfer is theirs alone.
    pub owner: Option<String>,
    /// The destination is this server's own endpoint (under `own_origins`).
    own_destination: bool,
    /// Where the source is, for a resume elsewhere.
    source_spec: SourceSpec,
    /// The body as the client sent it, for a resume elsewhere.
    body: UploadBody,
}

impl TransferRequest {
    /// Validates `body` for a transfer from `source`.
    pub fn from_body(
        state: &AppState,
        source: Box<dyn Source>,
        source_spec: SourceSpec,
        body: UploadBody,
    ) -> Result<Self, CompanionError> {
        let original = body.clone();
        let endpoint = non_empty(body.endpoint.as_deref())
            .map(|raw| allowed(state, raw))
            .transpose()?;
        let own_destination = endpoint.as_ref().is_some_and(|url| {
            let origin = url.origin().ascii_serialization();
            state.config().own_origins.contains(&origin)
        });
        let destination = destination::parse(state, &body, endpoint)?;
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
            hook_request: None,
            limit: state.config().max_file_size,
            owner: None,
            own_destination,
            source_spec,
            body: original,
        })
    }

    /// What another instance needs to run this transfer again.
    pub fn spec(&self) -> TransferSpec {
        TransferSpec {
            source: self.source_spec.clone(),
            body: self.body.clone(),
            headers: self
                .headers
                .iter()
                .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
                .collect(),
            limit: self.limit,
            owner: self.owner.clone(),
            hook_request: self.hook_request.clone(),
        }
    }

    /// Takes back what a [`TransferSpec`] fixed at the start (headers, limit, owner, hook
    /// request), for a transfer resumed from it.
    pub fn with_spec(mut self, spec: &TransferSpec) -> Self {
        self.headers = spec
            .headers
            .iter()
            .filter_map(|(k, v)| {
                Some((
                    reqwest::header::HeaderName::from_bytes(k.as_bytes()).ok()?,
                    HeaderValue::from_str(v).ok()?,
                ))
            })
            .collect();
        self.limit = spec.limit;
        self.owner.clone_from(&spec.owner);
        self.hook_request.clone_from(&spec.hook_request);
        self
    }

    /// Applies the request's token (`--auth-secret`), if any: the file must pass its size and
    /// type limits, is charged to the subject's quota, and the transfer becomes the subject's.
    pub fn for_principal(mut self, parts: &Parts) -> Result<Self, CompanionError> {
        let Some(principal) = parts.extensions.get::<ferry_auth::Principal>() else {
            return Ok(self);
        };
        principal.admit(&ferry_auth::Admission {
            size: self.size,
            mime: self.metadata.get("type").map(String::as_str),
            name: self.metadata.get("name").map(String::as_str),
        })?;
        self.limit = match (self.limit, principal.max_size()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.owner = Some(principal.subject().to_owned());
        // The server's own endpoint wants the same token; nobody else ever sees it.
        if self.own_destination
            && let Ok(value) = HeaderValue::from_str(&format!("Bearer {}", principal.token()))
        {
            self.headers.insert(AUTHORIZATION, value);
        }
        Ok(self)
    }
}

impl TransferRequest {
    /// Keeps the client's request for the transfer's post-finish, when that hook is on.
    pub fn with_hook_request(mut self, state: &AppState, parts: &Parts) -> Self {
        if state.config().hooks.enabled(HookType::PostFinish) {
            let peer = parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|ConnectInfo(addr)| *addr);
            self.hook_request = Some(HttpRequestInfo::from_parts(
                &parts.method,
                &parts.uri,
                peer,
                &parts.headers,
            ));
        }
        self
    }
}

/// `raw` as a destination URL the allowlist accepts.
pub fn allowed(state: &AppState, raw: &str) -> Result<Url, CompanionError> {
    let url = Url::parse(raw.trim())
        .map_err(|_| CompanionError::BadRequest("Invalid request body".into()))?;
    if !state.allowlist().allows(&url) {
        return Err(CompanionError::Forbidden(
            "upload destination does not match any allowed destinations".into(),
        ));
    }
    Ok(url)
}

/// A body field, unless absent or empty.
pub fn non_empty(field: Option<&str>) -> Option<&str> {
    field.filter(|s| !s.is_empty())
}
