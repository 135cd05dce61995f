//! The endpoint's part of the server's OpenAPI document, assembled from the annotations on the
//! verb handlers. Paths assume the default mount at `/files/`; the `bearerAuth` scheme the
//! operations name is defined by the application that merges this part.

/// The tus endpoint's operations (`/files/`, `/files/{id}`).
#[derive(Debug, utoipa::OpenApi)]
#[openapi(
    paths(
        super::post::handle,
        super::options::handle,
        super::head::handle,
        super::patch::handle,
        super::delete::handle,
        super::download::handle,
        super::method_override::handle,
        super::options::on_upload,
    ),
    tags((name = "tus", description = "The tus 1.0.0 endpoint (resumable uploads)."))
)]
pub struct TusApi;
