//! HTTP hooks as tusd sends them (`pkg/hooks/http/http.go`): one POST per hook with the JSON
//! hook request, the configured client headers copied onto it, and a JSON answer. Network
//! errors, timeouts, 5xx and 429 are retried after the backoff; any other non-2xx, an answer
//! without `Content-Type: application/json` (tusd requires it), a larger body than the limit or
//! invalid JSON fails at once. Redirects are not followed: a hook endpoint that moved is a
//! configuration error, and following it would resend client headers elsewhere.

use std::time::Duration;

use ::http::{HeaderName, HeaderValue, header};
use async_trait::async_trait;
use tokio::time::Instant;

use super::Transport;
use crate::config::{HooksConfig, redact_url};
use crate::error::HookError;
use crate::event::HookEvent;
use crate::kind::HookType;
use crate::response::HookResponse;

/// Headers that describe the hook request itself; copying the client's would corrupt it.
const NOT_FORWARDABLE: [&str; 6] = [
    "content-type",
    "content-length",
    "transfer-encoding",
    "host",
    "connection",
    "expect",
];

#[derive(Debug)]
pub(super) struct HttpTransport {
    client: reqwest::Client,
    url: reqwest::Url,
    forward: Vec<HeaderName>,
    retry: u32,
    backoff: Duration,
    timeout: Duration,
    size_limit: usize,
}

/// How an attempt failed: worth another try or not.
enum Failure {
    Retry(HookError),
    Final(HookError),
}

impl HttpTransport {
    pub(super) fn new(config: &HooksConfig, url: &str) -> Result<Self, HookError> {
        let url = reqwest::Url::parse(url)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https") && url.has_host())
            .ok_or_else(|| {
                HookError::Config(format!(
                    "--hooks-http must be an http:// or https:// URL, got {}",
                    redact_url(url)
                ))
            })?;
        let forward = config
            .http_forward_headers
            .iter()
            .map(|name| {
                let parsed = HeaderName::from_bytes(name.trim().as_bytes())
                    .map_err(|_| HookError::Config(format!("invalid header name {name:?}")))?;
                if NOT_FORWARDABLE.contains(&parsed.as_str()) {
                    return Err(HookError::Config(format!(
                        "header {name} cannot be forwarded to the hook endpoint"
                    )));
                }
                Ok(parsed)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("ferry-hooks/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|err| HookError::Config(format!("HTTP client: {err}")))?;
        Ok(Self {
            client,
            url,
            forward,
            retry: config.http_retry,
            backoff: config.http_backoff,
            timeout: config.timeout,
            size_limit: config.response_size_limit,
        })
    }

    async fn attempt(
        &self,
        event: &HookEvent,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<HookResponse, Failure> {
        let hook = event.hook;
        let mut request = self
            .client
            .post(self.url.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .body(body);
        for name in &self.forward {
            for value in event.request().header_values(name.as_str()) {
                match HeaderValue::from_str(value) {
                    Ok(value) => request = request.header(name.clone(), value),
                    Err(_) => {
                        tracing::debug!(%hook, header = %name, "unforwardable header value skipped")
                    }
                }
            }
        }
        let exchange = async {
            let response = request.send().await.map_err(|err| {
                Failure::Retry(HookError::unavailable(hook, describe_reqwest(&err)))
            })?;
            let status = response.status();
            let content_type = response
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            let body = read_limited(response, self.size_limit, hook).await?;
            if !status.is_success() {
                let detail = format!(
                    "endpoint answered {status}: {}",
                    String::from_utf8_lossy(&body[..body.len().min(200)])
                );
                let err = HookError::unavailable(hook, detail);
                let retryable =
                    status.is_server_error() || status == ::http::StatusCode::TOO_MANY_REQUESTS;
                return Err(if retryable {
                    Failure::Retry(err)
                } else {
                    Failure::Final(err)
                });
            }
            if !is_json(content_type.as_deref()) {
                return Err(Failure::Final(HookError::invalid(
                    hook,
                    format!(
                        "answer's Content-Type is {:?}, not application/json",
                        content_type.unwrap_or_default()
                    ),
                )));
            }
            HookResponse::from_json(&body)
                .map_err(|err| Failure::Final(HookError::invalid(hook, err.to_string())))
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .unwrap_or(Err(Failure::Retry(HookError::Timeout {
                hook,
                after: timeout,
            })))
    }
}

#[async_trait]
impl Transport for HttpTransport {
    async fn send(
        &self,
        event: &HookEvent,
        deadline: Option<Instant>,
    ) -> Result<HookResponse, HookError> {
        let body = serde_json::to_vec(event)
            .map_err(|err| HookError::unavailable(event.hook, format!("encoding: {err}")))?;
        let mut retries_left = self.retry;
        loop {
            let timeout = match deadline {
                Some(deadline) => self
                    .timeout
                    .min(deadline.saturating_duration_since(Instant::now())),
                None => self.timeout,
            };
            let err = match self.attempt(event, body.clone(), timeout).await {
                Ok(response) => return Ok(response),
                Err(Failure::Final(err)) => return Err(err),
                Err(Failure::Retry(err)) => err,
            };
            let past_deadline =
                deadline.is_some_and(|deadline| Instant::now() + self.backoff >= deadline);
            if retries_left == 0 || past_deadline {
                return Err(err);
            }
            retries_left -= 1;
            tracing::info!(
                hook = %event.hook,
                upload = %event.upload().id,
                error = %err.detail(),
                retries_left,
                "hook attempt failed; retrying after backoff"
            );
            tokio::time::sleep(self.backoff).await;
        }
    }
}

/// Reads at most `limit` bytes of the answer; one more is an error (tusd's size limit).
async fn read_limited(
    mut response: reqwest::Response,
    limit: usize,
    hook: HookType,
) -> Result<Vec<u8>, Failure> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|err| Failure::Retry(HookError::unavailable(hook, describe_reqwest(&err))))?
    {
        if body.len() + chunk.len() > limit {
            return Err(Failure::Final(HookError::invalid(
                hook,
                format!("answer is larger than {limit} bytes"),
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// `application/json`, with or without parameters.
fn is_json(content_type: Option<&str>) -> bool {
    content_type
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// A reqwest error by kind and causes, without the URL its `Display` names (it may carry a
/// token).
fn describe_reqwest(err: &reqwest::Error) -> String {
    let mut text = if err.is_connect() {
        "connect failed"
    } else if err.is_timeout() {
        "timed out"
    } else if err.is_body() || err.is_decode() {
        "reading the answer failed"
    } else {
        "request failed"
    }
    .to_owned();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types() {
        assert!(is_json(Some("application/json")));
        assert!(is_json(Some("Application/JSON; charset=utf-8")));
        assert!(!is_json(Some("text/html")));
        assert!(!is_json(Some("application/json-patch+json")));
        assert!(!is_json(None));
    }

    #[test]
    fn bad_settings_are_refused() {
        let config = HooksConfig::default();
        for url in ["ftp://x/", "not a url", "http://"] {
            let err = HttpTransport::new(&config, url).expect_err(url);
            assert!(err.to_string().contains("--hooks-http must be"), "{err}");
        }
        let config = HooksConfig {
            http_forward_headers: vec!["Content-Type".to_owned()],
            ..HooksConfig::default()
        };
        let err = HttpTransport::new(&config, "http://127.0.0.1:1/").expect_err("forward");
        assert_eq!(
            err.to_string(),
            "invalid hook configuration: header Content-Type cannot be forwarded to the hook endpoint"
        );
    }
}
