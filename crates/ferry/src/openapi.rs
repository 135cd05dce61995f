//! `GET /openapi.json`: the OpenAPI 3.1 document of the HTTP API, so applications can generate
//! clients. Each library describes its own routes next to its handlers (`ferry_tus::TusApi`,
//! `ferry_form::FormApi`, `ferry_companion::openapi::CompanionApi`); this module merges them
//! with the server's own routes and defines the `bearerAuth` scheme their operations name.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

/// The server's own routes and the document's frame.
#[derive(Debug, OpenApi)]
#[openapi(
    info(
        title = "Ferry",
        description = "Resumable file uploads: a tus 1.0.0 endpoint, a plain form endpoint and \
            a companion server wire-compatible with Uppy's Companion. Unknown paths and methods \
            under an API prefix answer 404 / 405 (with `Allow`) and a JSON `{message}`."
    ),
    paths(crate::cluster::health, openapi_json),
    modifiers(&BearerAuth),
    tags((name = "server", description = "Health, metrics and this document."))
)]
struct ServerApi;

/// Adds the `bearerAuth` scheme: `Authorization: Bearer <JWT>` signed with `--auth-secret`.
#[derive(Debug)]
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let scheme = HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .bearer_format("JWT")
            .description(Some(
                "A JWT (HS256) signed with the server's auth secret, carrying `sub` and `exp`.",
            ))
            .build();
        doc.components
            .get_or_insert_with(Default::default)
            .add_security_scheme("bearerAuth", SecurityScheme::Http(scheme));
    }
}

/// The whole document: the server's routes and every library's.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut doc = ServerApi::openapi();
    doc.merge(ferry_tus::TusApi::openapi());
    doc.merge(ferry_form::FormApi::openapi());
    doc.merge(ferry_companion::openapi::CompanionApi::openapi());
    doc
}

/// Every path of the document with its methods, upper case (`/files/{id}` -> `HEAD`, ...), in
/// the document's order.
pub fn operations() -> Vec<(String, Vec<&'static str>)> {
    document()
        .paths
        .paths
        .into_iter()
        .map(|(path, item)| {
            let methods = [
                ("GET", item.get.is_some()),
                ("HEAD", item.head.is_some()),
                ("POST", item.post.is_some()),
                ("PUT", item.put.is_some()),
                ("PATCH", item.patch.is_some()),
                ("DELETE", item.delete.is_some()),
                ("OPTIONS", item.options.is_some()),
            ];
            let methods = methods
                .into_iter()
                .filter_map(|(name, on)| on.then_some(name))
                .collect();
            (path, methods)
        })
        .collect()
}

#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "server",
    description = "This document.",
    responses((status = 200, description = "The OpenAPI 3.1 document.", content_type = "application/json")),
)]
async fn openapi_json(State(json): State<Arc<str>>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        json.to_string(),
    )
        .into_response()
}

/// `GET /openapi.json`, rendered once.
pub fn router() -> std::io::Result<Router> {
    let json: Arc<str> = document().to_json().map_err(std::io::Error::other)?.into();
    Ok(Router::new()
        .route("/openapi.json", get(openapi_json))
        .with_state(json))
}
