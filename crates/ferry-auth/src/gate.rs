//! The middleware in front of the protected routes: it finds the request's token, checks it and
//! puts the [`Principal`] in the request's extensions for the handlers. Which routes it guards is
//! the server's choice ([`Protect`]), since only the server knows all of its routes.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::AuthError;
use crate::principal::Principal;
use crate::quota::Quota;
use crate::{jwt, token};

/// Whether a request (method, path) needs a token.
pub type Protect = fn(&Method, &str) -> bool;

/// The checker of one secret, for the routes `protect` names.
#[derive(Clone)]
pub struct Gate {
    secret: Arc<[u8]>,
    quota: Option<Arc<Quota>>,
    protect: Protect,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("secret", &"[redacted]")
            .field("quota", &self.quota)
            .finish_non_exhaustive()
    }
}

impl Gate {
    /// A gate checking tokens signed with `secret` on the routes `protect` names.
    pub fn new(secret: &[u8], protect: Protect) -> Self {
        Self {
            secret: secret.into(),
            quota: None,
            protect,
        }
    }

    /// Charges every admitted file to its subject's `quota`.
    pub fn with_quota(mut self, quota: Quota) -> Self {
        self.quota = Some(Arc::new(quota));
        self
    }

    /// The same secret and quota for the routes `protect` names.
    pub fn protecting(&self, protect: Protect) -> Self {
        Self {
            protect,
            ..self.clone()
        }
    }

    /// A short tag of `subject` (16 hex digits of an HMAC under the secret), to bind names such
    /// as object keys to a subject without revealing it; it cannot be forged without the secret.
    pub fn subject_tag(&self, subject: &str) -> String {
        // The same derivation the S3 routes used before, so existing keys keep their owner.
        let mac = jwt::mac(&self.secret, format!("ferry-s3-key:{subject}").as_bytes());
        mac[..8].iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The principal of `token` at `now` (Unix seconds).
    pub fn principal(&self, token: &str, now: u64) -> Result<Principal, AuthError> {
        let claims = token::verify(&self.secret, token, now)?;
        Ok(Principal::new(claims, self.quota.clone()).with_token(token))
    }

    /// The middleware: open routes pass untouched; protected ones need a valid token.
    pub async fn middleware(
        State(gate): State<Gate>,
        mut request: Request,
        next: Next,
    ) -> Response {
        if !(gate.protect)(request.method(), request.uri().path()) {
            return next.run(request).await;
        }
        let principal = match bearer(&request) {
            Some(token) => gate.principal(token, now_secs()),
            None => Err(AuthError::Missing),
        };
        match principal {
            Ok(principal) => {
                request.extensions_mut().insert(principal);
                next.run(request).await
            }
            Err(e) => readable_refusal(&request, e),
        }
    }
}

/// The refusal, readable by the page that sent the request. The gate answers before the
/// routes' own CORS layers run, so without this a browser would hide the message (and the
/// status) from the page on another origin; the body says nothing but why the token failed.
fn readable_refusal(request: &Request, e: AuthError) -> Response {
    let mut response = e.into_response();
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("www-authenticate"),
        );
        headers.insert(header::VARY, HeaderValue::from_static("origin"));
    }
    response
}

/// The token of a request: `Authorization: Bearer ...`, else the `access_token` query parameter
/// (RFC 6750 §2.3), for what a browser cannot add headers to (websockets, images).
fn bearer(request: &Request) -> Option<&str> {
    if let Some(value) = request.headers().get(header::AUTHORIZATION) {
        let value = value.to_str().ok()?;
        let (scheme, token) = value.split_once(' ')?;
        return scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| token.trim())
            .filter(|t| !t.is_empty());
    }
    request
        .uri()
        .query()?
        .split('&')
        .find_map(|pair| pair.strip_prefix("access_token="))
        .filter(|t| !t.is_empty())
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token::{Claims, issue};
    use axum::Router;
    use axum::body::Body;
    use axum::http::StatusCode;
    use axum::routing::get;
    use tower::ServiceExt;

    fn app() -> Router {
        let gate = Gate::new(b"k", |_, path| path.starts_with("/private"));
        Router::new()
            .route(
                "/private",
                get(|p: axum::Extension<Principal>| async move { p.subject().to_owned() }),
            )
            .route("/open", get(|| async { "open" }))
            .layer(axum::middleware::from_fn_with_state(gate, Gate::middleware))
    }

    async fn call(uri: &str, auth: Option<&str>) -> (StatusCode, String) {
        let mut req = Request::get(uri);
        if let Some(auth) = auth {
            req = req.header(header::AUTHORIZATION, auth);
        }
        let res = app()
            .oneshot(req.body(Body::empty()).expect("request"))
            .await
            .expect("infallible");
        let status = res.status();
        let body = axum::body::to_bytes(res.into_body(), 1 << 16)
            .await
            .expect("body");
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn tokens_come_from_the_header_or_the_query() {
        let token = issue(
            b"k",
            &Claims {
                sub: "alice".into(),
                exp: now_secs() + 60,
                ..Claims::default()
            },
        );
        assert_eq!(
            call("/private", Some(&format!("Bearer {token}"))).await,
            (StatusCode::OK, "alice".into())
        );
        assert_eq!(
            call("/private", Some(&format!("bearer  {token}"))).await,
            (StatusCode::OK, "alice".into())
        );
        assert_eq!(
            call(&format!("/private?x=1&access_token={token}"), None).await,
            (StatusCode::OK, "alice".into())
        );
        assert_eq!(call("/open", None).await, (StatusCode::OK, "open".into()));
        let (status, body) = call("/private", None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(body, r#"{"message":"a bearer token is required"}"#);
        let (status, body) = call("/private", Some(&format!("Basic {token}"))).await;
        assert_eq!(
            (status, body.as_str()),
            (
                StatusCode::UNAUTHORIZED,
                r#"{"message":"a bearer token is required"}"#
            )
        );
        let (status, body) = call("/private", Some("Bearer nope")).await;
        assert_eq!(
            (status, body.as_str()),
            (StatusCode::UNAUTHORIZED, r#"{"message":"invalid token"}"#)
        );
    }
}
