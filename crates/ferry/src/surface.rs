//! The edges of the HTTP API: what a request that no route handles gets. Under an API prefix the
//! answer is always JSON `{message}` — 404 for an unknown path, 405 with `Allow` for a known path
//! and a wrong method — so an API client never receives the web page by mistake. Every other
//! path goes to the page (`ui`), which serves its files and answers client-side routes.

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower::ServiceExt;

/// The path prefixes of the API: the tus endpoint, the form endpoint, the companion's routes
/// (link imports, transfers, the progress socket, S3 signing, the providers) and the server's
/// own routes. A path is under a prefix when it equals it or continues with `/`.
pub const API_PREFIXES: &[&str] = &[
    "/files",
    "/upload",
    "/url",
    "/s3",
    "/api",
    "/api2",
    "/drive",
    "/instagram",
    "/providers",
    "/metrics",
    "/health",
    "/openapi.json",
];

/// `Tus-Resumable` on every answer under `/files/`, as the tus protocol wants of its endpoint.
const TUS_RESUMABLE: (&str, &str) = ("tus-resumable", "1.0.0");

/// Whether `path` belongs to the API rather than to the page.
pub fn is_api(path: &str) -> bool {
    API_PREFIXES.iter().any(|prefix| {
        path.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// A JSON `{message}` answer with `status`, the shape of every API error.
pub fn message(status: StatusCode, message: &str) -> Response {
    (
        status,
        axum::Json(serde_json::json!({ "message": message })),
    )
        .into_response()
}

/// The router's fallback: 404 JSON under an API prefix, else the page (when one is served).
pub fn fallback(ui: Option<Router>) -> Router {
    Router::new().fallback(unrouted).with_state(ui)
}

async fn unrouted(State(ui): State<Option<Router>>, request: Request) -> Response {
    let path = request.uri().path();
    if is_api(path) {
        let mut response = message(StatusCode::NOT_FOUND, "not found");
        if under_tus(path) {
            response
                .headers_mut()
                .insert(TUS_RESUMABLE.0, HeaderValue::from_static(TUS_RESUMABLE.1));
        }
        return response;
    }
    match ui {
        Some(ui) => match ui.oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        },
        None => message(StatusCode::NOT_FOUND, "not found"),
    }
}

fn under_tus(path: &str) -> bool {
    path == "/files" || path.starts_with("/files/")
}

/// Gives the router's bodiless 405 answers (a known path, a method it does not take) a JSON
/// `{message}` body, keeping their `Allow` header; under `/files/` they also carry
/// `Tus-Resumable`. Answers that already have a body are left alone.
pub async fn json_method_errors(request: Request, next: Next) -> Response {
    let tus = under_tus(request.uri().path());
    let response = next.run(request).await;
    if response.status() != StatusCode::METHOD_NOT_ALLOWED
        || response.headers().contains_key(header::CONTENT_TYPE)
    {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if tus {
        parts
            .headers
            .insert(TUS_RESUMABLE.0, HeaderValue::from_static(TUS_RESUMABLE.1));
    }
    let body = serde_json::json!({ "message": "method not allowed" }).to_string();
    Response::from_parts(parts, axum::body::Body::from(body))
}

#[cfg(test)]
mod tests {
    use super::is_api;

    #[test]
    fn api_paths_are_whole_segments() {
        for path in [
            "/files",
            "/files/",
            "/files/abc/def",
            "/upload",
            "/upload/x/y",
            "/s3/params",
            "/api/x",
            "/api2/auth-callback/token/1",
            "/drive/list",
            "/metrics",
            "/health/x",
            "/openapi.json",
        ] {
            assert!(is_api(path), "{path}");
        }
        for path in [
            "/",
            "/filesystem",
            "/uploads",
            "/api3",
            "/assets/x.js",
            "/x",
        ] {
            assert!(!is_api(path), "{path}");
        }
    }
}
