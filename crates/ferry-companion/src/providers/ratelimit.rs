//! Providers' rate limits: which answers are one, how long the provider asks to wait, and how
//! long Ferry is willing to.
//!
//! A rate limit is a 429; a 503 that carries `Retry-After`; or an API's own signal (Google's
//! 403 `rateLimitExceeded` / `userRateLimitExceeded`, Facebook Graph's throttling codes 4, 17,
//! 32 and 613 on a 400 or 403). The wait asked is `Retry-After`
//! (delta-seconds or an HTTP-date, RFC 9110 §10.2.3), else Dropbox's `error.retry_after` in a
//! `too_many_requests` body, else the configured backoff step. Each wait is capped
//! ([`RateLimits::max_wait`]: a provider asking for longer is reported at once, not waited for),
//! the waits of one call are bounded in total ([`RateLimits::budget`]) and in number (the
//! backoff's length). What is left over is [`super::ProviderError::RateLimited`] with the
//! seconds the provider asked for, which the routes answer as a 429 with `Retry-After`.
//!
//! While a call waits, a hook set with [`observe`] hears of it (an import's progress socket
//! says "waiting" to the person instead of going quiet).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use serde_json::Value;

/// How long Ferry waits out a provider's rate limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateLimits {
    /// Waits before each retry when the provider does not say how long; its length is the
    /// number of retries of one call.
    pub backoff: Vec<Duration>,
    /// The longest single wait honoured; a provider asking for more is reported at once.
    pub max_wait: Duration,
    /// The longest total wait of one call.
    pub budget: Duration,
}

impl Default for RateLimits {
    fn default() -> Self {
        Self {
            backoff: [1000, 2000, 4000].map(Duration::from_millis).to_vec(),
            max_wait: Duration::from_secs(10),
            budget: Duration::from_secs(30),
        }
    }
}

/// Whether an answer is a rate limit, and the wait it asks for (`None`: it does not say).
pub fn signal(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Option<Option<Duration>> {
    let asked = retry_after(headers, SystemTime::now());
    let limited = match status {
        StatusCode::TOO_MANY_REQUESTS => true,
        // A 503 is a rate limit only when it says when to come back (Graph's throttling);
        // otherwise it is an outage and reads as one.
        StatusCode::SERVICE_UNAVAILABLE => asked.is_some(),
        StatusCode::FORBIDDEN => google_rate_limit(body) || graph_throttled(body),
        StatusCode::BAD_REQUEST => graph_throttled(body),
        _ => false,
    };
    limited.then(|| asked.or_else(|| dropbox_retry_after(body)))
}

/// `Retry-After` as a wait from `now`: delta-seconds, or an HTTP-date (a past date is 0).
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let raw = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = raw.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(raw).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

fn google_rate_limit(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body);
    text.contains("rateLimitExceeded") || text.contains("userRateLimitExceeded")
}

/// Graph API throttling codes: app (4), user (17), page (32) and call-type (613) limits.
const GRAPH_THROTTLE_CODES: [i64; 4] = [4, 17, 32, 613];

/// Facebook Graph's throttling: `{"error": {"code": 17, ...}}`. Google's `error.code` is the HTTP
/// status (403, 429) and other providers' codes are strings, so these small numbers are Graph's.
fn graph_throttled(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.pointer("/error/code").and_then(Value::as_i64))
        .is_some_and(|c| GRAPH_THROTTLE_CODES.contains(&c))
}

/// Dropbox's `{"error": {".tag": "too_many_requests"...}, "retry_after": N}` (the `error`
/// object carries `retry_after` beside `reason`).
fn dropbox_retry_after(body: &[u8]) -> Option<Duration> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let secs = v
        .pointer("/error/retry_after")
        .or_else(|| v.get("retry_after"))?
        .as_u64()?;
    Some(Duration::from_secs(secs))
}

/// Seconds to tell a person for `wait`: whole seconds, rounded up, at least 1.
pub fn whole_seconds(wait: Duration) -> u64 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    secs.max(1)
}

/// The waits of one call so far.
#[derive(Debug)]
pub struct Waits<'a> {
    limits: &'a RateLimits,
    retries: usize,
    waited: Duration,
}

impl<'a> Waits<'a> {
    pub fn new(limits: &'a RateLimits) -> Self {
        Self {
            limits,
            retries: 0,
            waited: Duration::ZERO,
        }
    }

