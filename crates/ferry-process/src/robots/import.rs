//! `/http/import`: fetches `url` (a string, an array, or `|`-separated) through the companion's
//! egress client, so only public addresses are reached (literal private addresses are refused
//! when the Assembly is created; names that resolve to them when the step runs). Supported:
//! `url`, `url_delimiter`, `force_name`, `max_file_size`, `headers` (array of `"Name: value"`).

use futures_util::StreamExt;
use serde_json::{Map, Value};
use tokio::io::AsyncWriteExt;

use super::{Ctx, StepError};
use crate::assembly::record::FileRecord;
use crate::error::ApiError;
use crate::id::Id;
use crate::steps::Step;
use crate::steps::vars::Scope;

const OWN: [&str; 5] = [
    "url",
    "url_delimiter",
    "force_name",
    "max_file_size",
    "headers",
];
/// Most URLs one step imports.
const MAX_URLS: usize = 100;

fn invalid(step: &str, why: impl std::fmt::Display) -> ApiError {
    ApiError::bad("HTTP_IMPORT_VALIDATION", format!("Step {step:?}: {why}"))
}

/// Checks the step's parameters; a literal URL must be http(s).
pub fn validate(step: &str, params: &Map<String, Value>) -> Result<(), ApiError> {
    for key in params.keys() {
        if !OWN.contains(&key.as_str()) && !super::BASE_PARAMS.contains(&key.as_str()) {
            return Err(invalid(
                step,
                format!("/http/import takes no parameter {key:?}."),
            ));
        }
    }
    let urls = urls(params)
        .ok_or_else(|| invalid(step, "url must be a string or an array of strings."))?;
    if urls.is_empty() || urls.len() > MAX_URLS {
        return Err(invalid(
            step,
            format!("url must name 1 to {MAX_URLS} URLs."),
        ));
    }
    for raw in &urls {
        if raw.contains("${") {
            continue;
        }
        let url =
            url::Url::parse(raw).map_err(|_| invalid(step, format!("{raw:?} is not a URL.")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid(step, "only http and https URLs can be imported."));
        }
    }
    check_headers(step, params)
}

/// Checks `params`' literal URLs (those without variables) against the egress rules: a private
/// address is refused when the Assembly is created, not when the step runs.
pub fn check_addresses(
    step: &str,
    params: &Map<String, Value>,
    egress: &ferry_companion::egress::Egress,
) -> Result<(), ApiError> {
    for raw in urls(params).unwrap_or_default() {
        if !raw.contains("${") && egress.check(&raw).is_err() {
            return Err(ApiError::new(
                axum::http::StatusCode::FORBIDDEN,
                "HTTP_IMPORT_ACCESS_DENIED",
                format!(
                    "Step {step:?}: {raw:?} points at an address that may not be imported from."
                ),
            ));
        }
    }
    Ok(())
}

fn check_headers(step: &str, params: &Map<String, Value>) -> Result<(), ApiError> {
    if let Some(h) = params.get("headers") {
        let ok = h.as_array().is_some_and(|a| {
            a.iter()
                .all(|v| v.as_str().is_some_and(|s| s.contains(':')))
        });
        if !ok {
            return Err(invalid(
                step,
                "headers must be an array of \"Name: value\" strings.",
            ));
        }
    }
    Ok(())
}

fn urls(params: &Map<String, Value>) -> Option<Vec<String>> {
    let delim = params
        .get("url_delimiter")
        .and_then(Value::as_str)
        .unwrap_or("|");
    match params.get("url")? {
        Value::String(s) if !delim.is_empty() => Some(
            s.split(delim)
                .map(|u| u.trim().to_owned())
                .filter(|u| !u.is_empty())
                .collect(),
        ),
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(a) => a.iter().map(|v| v.as_str().map(str::to_owned)).collect(),
        _ => None,
    }
}

