//! CORS for the companion routes from `--cors-origins`: credentials allowed, the request headers
//! Uppy's client sends, and `i-am` exposed.

use axum::http::{HeaderName, HeaderValue, Method};
use tower_http::cors::{AllowOrigin, CorsLayer};

/// The layer for `origins` (`*` or `true` means any origin, mirrored; empty means none).
pub fn layer(origins: &[String]) -> CorsLayer {
    let any = origins.iter().any(|o| o == "*" || o == "true");
    let allow = if any {
        AllowOrigin::mirror_request()
    } else {
        let list: Vec<HeaderValue> = origins
            .iter()
            .filter_map(|o| HeaderValue::from_str(o.trim().trim_end_matches('/')).ok())
            .collect();
        AllowOrigin::list(list)
    };
    CorsLayer::new()
        .allow_origin(allow)
        .allow_credentials(true)
        .allow_methods([
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
            Method::OPTIONS,
        ])
        .allow_headers([
            HeaderName::from_static("uppy-auth-token"),
            HeaderName::from_static("uppy-credentials-params"),
            HeaderName::from_static("uppy-versions"),
            HeaderName::from_static("content-type"),
            HeaderName::from_static("accept"),
            HeaderName::from_static("authorization"),
        ])
        .expose_headers([HeaderName::from_static("i-am")])
}
