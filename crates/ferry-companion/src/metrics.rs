//! The companion's figures (transfer counters, sign-in sockets) and their Prometheus text
//! ([`render`]). The server's `GET /metrics` gathers them with the other figures of the
//! instance (hooks, cluster).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

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

/// The companion's figures in Prometheus text: its transfer counters and, with a provider
/// enabled, the sign-in sockets open now. The server's `GET /metrics` shows them beside the
/// hooks' and the cluster's.
pub fn render(state: &AppState) -> String {
    state.metrics().render() + &render_local(state) + &render_auth_sockets(state)
}

/// Requests transfers handed to this server's own endpoint in process instead of over HTTP.
fn render_local(state: &AppState) -> String {
    let name = "ferry_companion_local_requests_total";
    format!(
        "# HELP {name} Requests to this server's own tus endpoint handed over in process.\n# TYPE {name} counter\n{name} {}\n",
        state.config().local.requests()
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
