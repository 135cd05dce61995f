//! The `ferry` server: parses config and wires the libraries together. No protocol logic lives
//! here.
//!
//! # Layout
//!
//! - [`config`]: flags and environment; [`companion`]: the companion's options;
//!   [`hooks`]: the hook options and the one hook sender every library shares;
//!   [`compat`]: Companion's `COMPANION_*` environment names mapped onto Ferry's;
//!   [`providers`]: the cloud-provider options (`--google-key`, ...).
//! - [`auth`]: `--auth-secret` and the quotas: the bearer-token gate and its route table.
//! - [`cluster`]: `--redis-url` and friends: wiring the Redis adapters of ferry-cluster in, and
//!   `/health`'s Redis check.
//! - [`process`]: `--assembly-*`: the Assembly API (ferry-process) and its tus bridge.
//! - [`metrics`]: `GET /metrics`, the companion's, the hooks' and the cluster's figures.
//! - `ui`: the web page at `/`, built into the binary (`--ui-dir` or `--no-ui` change that).
//! - [`openapi`]: `GET /openapi.json`, merged from the libraries' parts.
//! - [`reference`]: the option tables of `docs/`, made from clap's declarations.
//! - [`surface`]: the API's edges: JSON 404/405 for unknown paths and methods under an API
//!   prefix, everything else to the page.
//! - `s3`: `--s3-*` options -> the one bucket of the tus store and the `/s3/*` signing routes.
//! - [`app`] builds the router; [`serve`] runs it on a listener until shutdown, through
//!   `serve` (the accept loop: header-read timeout) and `linger` (early answers reach the
//!   client).

pub mod auth;
pub mod cluster;
pub mod companion;
pub mod compat;
pub mod config;
pub mod google_picker;
pub mod hooks;
mod linger;
pub mod metrics;
pub mod openapi;
pub mod process;
pub mod providers;
pub mod reference;
mod s3;
mod serve;
pub mod surface;
mod tus_store;
mod ui;

use axum::Router;
use axum::routing::get;
use ferry_hooks::HookSender;
use ferry_tus::{TusConfig, TusState};
use tokio::net::TcpListener;
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

pub use config::{Cli, Command, ServeConfig};

/// Builds the whole application for `config`.
pub async fn app(config: &ServeConfig) -> std::io::Result<Router> {
    Ok(build(config).await?.0)
}

/// The application, its hook sender (flushed on shutdown), its part in a fleet (hands its
/// transfers over on shutdown) and the companion's state (closes its auth sockets on shutdown).
type Built = (
    Router,
    Option<HookSender>,
    Option<cluster::Fleet>,
    ferry_companion::AppState,
);

