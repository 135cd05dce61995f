//! `POST /upload`: a multipart form with one or more file parts. Each part is streamed to the
//! store; the answer names where each file can be fetched: `{ "url", "name", "files": [...] }`,
//! `url` being the first file's (bundle uploads send several parts in one request). Each
//! file passes pre-create before its bytes are read; post-create and post-finish follow once
//! the whole form is stored.

use axum::Json;
use axum::body::Body;
use axum::extract::multipart::MultipartError;
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::request::Parts;

use crate::answer::{ErrorMessage, StoredFile, Uploaded};
use crate::store::{FormStore, StoredInfo};
use crate::{FormError, FormState, access, body, hooks, name};

impl From<MultipartError> for FormError {
    fn from(e: MultipartError) -> Self {
        FormError::BadRequest(format!("Invalid multipart body: {}", e.body_text()))
    }
}

/// A multipart form: one file part, or several stored all or nothing.
#[derive(Debug, utoipa::ToSchema)]
#[allow(dead_code)] // Describes the request for the OpenAPI document only.
pub(crate) struct UploadForm {
    /// Each part with a file name is a file (any field name); other fields are ignored.
    #[schema(value_type = String, format = Binary)]
    files: Vec<u8>,
}

#[utoipa::path(
    post,
    path = "/upload",
    operation_id = "form_upload",
    tag = "form",
    description = "Stores the files of a multipart form (the widget's XHR uploader, HTML forms, \
        `curl -F`), streamed to disk. A bundle of several files is kept all or nothing.",
    request_body(content = inline(UploadForm), content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "Stored.", body = Uploaded),
        (status = 400, description = "Not a multipart form, or no file part.", body = ErrorMessage),
        (status = 408, description = "The body stalled (less than 1 KiB per idle window).", body = ErrorMessage),
        (status = 413, description = "A file larger than the maximum size, or than the upload quota.", body = ErrorMessage),
        (status = 429, description = "The upload quota of the window is used up.", body = ErrorMessage),
        (status = "4XX", description = "The pre-create hook refused a file; its answer as sent."),
        (status = 502, description = "A blocking hook could not be asked.", body = ErrorMessage),
    ),
    security(("bearerAuth" = [])),
)]
pub(crate) async fn handle(
    State(state): State<FormState>,
    request: Request,
) -> Result<Json<Uploaded>, FormError> {
    let (parts, raw) = request.into_parts();
    let request = hooks::request_info(&state, &parts);
    let principal = access::principal(&parts.extensions).cloned();
    let principal = principal.as_ref();
    let declared = declared_length(&parts);
    let (body, reading) = body::read(&state, raw, principal, declared);
    let form = Request::from_parts(parts, Body::from_stream(body));
    let mut multipart = Multipart::from_request(form, &())
        .await
        .map_err(|e| FormError::BadRequest(e.body_text()))?;
    reading.charge()?;
    let mut saved: Vec<(String, StoredFile, StoredInfo)> = Vec::new();
    let outcome = async {
        while let Some(field) = multipart.next_field().await? {
            // Text fields carry meta; only parts with a file name are files.
            let Some(name) = field.file_name().map(name::base_name) else {
                continue;
            };
            let content_type = field
                .content_type()
                .unwrap_or("application/octet-stream")
                .to_owned();
            let max = access::admit_file(principal, &name, &content_type, state.max_size)?;
            hooks::pre_create(&state, request.as_ref(), &name, &content_type, None).await?;
            let id = FormStore::reserve_id();
            let owner = principal.map(|p| p.subject().to_owned());
            let (id, info) = state
                .store
                .save_as(id, name, content_type, Box::pin(field), max, owner)
                .await?;
            let entry = StoredFile {
                name: info.name.clone(),
                content_type: info.content_type.clone(),
                size: info.size,
                url: state.url_of(&id),
            };
            saved.push((id, entry, info));
        }
        Ok::<(), FormError>(())
    }
    .await;
    if let Err(e) = outcome {
        // All or nothing: a bundle that fails part-way keeps none of its files.
        for (id, _, _) in &saved {
            state.store.remove(id).await;
        }
        reading.discard();
        return Err(reading.error(e));
    }
    for (id, _, info) in &saved {
        hooks::stored(&state, request.as_ref(), id, info);
    }
    let files = saved.into_iter().map(|(_, entry, _)| entry).collect();
    let Some(answer) = Uploaded::of(files) else {
        reading.discard();
        return Err(FormError::BadRequest(
            "The form has no file part (a part with a filename)".to_owned(),
        ));
    };
    Ok(Json(answer))
}

/// The request's `Content-Length`, when declared.
fn declared_length(parts: &Parts) -> Option<u64> {
    parts
        .headers
        .get(axum::http::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}
