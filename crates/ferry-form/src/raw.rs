//! `PUT` or `POST /upload/raw?name=...`: the request body is the file. The answer is the same
//! shape as the form endpoint's. pre-create comes before the body is read, post-create and
//! post-finish after the file is stored.

use axum::Json;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::request::Parts;
use serde::Deserialize;

use crate::answer::{ErrorMessage, StoredFile, Uploaded};
use crate::store::FormStore;
use crate::{FormError, FormState, access, body, hooks, name};

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct RawQuery {
    /// The file's name (`upload` when absent).
    name: Option<String>,
}

#[utoipa::path(
    method(post, put),
    path = "/upload/raw",
    operation_id = "form_upload_raw",
    tag = "form",
    description = "Stores the request body as one file, streamed to disk.",
    params(RawQuery),
    request_body(content_type = "application/octet-stream", description = "The file's bytes; \
        `Content-Type` is stored as its media type."),
    responses(
        (status = 200, description = "Stored.", body = Uploaded),
        (status = 400, description = "A body that could not be read.", body = ErrorMessage),
        (status = 408, description = "The body stalled (less than 1 KiB per idle window).", body = ErrorMessage),
        (status = 413, description = "Larger than the maximum size, or than the upload quota.", body = ErrorMessage),
        (status = 429, description = "The upload quota of the window is used up.", body = ErrorMessage),
        (status = "4XX", description = "The pre-create hook refused the file; its answer as sent."),
        (status = 502, description = "A blocking hook could not be asked.", body = ErrorMessage),
    ),
    security(("bearerAuth" = [])),
)]
pub(crate) async fn handle(
    State(state): State<FormState>,
    Query(query): Query<RawQuery>,
    parts: Parts,
    body: Body,
) -> Result<Json<Uploaded>, FormError> {
    let name = name::base_name(query.name.as_deref().unwrap_or_default());
    let headers = &parts.headers;
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/octet-stream")
        .to_owned();
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let principal = access::principal(&parts.extensions);
    let max = access::admit_file(principal, &name, &content_type, state.max_size)?;
    // Refuse before reading a byte when the client says up front that it is too big.
    if let (Some(max), Some(len)) = (max, declared)
        && len > max
    {
        return Err(FormError::TooLarge { max });
    }
    let (stream, reading) = body::read(&state, body, principal, declared);
    reading.charge()?;
    let request = hooks::request_info(&state, &parts);
    let hook = hooks::pre_create(&state, request.as_ref(), &name, &content_type, declared);
    if let Err(refused) = hook.await {
        reading.discard();
        return Err(refused);
    }
    let saved = state
        .store
        .save_as(
            FormStore::reserve_id(),
            name,
            content_type,
            stream,
            max,
            principal.map(|p| p.subject().to_owned()),
        )
        .await;
    let (id, info) = saved.map_err(|e| {
        // Nothing was kept.
        reading.discard();
        reading.error(e)
    })?;
    hooks::stored(&state, request.as_ref(), &id, &info);
    let url = state.url_of(&id);
    let entry = StoredFile {
        name: info.name,
        content_type: info.content_type,
        size: info.size,
        url,
    };
    let answer = Uploaded {
        url: entry.url.clone(),
        name: entry.name.clone(),
        files: vec![entry],
    };
    Ok(Json(answer))
}
