//! The Assembly API's routes, at the origin's root (Uppy builds `new URL('/assemblies', service)`):
//!
//! - `POST /assemblies`, `POST /assemblies/{id}` ([`create`]): a new Assembly from a multipart
//!   form, files in it streamed to disk;
//! - `GET /assemblies/{id}` (the Assembly Status), `DELETE /assemblies/{id}` (cancel),
//!   `GET /assemblies/{id}/files/{file_id}` (an upload's or result's bytes) ([`read`]);
//! - `GET /assemblies/{id}/stream` ([`stream`]): live updates as server-sent events.
//!
//! CORS for `--cors-origins`: the `Transloadit-Client` and `X-Request-ID` headers browsers send.

pub mod create;
pub mod read;
pub mod stream;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, HeaderValue, Method};
use axum::routing::{get, post};
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::service::Service;

/// The routes of `service`.
pub fn router(service: Service) -> Router {
    let cors = cors(&service.config().cors_origins);
    Router::new()
        .route("/assemblies", post(create::create_new))
        .route(
            "/assemblies/{id}",
            post(create::create_with_id)
                .get(read::status)
                .delete(read::cancel),
        )
        .route("/assemblies/{id}/files/{file}", get(read::file))
        .route("/assemblies/{id}/stream", get(stream::stream))
        // Files in the form are streamed to disk under --max-size; no body cap of axum's own.
        .layer(DefaultBodyLimit::disable())
        .layer(cors)
        .with_state(service)
}

/// The CORS layer for `origins` (`*` or `true`: any origin, mirrored; empty: none).
fn cors(origins: &[String]) -> CorsLayer {
    let any = origins.iter().any(|o| o == "*" || o == "true");
    let allow = if any {
        AllowOrigin::mirror_request()
    } else {
        AllowOrigin::list(
            origins
                .iter()
                .filter_map(|o| HeaderValue::from_str(o.trim().trim_end_matches('/')).ok())
                .collect::<Vec<_>>(),
        )
    };
    CorsLayer::new()
        .allow_origin(allow)
        .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        .allow_headers([
            HeaderName::from_static("transloadit-client"),
            HeaderName::from_static("x-request-id"),
            HeaderName::from_static("content-type"),
            HeaderName::from_static("accept"),
            HeaderName::from_static("last-event-id"),
        ])
}