    /// The wait before the next retry of a call rate-limited asking for `asked`; or, when
    /// Ferry will not wait (over the cap, the budget or the number of retries), the seconds
    /// to report.
    pub fn next(&mut self, asked: Option<Duration>) -> Result<Duration, u64> {
        let step = self.limits.backoff.get(self.retries).copied();
        let wait = match (asked, step) {
            (Some(asked), Some(_)) => asked,
            (None, Some(step)) => step,
            (asked, None) => {
                let last = self.limits.backoff.last().copied().unwrap_or_default();
                return Err(whole_seconds(asked.unwrap_or(last)));
            }
        };
        if wait > self.limits.max_wait || self.waited + wait > self.limits.budget {
            return Err(whole_seconds(wait));
        }
        self.retries += 1;
        self.waited += wait;
        Ok(wait)
    }
}

/// Hears of each wait (whole seconds) of the provider calls it was set for.
pub type WaitHook = Arc<dyn Fn(u64) + Send + Sync>;

tokio::task_local! {
    static ON_WAIT: WaitHook;
}

/// Runs `fut` with `hook` told of every rate-limit wait its provider calls make.
pub async fn observe<F: Future>(hook: WaitHook, fut: F) -> F::Output {
    ON_WAIT.scope(hook, fut).await
}

/// Tells the current [`observe`] hook, if any, of a wait.
pub fn waiting(wait: Duration) {
    let _ = ON_WAIT.try_with(|hook| hook(whole_seconds(wait)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(retry_after: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            RETRY_AFTER,
            HeaderValue::from_str(retry_after).expect("value"),
        );
        h
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(
            retry_after(&headers("120"), now),
            Some(Duration::from_secs(120))
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(90));
        assert_eq!(
            retry_after(&headers(&later), now),
            Some(Duration::from_secs(90))
        );
        let past = httpdate::fmt_http_date(now - Duration::from_secs(5));
        assert_eq!(retry_after(&headers(&past), now), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers("soon"), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn what_counts_as_a_rate_limit() {
        let none = HeaderMap::new();
        assert_eq!(
            signal(StatusCode::TOO_MANY_REQUESTS, &none, b""),
            Some(None)
        );
        assert_eq!(
            signal(StatusCode::SERVICE_UNAVAILABLE, &headers("3"), b""),
            Some(Some(Duration::from_secs(3)))
        );
        assert_eq!(signal(StatusCode::SERVICE_UNAVAILABLE, &none, b""), None);
        let google = br#"{"error":{"errors":[{"reason":"userRateLimitExceeded"}]}}"#;
        assert_eq!(signal(StatusCode::FORBIDDEN, &none, google), Some(None));
        assert_eq!(signal(StatusCode::FORBIDDEN, &none, b"{}"), None);
        let dropbox = br#"{"error_summary":"too_many_requests/..","error":{"reason":{".tag":"too_many_requests"},"retry_after":7}}"#;
        assert_eq!(
            signal(StatusCode::TOO_MANY_REQUESTS, &none, dropbox),
            Some(Some(Duration::from_secs(7)))
        );
        for code in [4, 17, 32, 613] {
            let graph = format!(r#"{{"error":{{"message":"(#{code}) limit","code":{code}}}}}"#);
            assert_eq!(
                signal(StatusCode::BAD_REQUEST, &none, graph.as_bytes()),
                Some(None),
                "{code}"
            );
        }
        let expired = br#"{"error":{"code":190}}"#;
        assert_eq!(signal(StatusCode::BAD_REQUEST, &none, expired), None);
        let google_code = br#"{"error":{"code":403,"message":"forbidden"}}"#;
        assert_eq!(signal(StatusCode::FORBIDDEN, &none, google_code), None);
        // The header wins over the body.
        assert_eq!(
            signal(StatusCode::TOO_MANY_REQUESTS, &headers("2"), dropbox),
            Some(Some(Duration::from_secs(2)))
        );
    }

    #[test]
    fn waits_are_capped_bounded_and_counted() {
        let limits = RateLimits {
            backoff: vec![Duration::from_millis(100); 3],
            max_wait: Duration::from_secs(10),
            budget: Duration::from_secs(15),
        };
        let mut waits = Waits::new(&limits);
        assert_eq!(waits.next(None), Ok(Duration::from_millis(100)));
        assert_eq!(
            waits.next(Some(Duration::from_secs(8))),
            Ok(Duration::from_secs(8))
        );
        // 8.1 s waited: 8 more would pass the 15 s budget.
        assert_eq!(waits.next(Some(Duration::from_secs(8))), Err(8));
        assert_eq!(
            waits.next(Some(Duration::from_secs(6))),
            Ok(Duration::from_secs(6))
        );
        // Three retries spent.
        assert_eq!(waits.next(None), Err(1));
        let mut fresh = Waits::new(&limits);
        assert_eq!(fresh.next(Some(Duration::from_secs(120))), Err(120));
    }
}
