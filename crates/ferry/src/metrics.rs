//! `GET /metrics`: the instance's figures in Prometheus text, gathered from their owners: the
//! companion's (transfers, sign-in sockets), the hook sender's counters and, with `--redis-url`, the cluster
//! figures labelled with the instance id. The route is the binary's because only the binary knows
//! every source.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use ferry_cluster::{Cluster, Figures};
use ferry_companion::AppState;
use ferry_hooks::{HookStats, Hooks};

/// Where `/metrics` reads its figures.
#[derive(Clone)]
pub struct Sources {
    /// The companion's state (its transfer counters).
    pub companion: AppState,
    /// The one hook sender every library shares, so its counters cover every hook.
    pub hooks: Arc<dyn Hooks>,
    /// This instance's cluster handle, with `--redis-url`.
    pub cluster: Option<Cluster>,
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources")
            .field("cluster", &self.cluster)
            .finish_non_exhaustive()
    }
}

/// `GET /metrics`, with the companion's CORS rules (as its other open routes).
pub fn router(sources: Sources, cors_origins: &[String]) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .with_state(sources)
        .layer(ferry_companion::cors::layer(cors_origins))
}

#[utoipa::path(
    get,
    path = "/metrics",
    tag = "server",
    description = "Prometheus text: transfers, hooks and (with `--redis-url`) cluster figures.",
    responses((status = 200, description = "The figures.", body = String, content_type = "text/plain; version=0.0.4")),
)]
pub(crate) async fn metrics(State(sources): State<Sources>) -> impl IntoResponse {
    let mut text = ferry_companion::metrics::render(&sources.companion);
    text.push_str(&render_hooks(sources.hooks.stats()));
    if let Some(cluster) = &sources.cluster {
        text.push_str(&render_cluster(&cluster.figures()));
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text)
}

/// The hook sender's counters; nothing without hooks.
fn render_hooks(stats: Option<HookStats>) -> String {
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

/// The Prometheus text of one instance's figures, labelled with its instance id.
fn render_cluster(f: &Figures) -> String {
    let flag = |b: bool| u64::from(b);
    let lines: [(&str, &str, &str, u64); 13] = [
        (
            "ferry_cluster_redis_reachable",
            "gauge",
            "1 when the last Redis command succeeded.",
            flag(f.redis_reachable),
        ),
        (
            "ferry_cluster_subscriber_connected",
            "gauge",
            "1 while the pub/sub connection is up.",
            flag(f.subscriber_connected),
        ),
        (
            "ferry_cluster_leases_held",
            "gauge",
            "Upload lock leases held by this instance.",
            f.leases_held,
        ),
        (
            "ferry_cluster_leases_lost_total",
            "counter",
            "Leases that expired or were taken while held.",
            f.leases_lost,
        ),
        (
            "ferry_cluster_release_requests_sent_total",
            "counter",
            "Release requests sent to other holders.",
            f.release_requests_sent,
        ),
        (
            "ferry_cluster_release_requests_received_total",
            "counter",
            "Release requests received by holders here.",
            f.release_requests_received,
        ),
        (
            "ferry_cluster_transfers_owned",
            "gauge",
            "Transfers owned by this instance.",
            f.transfers_owned,
        ),
        (
            "ferry_cluster_takeovers_total",
            "counter",
            "Transfers claimed from a silent or departed owner.",
            f.takeovers,
        ),
        (
            "ferry_cluster_handovers_total",
            "counter",
            "Transfers handed over at shutdown.",
            f.handovers,
        ),
        (
            "ferry_cluster_pubsub_reconnects_total",
            "counter",
            "Times the pub/sub connection came back.",
            f.pubsub_reconnects,
        ),
        (
            "ferry_cluster_pubsub_lag_ms_last",
            "gauge",
            "Publish-to-receive delay of the last replayed message, ms.",
            f.pubsub_lag_ms_last,
        ),
        (
            "ferry_cluster_pubsub_lag_ms_max",
            "gauge",
            "Largest publish-to-receive delay seen, ms.",
            f.pubsub_lag_ms_max,
        ),
        (
            "ferry_cluster_redis_errors_total",
            "counter",
            "Redis commands that failed or timed out.",
            f.redis_errors,
        ),
    ];
    let instance = f.instance_id.replace('\\', "\\\\").replace('"', "\\\"");
    let mut out = String::new();
    for (name, kind, help, value) in lines {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name}{{instance=\"{instance}\"}} {value}"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_render_as_labelled_prometheus_lines() {
        let figures = Figures {
            instance_id: "7-ab\"c".to_owned(),
            redis_reachable: true,
            subscriber_connected: false,
            leases_held: 3,
            leases_lost: 1,
            release_requests_sent: 4,
            release_requests_received: 5,
            transfers_owned: 0,
            takeovers: 2,
            handovers: 0,
            pubsub_reconnects: 6,
            pubsub_lag_ms_last: 7,
            pubsub_lag_ms_max: 9,
            redis_errors: 8,
        };
        let text = render_cluster(&figures);
        for line in [
            "# TYPE ferry_cluster_leases_held gauge",
            "ferry_cluster_redis_reachable{instance=\"7-ab\\\"c\"} 1",
            "ferry_cluster_subscriber_connected{instance=\"7-ab\\\"c\"} 0",
            "ferry_cluster_leases_held{instance=\"7-ab\\\"c\"} 3",
            "ferry_cluster_takeovers_total{instance=\"7-ab\\\"c\"} 2",
            "ferry_cluster_pubsub_lag_ms_max{instance=\"7-ab\\\"c\"} 9",
            "ferry_cluster_redis_errors_total{instance=\"7-ab\\\"c\"} 8",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line} missing from\n{text}"
            );
        }
        assert_eq!(text.lines().count(), 13 * 3);
    }
}
