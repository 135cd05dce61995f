//! The providers' shared API client: sends a request to a provider's configured endpoint,
//! waits out rate-limited answers as [`super::ratelimit`] says (`Retry-After` and each API's
//! own signals, each wait capped, the total bounded; [`ProviderError::RateLimited`] past that),
//! and turns any other failure into a [`ProviderError`] through the provider's own error
//! reader. Also the tails every provider
//! shares: a response body as a transfer byte stream, a thumbnail streamed back with its
//! content type.

use std::sync::Arc;

use futures_util::{StreamExt, TryStreamExt};
use reqwest::{RequestBuilder, Response, StatusCode};
use serde_json::Value;

use super::ProviderError;
use super::ratelimit::{self, RateLimits, Waits};
use crate::transfer::TransferError;
use crate::transfer::source::ByteStream;

/// Reads a provider's error answer (status, body) into a [`ProviderError`].
pub type ErrorReader = fn(u16, &[u8]) -> ProviderError;

/// Largest error body read (they are small JSON documents).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// The client for providers' configured endpoints (no redirects followed).
#[derive(Clone, Debug)]
pub struct Api {
    client: reqwest::Client,
    limits: Arc<RateLimits>,
}

impl Api {
    pub fn new(client: reqwest::Client, limits: RateLimits) -> Self {
        Self {
            client,
            limits: Arc::new(limits),
        }
    }

    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// How rate limits are waited out (WebDAV's own client, on the egress client, follows them).
    pub fn limits(&self) -> &RateLimits {
        &self.limits
    }

    /// A GET of `url` with the access token as a bearer credential.
    pub fn get(&self, url: String, access_token: &str) -> reqwest::RequestBuilder {
        self.client.get(url).bearer_auth(access_token)
    }

    /// Sends `req` (retrying rate limits) and returns a successful response.
    pub async fn send(
        &self,
        req: RequestBuilder,
        read: ErrorReader,
    ) -> Result<Response, ProviderError> {
        match self.exchange(req, read, false).await? {
            Answer::Body(resp) => Ok(resp),
            Answer::Moved(_) => Err(ProviderError::Unreachable("unexpected redirect".into())),
        }
    }

    /// Sends `req` (retrying rate limits) to a call that may redirect (Box's file content and
    /// thumbnails): a 3xx, or a 202 with `Location`, is [`Answer::Moved`] to the (absolute)
    /// location; any other success is the response.
    pub async fn answer(
        &self,
        req: RequestBuilder,
        read: ErrorReader,
    ) -> Result<Answer, ProviderError> {
        self.exchange(req, read, true).await
    }

    async fn exchange(
        &self,
        req: RequestBuilder,
        read: ErrorReader,
        redirects: bool,
    ) -> Result<Answer, ProviderError> {
        let mut waits = Waits::new(&self.limits);
        loop {
            let attempt = req
                .try_clone()
                .ok_or_else(|| ProviderError::Unreachable("request cannot be retried".into()))?;
            let resp = attempt
                .send()
                .await
                .map_err(|e| ProviderError::Unreachable(e.to_string()))?;
            let status = resp.status();
            if redirects && (status.is_redirection() || status == StatusCode::ACCEPTED) {
                if let Some(to) = location(&resp) {
                    return Ok(Answer::Moved(to));
                }
            }
            if status.is_success() {
                return Ok(Answer::Body(resp));
            }
            let headers = resp.headers().clone();
            let body = read_capped(resp).await;
            let Some(asked) = ratelimit::signal(status, &headers, &body) else {
                return Err(read(status.as_u16(), &body));
            };
            match waits.next(asked) {
                Ok(wait) => {
                    tracing::info!(
                        status = status.as_u16(),
                        ?wait,
                        "provider rate limit; waiting"
                    );
                    ratelimit::waiting(wait);
                    tokio::time::sleep(wait).await;
                }
                Err(retry_after) => {
                    tracing::info!(
                        status = status.as_u16(),
                        retry_after,
                        "provider rate limit outlasts the wait allowed"
                    );
                    return Err(ProviderError::RateLimited { retry_after });
                }
            }
        }
    }

    /// Sends `req` and parses the JSON answer.
    pub async fn json(
        &self,
        req: RequestBuilder,
        read: ErrorReader,
    ) -> Result<Value, ProviderError> {
        let resp = self.send(req, read).await?;
        resp.json::<Value>()
            .await
            .map_err(|e| ProviderError::Unreachable(format!("unreadable answer: {e}")))
    }
}

/// What a call that may redirect answered.
#[derive(Debug)]
pub enum Answer {
    /// The provider's own answer.
    Body(Response),
    /// Where it sent the client instead (absolute).
    Moved(String),
}

/// `Location` of `resp`, resolved against its URL.
fn location(resp: &Response) -> Option<String> {
    let raw = resp
        .headers()
        .get(reqwest::header::LOCATION)?
        .to_str()
        .ok()?;
    resp.url().join(raw).ok().map(String::from)
}

async fn read_capped(mut resp: Response) -> Vec<u8> {
    let mut out = Vec::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        out.extend_from_slice(&chunk);
        if out.len() > MAX_ERROR_BODY {
            break;
        }
    }
    out
}

