//! CORS for the tus endpoint: any origin may upload (no credentials are involved), and the tus
//! answer headers are exposed so that a page on another origin can read `Location` and
//! `Upload-Offset`.
//!
//! Hand-written rather than tower-http's layer because that layer answers every OPTIONS as a
//! preflight, which would hide tus's own OPTIONS (capability discovery) from clients.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Headers a page may send (`x-request-id`: tus-js-client's `addRequestId`, which Uppy's
/// Transloadit plugin turns on).
const ALLOW_HEADERS: &str = "content-type, tus-resumable, upload-length, upload-offset, \
    upload-metadata, upload-defer-length, upload-concat, upload-checksum, \
    x-http-method-override, x-requested-with, upload-complete, upload-draft-interop-version, \
    x-request-id";

/// Answer headers a page may read.
const EXPOSE_HEADERS: &str = "location, upload-offset, upload-length, upload-metadata, \
    upload-defer-length, upload-concat, upload-expires, tus-resumable, tus-version, \
    tus-extension, tus-max-size, tus-checksum-algorithm, upload-complete, upload-limit, \
    upload-draft-interop-version";

const ALLOW_METHODS: &str = "POST, GET, HEAD, PATCH, DELETE, OPTIONS";

/// The middleware mounted on the tus routes.
pub(super) async fn middleware(request: Request, next: Next) -> Response {
    let headers = request.headers();
    let from_page = headers.contains_key(header::ORIGIN);
    let preflight = from_page
        && request.method() == Method::OPTIONS
        && headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    if preflight {
        let mut out = HeaderMap::new();
        out.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        out.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static(ALLOW_METHODS),
        );
        out.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(ALLOW_HEADERS),
        );
        out.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("86400"),
        );
        return (StatusCode::NO_CONTENT, out).into_response();
    }
    let mut response = next.run(request).await;
    if from_page {
        let out = response.headers_mut();
        out.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        out.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(EXPOSE_HEADERS),
        );
    }
    response
}
