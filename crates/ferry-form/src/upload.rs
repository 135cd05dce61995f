//! `POST /upload`: a multipart form with one or more file parts. Each part is streamed to the
//! store; the answer names where each file can be fetched: `{ "url", "name", "files": [...] }`,
//! `url` being the first file's (bundle uploads send several parts in one request). Each
//! file passes pre-create before its bytes are read; post-create and post-finish follow once
//! the whole form is stored.

use axum::Json;
use axum::extract::multipart::{MultipartError, MultipartRejection};
use axum::extract::{Multipart, State};
use axum::http::request::Parts;
use serde_json::{Value, json};

use crate::store::{FormStore, StoredInfo};
use crate::{FormError, FormState, access, hooks};

impl From<MultipartError> for FormError {
    fn from(e: MultipartError) -> Self {
        FormError::BadRequest(format!("Invalid multipart body: {}", e.body_text()))
    }
}

pub(crate) async fn handle(
    State(state): State<FormState>,
    parts: Parts,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<Json<Value>, FormError> {
    let mut multipart = multipart.map_err(|e| FormError::BadRequest(e.body_text()))?;
    let request = hooks::request_info(&state, &parts);
    let principal = access::principal(&parts.extensions);
    access::charge(principal, declared_length(&parts))?;
    let mut saved: Vec<(String, Value, StoredInfo)> = Vec::new();
    let outcome = async {
        while let Some(field) = multipart.next_field().await? {
            // Text fields carry meta; only parts with a file name are files.
            let Some(name) = field.file_name().map(str::to_owned) else {
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
            let entry = json!({
                "name": info.name,
                "type": info.content_type,
                "size": info.size,
                "url": state.url_of(&id),
            });
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
        return Err(e);
    }
    for (id, _, info) in &saved {
        hooks::stored(&state, request.as_ref(), id, info);
    }
    let Some((_, first, _)) = saved.first() else {
        return Err(FormError::BadRequest(
            "The form has no file part (a part with a filename)".to_owned(),
        ));
    };
    let mut answer = json!({ "url": first["url"], "name": first["name"] });
    answer["files"] = Value::Array(saved.into_iter().map(|(_, entry, _)| entry).collect());
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