/// `Content-Range: bytes START-END/TOTAL` -> (START, TOTAL or None for `*`).
pub fn content_range(resp: &Response) -> Option<(u64, Option<u64>)> {
    let value = resp
        .headers()
        .get(reqwest::header::CONTENT_RANGE)?
        .to_str()
        .ok()?;
    let rest = value.trim().strip_prefix("bytes ")?;
    let (range, total) = rest.split_once('/')?;
    let (start, _) = range.split_once('-')?;
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse().ok()?),
    };
    Some((start.trim().parse().ok()?, total))
}

/// For a download asked from byte `from`: (full length if known, bytes to skip).
pub fn ranged(resp: &Response, from: u64) -> Result<(Option<u64>, u64), ProviderError> {
    if resp.status() == StatusCode::PARTIAL_CONTENT && from > 0 {
        let (start, total) = content_range(resp)
            .ok_or_else(|| ProviderError::Unreachable("bad Content-Range".into()))?;
        if start != from {
            return Err(ProviderError::Unreachable("wrong range".into()));
        }
        Ok((total, 0))
    } else {
        Ok((resp.content_length(), from))
    }
}

/// A download's body as a transfer stream; a break is retryable (the transfer reopens it).
pub fn byte_stream(resp: Response) -> ByteStream {
    resp.bytes_stream()
        .map_err(|e| TransferError::Retryable(format!("provider: {e}")))
        .boxed()
}

/// A thumbnail answer streamed back: its content type and bytes, or the status it failed with.
pub fn stream_image(resp: Response) -> Result<(String, ByteStream), ProviderError> {
    if !resp.status().is_success() {
        return Err(ProviderError::Status {
            status: resp.status().as_u16(),
            message: "Could not load the thumbnail".into(),
        });
    }
    let kind = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    Ok((kind, byte_stream(resp)))
}

/// Meta's Graph API errors (Facebook and Instagram): code 190 or a 401 is an invalid or expired
/// token; anything else carries Graph's message.
pub fn meta_graph_error(status: u16, body: &[u8]) -> ProviderError {
    let code = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.pointer("/error/code").and_then(Value::as_i64));
    if code == Some(190) || status == 401 {
        return ProviderError::Auth;
    }
    ProviderError::Status {
        status,
        message: error_message(body, status),
    }
}

/// `message` of a JSON error body shaped `{"error": {"message": ...}}`, or a generic one.
pub fn error_message(body: &[u8], status: u16) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.pointer("/error_message"))
                .or_else(|| v.pointer("/error_description"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .map(|m| format!("HTTP {status}: {m}"))
        .unwrap_or_else(|| format!("HTTP {status}: the provider refused the request"))
}

/// A standard OAuth token endpoint answer.
#[derive(Debug)]
pub struct TokenAnswer {
    pub access_token: String,
    pub refresh_token: Option<String>,
}

/// Parses `{access_token, refresh_token?}` (also under `data[0]`, Instagram's shape).
pub fn token_answer(v: &Value) -> Option<TokenAnswer> {
    let v = v.pointer("/data/0").unwrap_or(v);
    let access_token = v.get("access_token")?.as_str()?.to_owned();
    let refresh_token = v
        .get("refresh_token")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Some(TokenAnswer {
        access_token,
        refresh_token,
    })
}

/// The top-level fields of a JSON error body (none when the body is not JSON), for the
/// providers' error readers.
#[derive(Debug)]
pub struct ErrorFields(Option<Value>);

impl ErrorFields {
    pub fn parse(body: &[u8]) -> Self {
        Self(serde_json::from_slice(body).ok())
    }

    /// The field `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.as_ref()?.get(key)
    }

    /// The string field `key`.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.get(key)?.as_str()
    }

    /// A status error with the first string field of `keys` the body has
    /// (`HTTP {status}: {message}`), else `HTTP {status}: {who} refused the request`.
    pub fn status(&self, status: u16, keys: &[&str], who: &str) -> ProviderError {
        let message = keys
            .iter()
            .find_map(|k| self.str(k))
            .map(|m| format!("HTTP {status}: {m}"))
            .unwrap_or_else(|| format!("HTTP {status}: {who} refused the request"));
        ProviderError::Status { status, message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn token_answers_in_both_shapes() {
        let flat = token_answer(&json!({"access_token": "a", "refresh_token": "r"})).expect("flat");
        assert_eq!(
            (flat.access_token.as_str(), flat.refresh_token.as_deref()),
            ("a", Some("r"))
        );
        let wrapped =
            token_answer(&json!({"data": [{"access_token": "b", "user_id": 1}]})).expect("data");
        assert_eq!(
            (wrapped.access_token.as_str(), wrapped.refresh_token),
            ("b", None)
        );
        assert!(token_answer(&json!({"error": "invalid_grant"})).is_none());
    }

    #[test]
    fn error_messages_never_echo_raw_bodies() {
        assert_eq!(
            error_message(br#"{"error":{"message":"File not found: x."}}"#, 404),
            "HTTP 404: File not found: x."
        );
        assert_eq!(
            error_message(b"<html>secret stack</html>", 500),
            "HTTP 500: the provider refused the request"
        );
    }
}
