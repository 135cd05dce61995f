//! The in-process hand-off to this server's own endpoint. When a transfer's tus destination is
//! under one of [`crate::CompanionConfig::own_origins`], sending its bytes over loopback HTTP
//! would copy each of them three more times (the send, the receive, the endpoint's batch) for
//! nothing: the endpoint is in this very process. The binary, which knows the whole application,
//! attaches it here as a [`LocalApp`]; the tus destination then calls it directly, with the
//! same request it would have sent (same path, headers and streamed body), so every check the
//! application makes on a request (auth, hooks, limits, metrics) still applies.
//!
//! The companion never depends on the tus crate: the seam is an HTTP request and its answer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use axum::body::Body;
use axum::http::{Request, Response};
use futures_util::future::BoxFuture;
use url::Url;

/// This server's HTTP application, reached without a socket.
pub trait LocalApp: Send + Sync + std::fmt::Debug {
    /// Serves `request` (origin-form URI, `Host` set) as if it had arrived on a connection.
    fn call(&self, request: Request<Body>) -> BoxFuture<'static, Response<Body>>;
}

/// Where the application is attached once built (the companion's routes are part of it, so it
/// cannot exist when the companion's state is made). Cheap to clone; detached by default, and
/// then every destination is reached over HTTP.
#[derive(Clone, Debug, Default)]
pub struct LocalEndpoint {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    app: RwLock<Option<Arc<dyn LocalApp>>>,
    /// Requests handed to the application in process, for `/metrics` (and the tests that prove
    /// the hand-off happened).
    requests: AtomicU64,
}

impl LocalEndpoint {
    /// Hands requests to this server's own origins to `app` from now on.
    pub fn attach(&self, app: Arc<dyn LocalApp>) {
        *self.inner.app.write().unwrap_or_else(|p| p.into_inner()) = Some(app);
    }

    /// Back to HTTP for every destination. The application holds the companion's state, which
    /// holds this: detaching at shutdown breaks that cycle.
    pub fn detach(&self) {
        *self.inner.app.write().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Requests handed over in process so far.
    pub fn requests(&self) -> u64 {
        self.inner.requests.load(Ordering::Relaxed)
    }

    /// The application, when `url` is under one of `own_origins` and one is attached. A URL
    /// carrying credentials (`user:pass@`) goes over HTTP, which would send them.
    pub(crate) fn route(&self, url: &Url, own_origins: &[String]) -> Option<Local> {
        if !url.username().is_empty() || url.password().is_some() {
            return None;
        }
        let origin = url.origin().ascii_serialization();
        if !own_origins.contains(&origin) {
            return None;
        }
        let app = self
            .inner
            .app
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        Some(Local {
            app,
            endpoint: self.clone(),
        })
    }
}

/// The application as one request reaches it, counted in [`LocalEndpoint::requests`].
#[derive(Debug)]
pub(crate) struct Local {
    app: Arc<dyn LocalApp>,
    endpoint: LocalEndpoint,
}

impl Local {
    /// Serves `request` on a task of its own, as a connection would: when the caller gives up
    /// (a pause, a cancel), the request's body ends with an error and the endpoint finishes the
    /// request as it does for a client gone mid-body, instead of being dropped mid-write.
    pub(crate) async fn send(
        self,
        request: Request<Body>,
    ) -> Result<Response<Body>, tokio::task::JoinError> {
        self.endpoint.inner.requests.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(self.app.call(request)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Nothing;

    impl LocalApp for Nothing {
        fn call(&self, _: Request<Body>) -> BoxFuture<'static, Response<Body>> {
            Box::pin(async { Response::new(Body::empty()) })
        }
    }

    fn own() -> Vec<String> {
        vec![
            "http://127.0.0.1:8080".to_owned(),
            "https://files.example.com".to_owned(),
        ]
    }

    fn routed(endpoint: &LocalEndpoint, url: &str) -> bool {
        endpoint
            .route(&Url::parse(url).expect("url"), &own())
            .is_some()
    }

    #[test]
    fn only_own_origins_are_handed_over_and_only_when_attached() {
        let endpoint = LocalEndpoint::default();
        assert!(!routed(&endpoint, "http://127.0.0.1:8080/files/"));
        endpoint.attach(Arc::new(Nothing));
        assert!(routed(&endpoint, "http://127.0.0.1:8080/files/"));
        assert!(routed(&endpoint, "https://FILES.example.com:443/files/x"));
        // Another port, scheme or host, or credentials in the URL: over HTTP.
        assert!(!routed(&endpoint, "http://127.0.0.1:8081/files/"));
        assert!(!routed(&endpoint, "https://127.0.0.1:8080/files/"));
        assert!(!routed(&endpoint, "http://files.example.com/files/"));
        assert!(!routed(
            &endpoint,
            "https://files.example.com.evil.test/files/"
        ));
        assert!(!routed(&endpoint, "http://u:p@127.0.0.1:8080/files/"));
        endpoint.detach();
        assert!(!routed(&endpoint, "http://127.0.0.1:8080/files/"));
    }
}
