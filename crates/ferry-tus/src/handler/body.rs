//! The request body as the store sees it: the body guarded by the shared rules of
//! [`ferry_body`] (cut off when idle or superseded, metered against a quota), then bounded here
//! to the upload's length, so a store never stores past it.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use ferry_body::Stop;
use futures_util::{Stream, StreamExt};

use crate::protocol::TusError;
use crate::store::StoreError;

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
    let stop = match &e {
        StoreError::Io(io) => Stop::of(io),
        _ => None,
    };
    match stop {
        Some(Stop::Superseded) => TusError::Superseded,
        Some(Stop::Idle) => TusError::IdleTimeout,
        Some(Stop::ClientGone) => TusError::BodyInterrupted,
        // The budget's own refusal is the answer; the write path asks it first.
        Some(Stop::OverBudget) | None => e.into(),
    }
}
