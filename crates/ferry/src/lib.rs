//! The `ferry` server: parses config and wires the libraries together. No protocol logic lives
//! here.
//!
//! # Layout
//!
//! - [`config`]: flags and environment; [`companion`]: the companion's options;
//!   [`compat`]: Companion's `COMPANION_*` environment names mapped onto Ferry's.
//! - `ui`: the web page at `/`, built into the binary (`--ui-dir` or `--no-ui` change that).
//! - `s3`: `--s3-*` options -> the one bucket of the tus store and the `/s3/*` signing routes.
//! - [`app`] builds the router; [`serve`] runs it on a listener until shutdown.

pub mod companion;
pub mod compat;
pub mod config;
mod s3;
mod tus_store;
mod ui;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use ferry_tus::{TusConfig, TusState};
use tokio::net::TcpListener;
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

pub use config::{Cli, Command, ServeConfig};

/// Builds the whole application for `config`.
pub async fn app(config: &ServeConfig) -> std::io::Result<Router> {
    // One bucket for every S3 user: the tus store, the signing routes, s3-multipart transfers.
    let bucket = s3::bucket(&config.s3);
    let signing = s3::signing(&config.s3, bucket.clone())?;
    let store = tus_store::open(config, bucket).await?;
    let tus = TusState::new(
        store,
        TusConfig {
            base_path: "/files/".to_owned(),
            max_size: config.max_size,
            expiry: (config.tus.upload_expiry > 0)
                .then(|| std::time::Duration::from_secs(config.tus.upload_expiry)),
            idle_timeout: std::time::Duration::from_secs(config.tus.idle_timeout),
            max_uploads_per_client: config.tus.max_uploads_per_client,
            trusted_proxies: config.tus.trusted_proxies.clone(),
            cors: true,
            ietf_draft: config.tus.ietf_draft,
            // The in-process upload lock.
            ..TusConfig::default()
        },
    );
    // Detached on purpose: it lives as long as the runtime serving the app.
    drop(tus.spawn_sweeper());
    // The plain form endpoint (XHR uploader, HTML forms) beside tus, same size cap.
    let form = ferry_form::FormState::open(ferry_form::FormConfig {
        dir: config.data_dir.join("form"),
        max_size: config.max_size,
        base_path: "/upload".to_owned(),
    })
    .await?;
    let app = Router::new()
        .route("/health", get(|| async { (StatusCode::OK, "ok\n") }))
        .merge(ferry_tus::router(tus))
        .merge(ferry_form::router(form))
        .merge(
            ferry_companion::router(config.companion.to_config(config.listen, signing.clone()))
                .map_err(std::io::Error::other)?,
        )
        .merge(s3::router(signing, &config.companion.cors_origins))
        .merge(if config.no_ui {
            Router::new()
        } else {
            ui::router(config.ui_dir.as_deref())
        })
        .layer(
            // One line per request, at info: method, path, status, latency.
            TraceLayer::new_for_http()
                .make_span_with(log_span)
                .on_response(DefaultOnResponse::new().level(Level::INFO)),
        );
    Ok(app)
}

/// The span of one request: method and path only. The query string can carry credentials
/// (`uppyAuthToken`) and progress-socket paths carry the transfer token, so neither is logged.
fn log_span(req: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    let path = req.uri().path();
    let path = if path.starts_with("/api/") {
        "/api/<token>"
    } else {
        path
    };
    tracing::info_span!("request", method = %req.method(), path = %path)
}

/// Serves `config` on `listener` until `shutdown` resolves; in-flight requests then get
/// [`SHUTDOWN_GRACE`] to finish.
pub async fn serve(
    config: &ServeConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with_grace(config, listener, shutdown, SHUTDOWN_GRACE).await
}

/// [`serve`] with a chosen grace period after `shutdown`.
pub async fn serve_with_grace(
    config: &ServeConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: std::time::Duration,
) -> std::io::Result<()> {
    // The bound address (not `:0`) is the server's own origin for the companion's allowlist.
    let mut config = config.clone();
    config.listen = listener.local_addr()?;
    let app = app(&config).await?;
    // Connection info lets the tus endpoint cap uploads per client address.
    let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
    let (stopping_tx, stopping_rx) = tokio::sync::oneshot::channel::<()>();
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        shutdown.await;
        let _ = stopping_tx.send(());
    });
    // A stalled client must not keep the process alive forever after a signal: requests in
    // flight get a grace period, then their connections are dropped. Uploads lose nothing
    // acknowledged; tus stores keep every byte that reached them, so clients resume.
    let deadline = async move {
        if stopping_rx.await.is_ok() {
            tokio::time::sleep(grace).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        result = server => result,
        () = deadline => {
            tracing::warn!(?grace, "requests still in flight after the grace period; closing them");
            Ok(())
        }
    }
}

/// How long requests in flight may take to finish after SIGINT/SIGTERM.
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}
