//! `ferry serve`'s hook options, named as tusd names them (`--hooks-http`, `--hooks-dir`,
//! `--hooks-enabled-events`, ...), and the one hook sender built from them that the tus
//! endpoint, the form endpoint and the companion share.
//!
//! Durations take a unit (`500ms`, `2s`, `1m`, as tusd v2's Go durations) or a bare number in
//! the unit tusd used for it: seconds for the backoff and the timeout, milliseconds for the
//! progress interval (tusd v1's `-progress-hooks-interval`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use ferry_hooks::{EnabledEvents, HookSender, Hooks, HooksConfig, NoHooks};

/// tusd's default `--hooks-enabled-events`.
const TUSD_DEFAULT_EVENTS: &str = "pre-create,post-create,post-receive,post-terminate,post-finish";

/// Options of the upload lifecycle hooks.
#[derive(Clone, Args)]
pub struct HooksArgs {
    /// Send each hook as a JSON POST (tusd v2's format) to this URL.
    #[arg(long, env = "FERRY_HOOKS_HTTP")]
    pub hooks_http: Option<String>,

    /// Run the executable named after each hook (`pre-create`, ...) in this directory, with the
    /// hook's JSON on stdin and its answer on stdout, as tusd's file hooks.
    #[arg(long, env = "FERRY_HOOKS_DIR")]
    pub hooks_dir: Option<PathBuf>,

    /// Hooks to send, comma-separated: pre-create, post-create, post-receive, pre-finish,
    /// post-finish, pre-terminate, post-terminate (an empty list: all of them).
    #[arg(long, env = "FERRY_HOOKS_ENABLED_EVENTS", default_value = TUSD_DEFAULT_EVENTS)]
    pub hooks_enabled_events: String,

    /// Headers of the client's request copied onto each HTTP hook request, comma-separated
    /// (they are in the JSON body in any case).
    #[arg(long, env = "FERRY_HOOKS_HTTP_FORWARD_HEADERS", default_value = "")]
    pub hooks_http_forward_headers: String,

    /// Extra attempts after a failed HTTP hook (network error, timeout, 5xx, 429).
    #[arg(long, env = "FERRY_HOOKS_HTTP_RETRY", default_value_t = 3)]
    pub hooks_http_retry: u32,

    /// Wait between attempts (`1s`, `250ms`; a bare number is seconds).
    #[arg(long, env = "FERRY_HOOKS_HTTP_BACKOFF", default_value = "1s",
        value_parser = |raw: &str| parse_duration(raw, Unit::Seconds))]
    pub hooks_http_backoff: Duration,

    /// Longest wait for one hook; a blocking hook that takes longer fails its request with 504
    /// (`15s`; a bare number is seconds).
    #[arg(long, env = "FERRY_HOOKS_HTTP_TIMEOUT", default_value = "15s",
        value_parser = |raw: &str| parse_duration(raw, Unit::Seconds))]
    pub hooks_http_timeout: Duration,

    /// At most one post-receive per upload per interval (`1s`; a bare number is
    /// milliseconds).
    #[arg(long, env = "FERRY_PROGRESS_HOOKS_INTERVAL", default_value = "1s",
        value_parser = |raw: &str| parse_duration(raw, Unit::Millis))]
    pub progress_hooks_interval: Duration,
}

impl Default for HooksArgs {
    fn default() -> Self {
        Self {
            hooks_http: None,
            hooks_dir: None,
            hooks_enabled_events: TUSD_DEFAULT_EVENTS.to_owned(),
            hooks_http_forward_headers: String::new(),
            hooks_http_retry: 3,
            hooks_http_backoff: Duration::from_secs(1),
            hooks_http_timeout: Duration::from_secs(15),
            progress_hooks_interval: Duration::from_secs(1),
        }
    }
}

impl std::fmt::Debug for HooksArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The library's Debug redacts credentials in the URL.
        match self.to_config() {
            Ok(config) => config.fmt(f),
            Err(e) => write!(f, "HooksArgs(invalid: {e})"),
        }
    }
}

