//! Transfer counters and `GET /metrics` in Prometheus text format.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use crate::state::AppState;

/// Counters of the companion's transfers.
#[derive(Debug, Default)]
pub struct Metrics {
    pub active: AtomicU64,
    pub completed: AtomicU64,
    pub failed: AtomicU64,
    pub cancelled: AtomicU64,
    pub bytes: AtomicU64,
    /// Sum of finished transfers' durations, in microseconds.
    pub duration_us: AtomicU64,
}

impl Metrics {
    /// The Prometheus text exposition of the counters.
    pub fn render(&self) -> String {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mut out = String::new();
        let lines: [(&str, &str, &str, String); 6] = [
            (
                "ferry_companion_transfers_active",
                "gauge",
                "Transfers running now.",
                g(&self.active).to_string(),
            ),
            (
                "ferry_companion_transfers_completed_total",
                "counter",
                "Transfers that succeeded.",
                g(&self.completed).to_string(),
            ),
            (
                "ferry_companion_transfers_failed_total",
                "counter",
                "Transfers that failed.",
                g(&self.failed).to_string(),
            ),
            (
                "ferry_companion_transfers_cancelled_total",
                "counter",
                "Transfers cancelled by the client.",
                g(&self.cancelled).to_string(),
            ),
            (
                "ferry_companion_transfer_bytes_total",
                "counter",
                "Bytes delivered to destinations.",
                g(&self.bytes).to_string(),
            ),
            (
                "ferry_companion_transfer_seconds_total",
                "counter",
                "Summed duration of finished transfers.",
                format!("{:.6}", g(&self.duration_us) as f64 / 1e6),
            ),
        ];
        for (name, kind, help, value) in lines {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        }
        out
    }
}

#[utoipa::path(
    get,
    path = "/metrics",
    tag = "server",
    description = "Prometheus text: transfers, hooks and (with `--redis-url`) cluster figures.",
    responses((status = 200, description = "The figures.", body = String, content_type = "text/plain; version=0.0.4")),
)]
pub(crate) async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics().render()
            + &render_auth_sockets(&state)
            + &render_hooks(state.config().hooks.stats()),
    )
}

/// Sign-in sockets open now (only when a provider is enabled: the route exists only then).
fn render_auth_sockets(state: &AppState) -> String {
    if !state.config().providers.any_enabled() {
        return String::new();
    }
    let name = "ferry_companion_auth_sockets_open";
    format!(
        "# HELP {name} Sign-in sockets waiting for a login's token.\n# TYPE {name} gauge\n{name} {}\n",
        state.auth_sockets().open()
    )
}

/// The hook sender's counters (the binary shares one sender between tus, the form endpoint and
/// the companion, so these count every hook sent); nothing without hooks.
fn render_hooks(stats: Option<ferry_hooks::HookStats>) -> String {
    let Some(stats) = stats else {
        return String::new();
    };
    let mut out = String::new();
    for (name, help, value) in [
        (
            "ferry_hooks_sent_total",
            "Hooks the receiver answered.",
            stats.sent,
        ),
        (
            "ferry_hooks_failed_total",
            "Hooks that failed after their retries.",
            stats.failed,
        ),
        (
            "ferry_hooks_dropped_total",
            "Notifications dropped on a full queue.",
            stats.dropped,
        ),
    ] {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
        );
    }
    out
}

/// `GET /metrics`.
pub fn router() -> Router<AppState> {
    Router::new().route("/metrics", get(metrics))
}
