//! A request body that cannot hold a connection (or an upload's lock) forever: it ends with an
//! error when it delivers less than [`MIN_PROGRESS`] bytes in one idle window, so a client
//! sending a byte every few seconds is cut off as surely as a silent one, and when its stop
//! signal fires (a newer request for the same upload arrived).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, HttpBody};
use axum::http::HeaderMap;
use bytes::Bytes;
use futures_util::Stream;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::Stop;

/// Bytes a body must deliver per idle window to count as alive.
pub const MIN_PROGRESS: usize = 1024;

/// Where a body's trailer fields land when they arrive.
pub type Trailers = Arc<Mutex<Option<HeaderMap>>>;

/// Why a body stopped, readable after the body itself was handed on (to a multipart parser,
/// say, which reports a failed body without its cause).
#[derive(Clone, Debug, Default)]
pub struct StopCell(Arc<Mutex<Option<Stop>>>);

impl StopCell {
    /// The reason, once the body stopped early.
    pub fn get(&self) -> Option<Stop> {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set(&self, stop: Stop) -> io::Error {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(stop);
        stop.error()
    }
}

/// A body stream guarded by an idle timer and, optionally, a stop signal.
#[derive(Debug)]
pub struct GuardedBody {
    inner: Body,
    /// Trailer fields, once the body's last frame brought them (tus checksum-trailer).
    trailers: Trailers,
    stopped: StopCell,
    cancelled: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    idle: Pin<Box<Sleep>>,
    idle_for: Duration,
    /// Bytes received since the idle timer was last reset.
    progress: usize,
}

impl GuardedBody {
    /// `body`, cut off when it delivers less than [`MIN_PROGRESS`] bytes in `idle_for`.
    pub fn new(body: Body, idle_for: Duration) -> Self {
        Self {
            inner: body,
            trailers: Trailers::default(),
            stopped: StopCell::default(),
            cancelled: None,
            idle: Box::pin(tokio::time::sleep(idle_for)),
            idle_for,
            progress: 0,
        }
    }

    /// The same body, also ended when `signal` is cancelled.
    pub fn stopped_by(mut self, signal: CancellationToken) -> Self {
        self.cancelled = Some(Box::pin(signal.cancelled_owned()));
        self
    }

    /// A handle to the trailers this body will have received once it ends.
    pub fn trailers(&self) -> Trailers {
        self.trailers.clone()
    }

    /// A handle to why this body stopped early, if it did.
    pub fn stop_cell(&self) -> StopCell {
        self.stopped.clone()
    }
}

impl Stream for GuardedBody {
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(cancelled) = self.cancelled.as_mut()
            && cancelled.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Some(Err(self.stopped.set(Stop::Superseded))));
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
                    Poll::Ready(Some(Err(self.stopped.set(Stop::ClientGone))))
                }
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Pending => match self.idle.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(self.stopped.set(Stop::Idle)))),
                    Poll::Pending => Poll::Pending,
                },
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    /// A body fed by hand, one chunk at a time.
    fn fed() -> (tokio::sync::mpsc::Sender<Bytes>, Body) {
        let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(8);
        let stream = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|b| (Ok::<_, io::Error>(b), rx))
        });
        (tx, Body::from_stream(stream))
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickle_is_cut_at_the_end_of_its_window_and_a_signal_stops_the_body() {
        let (tx, body) = fed();
        let mut body = GuardedBody::new(body, Duration::from_secs(10));
        let cell = body.stop_cell();
        let started = Instant::now();
        tx.send(Bytes::from_static(b"x")).await.expect("send");
        assert_eq!(body.next().await.expect("chunk").expect("bytes"), "x");
        let end = body.next().await.expect("an error").expect_err("idle");
        assert_eq!(Stop::of(&end), Some(Stop::Idle));
        assert_eq!(cell.get(), Some(Stop::Idle));
        assert_eq!(started.elapsed(), Duration::from_secs(10));

        let (_tx, body) = fed();
        let signal = CancellationToken::new();
        let mut body = GuardedBody::new(body, Duration::from_secs(10)).stopped_by(signal.clone());
        signal.cancel();
        let end = body.next().await.expect("an error").expect_err("stopped");
        assert_eq!(Stop::of(&end), Some(Stop::Superseded));
    }
}