impl HooksArgs {
    /// The library settings.
    pub fn to_config(&self) -> Result<HooksConfig, String> {
        let enabled_events =
            EnabledEvents::parse(&self.hooks_enabled_events).map_err(|e| e.to_string())?;
        Ok(HooksConfig {
            http: self.hooks_http.clone().filter(|url| !url.is_empty()),
            dir: self.hooks_dir.clone(),
            enabled_events,
            http_forward_headers: HooksConfig::parse_header_list(&self.hooks_http_forward_headers),
            http_retry: self.hooks_http_retry,
            http_backoff: self.hooks_http_backoff,
            timeout: self.hooks_http_timeout,
            progress_interval: self.progress_hooks_interval,
            ..HooksConfig::default()
        })
    }

    /// The sender these options ask for (`None` without `--hooks-http` or `--hooks-dir`).
    pub fn sender(&self) -> std::io::Result<Option<HookSender>> {
        let invalid = |e: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, e);
        let config = self.to_config().map_err(invalid)?;
        HookSender::from_config(&config).map_err(|e| invalid(e.to_string()))
    }
}

/// The hooks every library emits through: the sender, or none.
pub fn shared(sender: Option<&HookSender>) -> Arc<dyn Hooks> {
    match sender {
        Some(sender) => Arc::new(sender.clone()),
        None => Arc::new(NoHooks),
    }
}

/// The unit of a bare number.
#[derive(Clone, Copy)]
enum Unit {
    Seconds,
    Millis,
}

/// `500ms`, `2s`, `1m`, or a bare number in `bare`.
fn parse_duration(raw: &str, bare: Unit) -> Result<Duration, String> {
    let raw = raw.trim();
    let split = raw.find(|c: char| !c.is_ascii_digit()).unwrap_or(raw.len());
    let (digits, unit) = raw.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{raw:?} is not a duration (e.g. 500ms, 2s, 1m)"))?;
    match (unit, bare) {
        ("", Unit::Seconds) | ("s", _) => Ok(Duration::from_secs(n)),
        ("", Unit::Millis) | ("ms", _) => Ok(Duration::from_millis(n)),
        ("m", _) => Ok(Duration::from_secs(n.saturating_mul(60))),
        _ => Err(format!("{raw:?} is not a duration (e.g. 500ms, 2s, 1m)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_units_or_the_flags_bare_unit() {
        for (raw, bare, want) in [
            ("2s", Unit::Millis, Duration::from_secs(2)),
            ("250ms", Unit::Seconds, Duration::from_millis(250)),
            ("1m", Unit::Seconds, Duration::from_secs(60)),
            ("3", Unit::Seconds, Duration::from_secs(3)),
            ("1000", Unit::Millis, Duration::from_millis(1000)),
        ] {
            assert_eq!(parse_duration(raw, bare), Ok(want), "{raw}");
        }
        for raw in ["", "s", "1h", "-1s", "1.5s", "ten"] {
            assert!(parse_duration(raw, Unit::Seconds).is_err(), "{raw:?}");
        }
    }

    #[test]
    fn defaults_are_tusds() {
        let config = HooksArgs::default().to_config().expect("config");
        let defaults = HooksConfig::default();
        assert_eq!(config.enabled_events, defaults.enabled_events);
        assert_eq!(config.http_retry, defaults.http_retry);
        assert_eq!(config.http_backoff, defaults.http_backoff);
        assert_eq!(config.timeout, defaults.timeout);
        assert_eq!(config.progress_interval, defaults.progress_interval);
        let bad = HooksArgs {
            hooks_enabled_events: "pre-create,post-upload".to_owned(),
            ..HooksArgs::default()
        };
        assert_eq!(
            bad.to_config().err().as_deref(),
            Some("invalid hook configuration: unknown hook event \"post-upload\"")
        );
    }
}