/// Builds [`Built`] for `config`.
async fn build(config: &ServeConfig) -> std::io::Result<Built> {
    // One sender for every library, so its queue, limits and counters cover every hook.
    let sender = config.hooks.sender()?;
    let shared_hooks = hooks::shared(sender.as_ref());
    // One bucket for every S3 user: the tus store, the signing routes, s3-multipart transfers.
    let bucket = s3::bucket(&config.s3);
    let gate = config.auth.gate();
    let s3_gate = config.auth.s3_gate(config.s3.auth_secret.as_ref());
    let signing = s3::signing(&config.s3, s3_gate, bucket.clone())?;
    let store = tus_store::open(config, bucket.clone()).await?;
    // Several instances: connect first, so an unreachable Redis stops the start.
    let cluster = config.cluster.connect().await?;
    // The Assembly API, when --assembly-key is set; tus uploads reach it through the hooks.
    let assemblies = config.process.open(config).await?;
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
            hooks: process::tus_hooks(
                shared_hooks.clone(),
                assemblies.as_ref(),
                config,
                bucket.as_ref(),
            ),
            // Redis leases with --redis-url, else the in-process lock.
            lock: cluster::upload_lock(cluster.as_ref())
                .unwrap_or_else(|| TusConfig::default().lock),
        },
    );
    // Detached on purpose: it lives as long as the runtime serving the app.
    drop(tus.spawn_sweeper());
    // The plain form endpoint (XHR uploader, HTML forms) beside tus, same size cap and the
    // same rule for a stalled body.
    let form = ferry_form::FormState::open(ferry_form::FormConfig {
        dir: config.data_dir.join("form"),
        max_size: config.max_size,
        base_path: "/upload".to_owned(),
    })
    .await?
    .with_hooks(shared_hooks.clone())
    .with_idle_timeout(std::time::Duration::from_secs(config.tus.idle_timeout));
    // The companion reaches this application in process once it is built (below).
    let local = ferry_companion::transfer::LocalEndpoint::default();
    let mut companion = ferry_companion::CompanionConfig {
        hooks: shared_hooks.clone(),
        local: local.clone(),
        // Auth sockets are capped per client address, found as the tus endpoint finds it.
        trusted_proxies: config.tus.trusted_proxies.clone(),
        ..config.companion.to_config(config.listen, signing.clone())?
    };
    // Several instances: transfers and logins live in Redis, so any instance serves them.
    let fleet = cluster
        .as_ref()
        .map(|c| cluster::Fleet::new(c, companion.keep_finished));
    if let Some(fleet) = &fleet {
        fleet.join(&mut companion);
    }
    let (companion, companion_state) =
        ferry_companion::router_and_state(companion).map_err(std::io::Error::other)?;
    if let Some(fleet) = &fleet {
        fleet.start_takeovers(companion_state.clone());
    }
    let health = Router::new()
        .route("/health", get(cluster::health))
        .with_state(cluster.clone());
    let metrics = metrics::router(
        metrics::Sources {
            companion: companion_state.clone(),
            hooks: shared_hooks,
            cluster,
        },
        &config.companion.cors_origins,
    );
    let app = Router::new()
        .merge(health)
        .merge(metrics)
        .merge(openapi::router()?)
        .merge(ferry_tus::router(tus))
        .merge(ferry_form::router(form))
        .merge(companion)
        .merge(s3::router(signing, &config.companion.cors_origins))
        .merge(assemblies.map(ferry_process::router).unwrap_or_default())
        // Unknown API paths are JSON 404s; the page gets only what is left.
        .merge(surface::fallback(
            (!config.no_ui).then(|| ui::router(config.ui_dir.as_deref())),
        ))
        .layer(axum::middleware::from_fn(surface::json_method_errors));
    // Every protected route checks the token before anything else runs.
    let app = match gate {
        Some(gate) => app.layer(axum::middleware::from_fn_with_state(
            gate,
            ferry_auth::Gate::middleware,
        )),
        None => app,
    };
    let app = app.layer(
        // One line per request, at info: method, path, status, latency.
        TraceLayer::new_for_http()
            .make_span_with(log_span)
            .on_response(DefaultOnResponse::new().level(Level::INFO)),
    );
    companion::hand_off(&config.companion, &local, &app);
    Ok((app, sender, fleet, companion_state))
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
    let (app, hooks, fleet, companion) = build(&config).await?;
    let local = companion.config().local.clone();
    let (stopping_tx, stopping_rx) = tokio::sync::oneshot::channel::<()>();
    let options = serve::Connections {
        header_timeout: std::time::Duration::from_secs(config.header_timeout),
        linger: linger::Linger::DEFAULT,
    };
    let server = serve::run(listener, app, options, async move {
        shutdown.await;
        // Sign-in sockets wait on nothing a draining server will finish: they go now.
        companion.close(std::time::Duration::from_secs(2)).await;
        // Transfers running here go on elsewhere at once.
        if let Some(fleet) = fleet {
            fleet.hand_over().await;
        }
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
        () = server => {},
        () = deadline => {
            tracing::warn!(?grace, "requests still in flight after the grace period; closing them");
        }
    }
    // The application held itself through the companion's hand-off; let it go.
    local.detach();
    // Notifications still queued (post-finish of the last uploads) get a bounded last chance.
    if let Some(hooks) = hooks {
        if tokio::time::timeout(HOOK_FLUSH, hooks.flush())
            .await
            .is_err()
        {
            tracing::warn!(
                ?HOOK_FLUSH,
                "hook notifications still queued at exit were dropped"
            );
        }
    }
    Ok(())
}

/// How long queued hook notifications may take to be delivered at shutdown.
pub const HOOK_FLUSH: std::time::Duration = std::time::Duration::from_secs(5);

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
