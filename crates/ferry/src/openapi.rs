//! `GET /openapi.json`: the OpenAPI 3.1 document of the HTTP API, so applications can generate
//! clients. Each library describes its own routes next to its handlers (`ferry_tus::TusApi`,
//! `ferry_form::FormApi`, `ferry_companion::openapi::CompanionApi`, `ferry_process::openapi`);
//! this module merges them with the server's own routes and defines the `bearerAuth` scheme
//! their operations name.

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
    paths(crate::cluster::health, crate::metrics::metrics, openapi_json),
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
    doc.merge(ferry_process::openapi::document());
    doc
}

/// The route table of `ferry serve --help` and docs/server.md, made from the document so it cannot
/// drift from the routes: one row per path and method, with its auth and its error statuses.
pub fn route_table() -> String {
    let doc = serde_json::to_value(document()).unwrap_or_default();
    let mut out = String::from(
        "Routes (auth `bearer`: needs `Authorization: Bearer <JWT>` once an auth secret is set;\n\
         every API path also answers 404 for an unknown path and 405 with `Allow` for a wrong\n\
         method, with a JSON {\"message\"} body; /s3/* is 404 \"S3 is not configured\" without a\n\
         bucket; /assemblies* is 404 without --assembly-key):\n\n\
         | Method | Path | Auth | Errors |\n\
         |---|---|---|---|\n",
    );
    let Some(paths) = doc["paths"].as_object() else {
        return out;
    };
    for (path, item) in paths {
        for method in METHODS {
            let Some(op) = item.get(method.to_ascii_lowercase()) else {
                continue;
            };
            let bearer = op["security"]
                .as_array()
                .is_some_and(|s| s.iter().any(|r| r.get("bearerAuth").is_some()));
            let errors: Vec<&str> = op["responses"]
                .as_object()
                .map(|r| {
                    r.keys()
                        .map(String::as_str)
                        .filter(|code| code.starts_with('4') || code.starts_with('5'))
                        .collect()
                })
                .unwrap_or_default();
            let errors = if errors.is_empty() {
                "-".to_owned()
            } else {
                errors.join(", ")
            };
            let auth = if bearer { "bearer" } else { "open" };
            out.push_str(&format!("| {method} | {path} | {auth} | {errors} |\n"));
        }
    }
    out
}

/// Every path of the document with its methods, upper case (`/files/{id}` -> `GET`, `HEAD`,
/// ...), in the document's order.
pub fn operations() -> Vec<(String, Vec<&'static str>)> {
    let doc = serde_json::to_value(document()).unwrap_or_default();
    let Some(paths) = doc["paths"].as_object() else {
        return Vec::new();
    };
    paths
        .iter()
        .map(|(path, item)| {
            let methods = METHODS
                .into_iter()
                .filter(|m| item.get(m.to_ascii_lowercase()).is_some())
                .collect();
            (path.clone(), methods)
        })
        .collect()
}

/// The methods of a path item, in the table's order.
const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

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
