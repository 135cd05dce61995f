//! Bounds on every S3 call, so a store that stops answering fails the call instead of holding
//! it (and the upload behind it) for as long as the connection lives:
//!
//! - connecting is bounded by [`S3Timeouts::connect`] (set on the HTTP client);
//! - sending is bounded by [`S3Timeouts::idle`] *without progress*: the request body is handed
//!   to the connection in small chunks, each one taken stamps the call as alive, and the call
//!   fails once neither a chunk was taken nor the answer's head arrived for that long (a part of
//!   any size goes through as long as it moves; a store that stopped reading, or that never
//!   answers once the body is in, does not hold it);
//! - reading an answer's body is bounded by the same idle time per chunk.
//!
//! reqwest's own `read_timeout` is not used for the sending side: it runs from the start of the
//! request until the answer's head, so it would bound the time to send a whole part.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{self, BoxStream, StreamExt};
use tokio::time::Instant;

use crate::S3Error;

/// How long S3 calls may wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct S3Timeouts {
    /// Establishing the connection (TCP and TLS).
    pub connect: Duration,
    /// The longest time a call may go without progress: no request bytes taken, no answer
    /// bytes received.
    pub idle: Duration,
}

impl Default for S3Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            idle: Duration::from_secs(30),
        }
    }
}

/// Request body bytes are handed over in chunks of this size, so progress is seen while a
/// large part is sent.
const CHUNK: usize = 64 * 1024;

/// When a call last made progress.
#[derive(Clone, Debug)]
pub(crate) struct Activity(Arc<Mutex<Instant>>);

impl Activity {
    pub(crate) fn new() -> Self {
        Self(Arc::new(Mutex::new(Instant::now())))
    }

    fn touch(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    fn last(&self) -> Instant {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Resolves once the call has made no progress for `idle`.
    pub(crate) async fn stalled(&self, idle: Duration) {
        loop {
            let deadline = self.last() + idle;
            if Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}

/// A request body: bytes in memory, or a body streamed from elsewhere (a part read from
/// chunks, never held whole).
#[derive(Debug)]
pub struct Payload(Inner);

#[derive(Debug)]
enum Inner {
    Bytes(Bytes),
    Streamed(reqwest::Body),
}

impl From<Bytes> for Payload {
    fn from(bytes: Bytes) -> Self {
        Self(Inner::Bytes(bytes))
    }
}

impl From<Vec<u8>> for Payload {
    fn from(bytes: Vec<u8>) -> Self {
        Self(Inner::Bytes(bytes.into()))
    }
}

impl From<String> for Payload {
    fn from(text: String) -> Self {
        Self(Inner::Bytes(text.into()))
    }
}

impl From<reqwest::Body> for Payload {
    fn from(body: reqwest::Body) -> Self {
        Self(Inner::Streamed(body))
    }
}

impl Payload {
    /// Its length when it is in memory.
    pub(crate) fn len(&self) -> Option<u64> {
        match &self.0 {
            Inner::Bytes(bytes) => Some(bytes.len() as u64),
            Inner::Streamed(body) => body.as_bytes().map(|b| b.len() as u64),
        }
    }

    /// A copy to send again, when the bytes are in memory (a streamed body goes once).
    pub(crate) fn replay(&self) -> Option<Self> {
        match &self.0 {
            Inner::Bytes(bytes) => Some(Self(Inner::Bytes(bytes.clone()))),
            Inner::Streamed(_) => None,
        }
    }

    /// The body for reqwest, every chunk taken stamping `activity`. The caller sends
    /// `Content-Length` (a streamed body has none of its own).
    pub(crate) fn watched(self, activity: Activity) -> reqwest::Body {
        match self.0 {
            Inner::Bytes(bytes) => watched_bytes(bytes, activity),
            Inner::Streamed(body) => {
                reqwest::Body::wrap(http_body_util::BodyExt::map_frame(body, move |frame| {
                    activity.touch();
                    frame
                }))
            }
        }
    }
}

/// `bytes` as a request body taken chunk by chunk, each chunk stamping `activity`.
fn watched_bytes(bytes: Bytes, activity: Activity) -> reqwest::Body {
    if bytes.is_empty() {
        return reqwest::Body::from(bytes);
    }
    let chunks = (0..bytes.len())
        .step_by(CHUNK)
        .map(move |at| bytes.slice(at..(at + CHUNK).min(bytes.len())));
    let stream = stream::iter(chunks).map(move |chunk| {
        activity.touch();
        Ok::<_, std::convert::Infallible>(chunk)
    });
    reqwest::Body::wrap_stream(stream)
}

/// An answer's body as a stream whose every chunk must come within `idle`.
pub(crate) fn watched_answer(
    what: &'static str,
    response: reqwest::Response,
    idle: Duration,
) -> BoxStream<'static, Result<Bytes, S3Error>> {
    stream::unfold(Some(response), move |response| async move {
        let mut response = response?;
        match tokio::time::timeout(idle, response.chunk()).await {
            Ok(Ok(Some(chunk))) => Some((Ok(chunk), Some(response))),
            Ok(Ok(None)) => None,
            Ok(Err(e)) => Some((Err(S3Error::upstream(what, e)), None)),
            Err(_) => Some((Err(S3Error::timed_out(what, idle)), None)),
        }
    })
    .boxed()
}

/// The whole of a (small) answer's body, each chunk within `idle`.
pub(crate) async fn read_answer(
    what: &'static str,
    response: reqwest::Response,
    idle: Duration,
) -> Result<Bytes, S3Error> {
    let mut body = watched_answer(what, response, idle);
    let mut all = Vec::new();
    while let Some(chunk) = body.next().await {
        all.extend_from_slice(&chunk?);
    }
    Ok(Bytes::from(all))
}
