//! The request body as the store sees it: a byte stream that ends with an error when a newer
//! request for the same upload arrives or when the body delivered less than [`MIN_PROGRESS`]
//! bytes in one idle-timeout window, so a slow or abandoned client (even one sending a byte
//! every few seconds) can neither hold the upload's lock nor a connection forever.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use std::sync::{Arc, Mutex};

use axum::body::{Body, HttpBody};
use axum::http::HeaderMap;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use tokio::time::{Instant, Sleep};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::protocol::TusError;
use crate::store::StoreError;

/// Error kinds that tell the handler why the body stopped.
// Not `Interrupted`: copy loops retry that kind forever.
const SUPERSEDED: io::ErrorKind = io::ErrorKind::ResourceBusy;
const IDLE: io::ErrorKind = io::ErrorKind::TimedOut;
const CLIENT_GONE: io::ErrorKind = io::ErrorKind::ConnectionAborted;

/// Where a body's trailer fields land when they arrive.
pub(super) type Trailers = Arc<Mutex<Option<HeaderMap>>>;

/// Bytes a body must deliver per idle window to count as alive.
pub(super) const MIN_PROGRESS: usize = 1024;

/// A body stream guarded by a cancellation token and an idle timer.
pub(super) struct GuardedBody {
    inner: Body,
    /// Trailer fields, once the body's last frame brought them (checksum-trailer).
    trailers: Trailers,
    cancelled: Pin<Box<WaitForCancellationFutureOwned>>,
    idle: Pin<Box<Sleep>>,
    idle_for: Duration,
    /// Bytes received since the idle timer was last reset.
    progress: usize,
}

impl GuardedBody {
    pub(super) fn new(body: Body, cancelled: CancellationToken, idle_for: Duration) -> Self {
        Self {
            inner: body,
            trailers: Trailers::default(),
            cancelled: Box::pin(cancelled.cancelled_owned()),
            idle: Box::pin(tokio::time::sleep(idle_for)),
            idle_for,
            progress: 0,
        }
    }

    /// A handle to the trailers this body will have received once it ends.
    pub(super) fn trailers(&self) -> Trailers {
        self.trailers.clone()
    }
}

impl Stream for GuardedBody {
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(io::Error::new(SUPERSEDED, "superseded"))));
        }
        loop {
            return match Pin::new(&mut self.inner).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(bytes) => {
                        self.progress += bytes.len();
                        if self.progress >= MIN_PROGRESS {
                            self.progress = 0;
                            let deadline = Instant::now() + self.idle_for;
                            self.idle.as_mut().reset(deadline);
                        }
                        Poll::Ready(Some(Ok(bytes)))
                    }
                    Err(frame) => {
                        if let Ok(trailers) = frame.into_trailers() {
                            *self.trailers.lock().unwrap_or_else(|p| p.into_inner()) =
                                Some(trailers);
                        }
                        continue;
                    }
                },
                Poll::Ready(Some(Err(e))) => {
                    tracing::debug!(error = %e, "request body failed");
                    Poll::Ready(Some(Err(io::Error::new(CLIENT_GONE, "body failed"))))
                }
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Pending => match self.idle.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(io::Error::new(IDLE, "body idle")))),
                    Poll::Pending => Poll::Pending,
                },
            };
        }
    }
}

/// Passes on at most `limit` bytes of a body (cutting the chunk that crosses it), then ends,
/// so a store never stores past an upload's length.
pub(super) struct Bounded<S> {
    inner: S,
    remaining: u64,
    /// A chunk was cut: the body went on past the limit.
    overran: bool,
}

impl<S: Stream<Item = io::Result<Bytes>> + Unpin> Bounded<S> {
    pub(super) fn new(inner: S, limit: u64) -> Self {
        Self {
            inner,
            remaining: limit,
            overran: false,
        }
    }

    /// The stream inside.
    pub(super) fn inner_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Whether the body holds bytes past the limit. Reads the body on to its end otherwise,
    /// which also collects its trailers.
    pub(super) async fn went_past_limit(&mut self) -> bool {
        if self.overran {
            return true;
        }
        loop {
            match self.inner.next().await {
                Some(Ok(chunk)) if chunk.is_empty() => continue,
                Some(Ok(_)) => return true,
                Some(Err(_)) | None => return false,
            }
        }
    }
}

impl<S: Stream<Item = io::Result<Bytes>> + Unpin> Stream for Bounded<S> {
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.remaining == 0 {
            return Poll::Ready(None);
        }
        let polled = Pin::new(&mut self.inner).poll_next(cx);
        match polled {
            Poll::Ready(Some(Ok(mut chunk))) => {
                if chunk.len() as u64 > self.remaining {
                    // In range: `remaining` is below this chunk's length.
                    chunk.truncate(self.remaining as usize);
                    self.overran = true;
                }
                self.remaining -= chunk.len() as u64;
                Poll::Ready(Some(Ok(chunk)))
            }
            other => other,
        }
    }
}

/// Maps a store error from a write to what the client is told: a stopped body is the client's
/// doing (or a newer request's), not a server failure.
pub(super) fn write_error(e: StoreError) -> TusError {
    match e {
        StoreError::Io(e) if e.kind() == SUPERSEDED => TusError::Superseded,
        StoreError::Io(e) if e.kind() == IDLE => TusError::IdleTimeout,
        StoreError::Io(e) if e.kind() == CLIENT_GONE => TusError::BodyInterrupted,
        other => other.into(),
    }
}
