//! Hook settings as plain data, free of any flag parser; the binary maps its flags and
//! `FERRY_HOOKS_*` variables onto it.
//!
//! Defaults are tusd v2's, from `cmd/tusd/cli/flags.go` and the hooks documentation
//! (`docs/_advanced-topics/hooks.md`): enabled events
//! `pre-create,post-create,post-receive,post-terminate,post-finish`, 3 retries, 1 s backoff,
//! 15 s timeout (`-hooks-http-timeout`), 5 KiB response limit (`-hooks-http-size-limit`), 1 s
//! progress interval (`-progress-hooks-interval`; tusd v1 took it in milliseconds, 1000).
//! The queue bounds are Ferry's own: tusd starts a goroutine per notification without limit.
//!
//! | field                  | flag                           | default             |
//! |------------------------|--------------------------------|---------------------|
//! | `http`                 | `--hooks-http URL`             | none                |
//! | `dir`                  | `--hooks-dir DIR`              | none                |
//! | `enabled_events`       | `--hooks-enabled-events LIST`  | tusd's five         |
//! | `http_forward_headers` | `--hooks-http-forward-headers` | none                |
//! | `http_retry`           | `--hooks-http-retry N`         | 3                   |
//! | `http_backoff`         | `--hooks-http-backoff SECONDS` | 1 s                 |
//! | `timeout`              | `--hooks-http-timeout SECONDS` | 15 s                |
//! | `response_size_limit`  | `--hooks-http-size-limit BYTES`| 5120                |
//! | `progress_interval`    | `--progress-hooks-interval MS` | 1000 ms             |
//! | `queue_capacity`       | (none)                         | 1024 notifications  |
//! | `max_in_flight`        | (none)                         | 16 deliveries       |

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::kind::EnabledEvents;

/// Everything the senders need.
#[derive(Clone)]
pub struct HooksConfig {
    /// Endpoint receiving a POST per hook; `http://` or `https://`.
    pub http: Option<String>,
    /// Directory of executables named after the hooks (`pre-create`, ...).
    pub dir: Option<PathBuf>,
    /// Hooks that are sent.
    pub enabled_events: EnabledEvents,
    /// Headers of the client's request copied onto the hook request (for proxies that
    /// authenticate without reading the body); they are in the JSON body in any case.
    pub http_forward_headers: Vec<String>,
    /// Extra attempts after a failed one (network error, timeout, 5xx or 429).
    pub http_retry: u32,
    /// Wait between attempts.
    pub http_backoff: Duration,
    /// Longest wait for one hook: a blocking hook's whole exchange, retries included; one
    /// attempt of a background delivery, or one run of a file hook.
    pub timeout: Duration,
    /// Largest accepted answer (HTTP body or a file hook's stdout), in bytes.
    pub response_size_limit: usize,
    /// At most one post-receive per upload per interval.
    pub progress_interval: Duration,
    /// Notifications waiting for delivery; when full, new ones are dropped and counted.
    pub queue_capacity: usize,
    /// Notifications delivered at once.
    pub max_in_flight: usize,
}

impl Default for HooksConfig {
    fn default() -> Self {
        Self {
            http: None,
            dir: None,
            enabled_events: EnabledEvents::tusd_default(),
            http_forward_headers: Vec::new(),
            http_retry: 3,
            http_backoff: Duration::from_secs(1),
            timeout: Duration::from_secs(15),
            response_size_limit: 5 * 1024,
            progress_interval: Duration::from_secs(1),
            queue_capacity: 1024,
            max_in_flight: 16,
        }
    }
}

impl HooksConfig {
    /// Splits the flag's comma-separated header list, dropping blanks.
    pub fn parse_header_list(list: &str) -> Vec<String> {
        list.split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect()
    }
}

impl fmt::Debug for HooksConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HooksConfig")
            .field("http", &self.http.as_deref().map(redact_url))
            .field("dir", &self.dir)
            .field("enabled_events", &self.enabled_events)
            .field("http_forward_headers", &self.http_forward_headers)
            .field("http_retry", &self.http_retry)
            .field("http_backoff", &self.http_backoff)
            .field("timeout", &self.timeout)
            .field("response_size_limit", &self.response_size_limit)
            .field("progress_interval", &self.progress_interval)
            .field("queue_capacity", &self.queue_capacity)
            .field("max_in_flight", &self.max_in_flight)
            .finish()
    }
}

/// The URL without what may be a secret: credentials and the query.
pub(crate) fn redact_url(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(mut url) => {
            if !url.username().is_empty() || url.password().is_some() {
                let _ = url.set_username("redacted");
                let _ = url.set_password(None);
            }
            if url.query().is_some() {
                url.set_query(Some("redacted"));
            }
            url.to_string()
        }
        Err(_) => "<invalid URL>".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_credentials_in_the_url() {
        let config = HooksConfig {
            http: Some("https://user:hunter2@hooks.example/tus?token=s3cret".to_owned()),
            ..HooksConfig::default()
        };
        let debug = format!("{config:?}");
        assert!(
            debug.contains("https://redacted@hooks.example/tus?redacted"),
            "{debug}"
        );
        assert!(
            !debug.contains("hunter2") && !debug.contains("s3cret"),
            "{debug}"
        );
    }

    #[test]
    fn header_lists_split_on_commas() {
        assert_eq!(
            HooksConfig::parse_header_list("Authorization, Cookie,,"),
            ["Authorization", "Cookie"]
        );
        assert!(HooksConfig::parse_header_list(" ").is_empty());
    }
}
