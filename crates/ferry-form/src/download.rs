//! `GET /upload/{id}`: the stored bytes, streamed, always as a download (attachment, generic
//! type, nosniff) so an uploaded page or script never runs in the server's origin.

use axum::Extension;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::header::{
    CONTENT_DISPOSITION, CONTENT_LENGTH, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS,
};
use axum::response::{IntoResponse, Response};
use tokio_util::io::ReaderStream;

use ferry_auth::Principal;

use crate::{FormError, FormState, access};

#[utoipa::path(
    get,
    path = "/upload/{id}",
    operation_id = "form_download",
    tag = "form",
    description = "A stored file's bytes, as an attachment.",
    params(("id" = String, Path, description = "The id in the file's `url`.")),
    responses(
        (status = 200, description = "The file.", content_type = "application/octet-stream"),
        (status = 404, description = "No such file.", body = crate::answer::ErrorMessage),
    ),
    security(("bearerAuth" = [])),
)]
pub(crate) async fn handle(
    State(state): State<FormState>,
    Path(id): Path<String>,
    principal: Option<Extension<Principal>>,
) -> Result<Response, FormError> {
    let (path, info) = state.store.get(&id).await?;
    // Another subject's file is as unknown as a missing one.
    if !access::may_read(principal.as_deref(), info.owner.as_deref()) {
        return Err(FormError::NotFound);
    }
    let file = match tokio::fs::File::open(&path).await {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(FormError::NotFound),
        Err(e) => return Err(e.into()),
    };
    let headers = [
        (CONTENT_TYPE, "application/octet-stream".to_owned()),
        (CONTENT_LENGTH, info.size.to_string()),
        (CONTENT_DISPOSITION, disposition(&info.name)),
        (X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
    ];
    Ok((headers, Body::from_stream(ReaderStream::new(file))).into_response())
}

/// `attachment` with an ASCII fallback name and the exact name in RFC 5987 form.
fn disposition(name: &str) -> String {
    let fallback: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut encoded = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            encoded.push(char::from(b));
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    format!("attachment; filename=\"{fallback}\"; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    use super::disposition;

    #[test]
    fn names_are_quoted_safely() {
        assert_eq!(
            disposition("a \"b\".txt"),
            "attachment; filename=\"a _b_.txt\"; filename*=UTF-8''a%20%22b%22.txt"
        );
        assert_eq!(
            disposition("é"),
            "attachment; filename=\"_\"; filename*=UTF-8''%C3%A9"
        );
    }
}