/// Imports every URL of the step.
pub async fn run(ctx: &Ctx, step: &Step) -> Result<Vec<FileRecord>, StepError> {
    let scope = Scope {
        assembly: &ctx.assembly,
        fields: &ctx.fields,
        file: None,
        unique_prefix: "",
    };
    let Value::Object(params) = scope.expand_value(&Value::Object(step.params.clone())) else {
        return Err(StepError::new("HTTP_IMPORT_VALIDATION", "bad parameters"));
    };
    let egress = ctx.egress.as_ref().ok_or_else(|| {
        StepError::new(
            "HTTP_IMPORT_FAILURE",
            "Imports are disabled on this server.",
        )
    })?;
    let limit = params
        .get("max_file_size")
        .and_then(Value::as_u64)
        .into_iter()
        .chain(ctx.max_size)
        .min();
    let mut out = Vec::new();
    for raw in urls(&params).unwrap_or_default() {
        out.push(fetch(ctx, step, egress, &params, &raw, limit).await?);
    }
    Ok(out)
}

async fn fetch(
    ctx: &Ctx,
    step: &Step,
    egress: &ferry_companion::egress::Egress,
    params: &Map<String, Value>,
    raw: &str,
    limit: Option<u64>,
) -> Result<FileRecord, StepError> {
    let failure = |m: String| StepError::new("HTTP_IMPORT_FAILURE", m);
    let url = egress.check(raw).map_err(|_| {
        StepError::new(
            "HTTP_IMPORT_ACCESS_DENIED",
            format!("{raw} may not be imported from."),
        )
    })?;
    let mut req = egress.client().get(url.clone());
    for h in params
        .get("headers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some((k, v)) = h.as_str().and_then(|s| s.split_once(':')) {
            req = req.header(k.trim(), v.trim());
        }
    }
    let resp = req.send().await.map_err(|e| {
        if ferry_companion::egress::is_refusal(&e) {
            StepError::new(
                "HTTP_IMPORT_ACCESS_DENIED",
                format!("{raw} may not be imported from."),
            )
        } else {
            failure(format!("Could not fetch {raw}: {e}"))
        }
    })?;
    match resp.status().as_u16() {
        200..=299 => {}
        404 | 410 => {
            return Err(StepError::new(
                "HTTP_IMPORT_NOT_FOUND",
                format!("{raw} answered {}.", resp.status()),
            ));
        }
        401 | 403 => {
            return Err(StepError::new(
                "HTTP_IMPORT_ACCESS_DENIED",
                format!("{raw} answered {}.", resp.status()),
            ));
        }
        _ => return Err(failure(format!("{raw} answered {}.", resp.status()))),
    }
    if let (Some(limit), Some(len)) = (limit, resp.content_length()) {
        if len > limit {
            return Err(StepError::new(
                "HTTP_IMPORT_VALIDATION",
                format!("{raw} is larger than {limit} bytes."),
            ));
        }
    }
    let mime = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .filter(|v| !v.is_empty() && v != "application/octet-stream");
    let name = params
        .get("force_name")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| {
            url.path_segments()
                .and_then(|mut s| s.next_back())
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "file".to_owned());
    let (id, rel) = ctx.new_result();
    let path = ctx.dir.join(&rel);
    let mut file = tokio::fs::File::create(&path)
        .await
        .map_err(|e| failure(format!("cannot store: {e}")))?;
    let mut size = 0u64;
    let mut body = resp.bytes_stream();
    loop {
        let chunk = tokio::select! {
            () = ctx.cancel.cancelled() => return Err(StepError::new("ASSEMBLY_CANCELED", "canceled")),
            c = body.next() => c,
        };
        let Some(chunk) = chunk else { break };
        let chunk = chunk.map_err(|e| failure(format!("Fetching {raw} failed: {e}")))?;
        size += chunk.len() as u64;
        if limit.is_some_and(|l| size > l) {
            return Err(StepError::new(
                "HTTP_IMPORT_VALIDATION",
                format!("{raw} is larger than the size limit."),
            ));
        }
        file.write_all(&chunk)
            .await
            .map_err(|e| failure(format!("cannot store: {e}")))?;
    }
    file.flush()
        .await
        .map_err(|e| failure(format!("cannot store: {e}")))?;
    let mime = mime.unwrap_or_else(|| crate::mime::guess(&name));
    let origin = FileRecord::upload(id.clone(), name.clone(), size, mime.clone(), "".to_owned());
    let mut rec = FileRecord::derived(&origin, &step.name, name, size, mime, rel, id.clone());
    rec.original_id = Id::clone(&id);
    rec.import_url = Some(raw.to_owned());
    Ok(rec)
}
