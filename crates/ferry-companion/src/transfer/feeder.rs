//! An open source consumed from an absolute byte position: the bytes are handed out in bounded
//! slices ([`Feeder::next`]) or as destination request bodies ([`Feeder::body`]), checked
//! against the announced length and the size cap so a source that lies about its length fails
//! instead of corrupting the upload. When the source could not start at the position asked for,
//! the first bytes are skipped.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use tokio::sync::Mutex;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::source::{ByteStream, Opened};
use super::{Progress, TransferError};

/// A request body as a stream of chunks; an error ends it (the request is then incomplete).
pub type BodyStream =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send>>;

/// A shared handle on an open source (cheap to clone: request bodies hold one each).
#[derive(Clone, Debug)]
pub struct Feeder {
    reader: Arc<Mutex<Reader>>,
    total: Option<u64>,
}

struct Reader {
    stream: ByteStream,
    pending: Option<Bytes>,
    /// Bytes still to discard (the source could not start at the position asked for).
    skip: u64,
    /// Absolute position of the next byte handed out.
    position: u64,
    total: Option<u64>,
    /// The source has ended (and its length checked).
    eof: bool,
    max: Option<u64>,
    progress: Arc<Progress>,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("position", &self.position)
            .field("total", &self.total)
            .finish_non_exhaustive()
    }
}

/// How a request body built by [`Feeder::body`] ended. Dropping it ends the body: the HTTP
/// client drives a request body on its own connection task, so dropping the request future
/// alone would leave a paused or cancelled upload open at the destination.
#[derive(Debug)]
pub struct Outcome {
    failure: Arc<std::sync::Mutex<Option<TransferError>>>,
    _stop: DropGuard,
}

impl Outcome {
    /// The result of the request that carried the body: the source's failure when the body
    /// broke off because of it (whatever the request then reported), else `sent`, with a
    /// transport error reported as retryable under `what`.
    pub fn settle<T, E: std::fmt::Display>(
        self,
        sent: Result<T, E>,
        what: &str,
    ) -> Result<T, TransferError> {
        let failure = self.failure.lock().ok().and_then(|mut f| f.take());
        match (failure, sent) {
            (Some(failure), _) => Err(failure),
            (None, Ok(value)) => Ok(value),
            (None, Err(e)) => Err(TransferError::Retryable(format!("{what}: {e}"))),
        }
    }
}

impl Feeder {
    /// A feeder over `opened`, whose first byte is at `position`.
    pub fn new(
        opened: Opened,
        position: u64,
        total: Option<u64>,
        max: Option<u64>,
        progress: Arc<Progress>,
    ) -> Self {
        let reader = Reader {
            stream: opened.stream,
            pending: None,
            skip: opened.skip,
            position,
            total,
            eof: false,
            max,
            progress,
        };
        Self {
            reader: Arc::new(Mutex::new(reader)),
            total,
        }
    }

    /// The source's full length, when it said.
    pub fn total(&self) -> Option<u64> {
        self.total
    }

    /// The position of the next byte handed out.
    pub async fn position(&self) -> u64 {
        self.reader.lock().await.position
    }

    /// Waits for the next bytes or the end: (the position of the next byte, whether the source
    /// has ended).
    pub async fn fill(&self) -> Result<(u64, bool), TransferError> {
        let mut reader = self.reader.lock().await;
        reader.fill().await?;
        Ok((reader.position, reader.eof))
    }

    /// The next slice of at most `limit` bytes, `None` at the end.
    pub async fn next(&self, limit: u64) -> Result<Option<Bytes>, TransferError> {
        self.reader.lock().await.next(limit).await
    }

    /// A request body streaming at most `limit` bytes, and the [`Outcome`] that tells how it
    /// ended. A source failure errors the body (which aborts the request) and comes back from
    /// [`Outcome::settle`].
    pub fn body(&self, limit: u64) -> (reqwest::Body, Outcome) {
        let (stream, outcome) = self.stream(limit);
        (reqwest::Body::wrap_stream(stream), outcome)
    }

    /// [`Feeder::body`] as a stream of chunks, for a body the HTTP client does not carry (a
    /// request handed to this server's own endpoint in process).
    pub fn stream(&self, limit: u64) -> (BodyStream, Outcome) {
        let failure = Arc::new(std::sync::Mutex::new(None));
        let stop = CancellationToken::new();
        let state = (self.clone(), limit, failure.clone(), stop.clone());
        let stream =
            futures_util::stream::unfold(state, |(feeder, left, failure, stop)| async move {
                let next = tokio::select! {
                    next = feeder.next(left) => next,
                    () = stop.cancelled() => Err(TransferError::Cancelled),
                };
                match next {
                    Ok(Some(chunk)) => {
                        let left = left - chunk.len() as u64;
                        Some((Ok(chunk), (feeder, left, failure, stop)))
                    }
                    Ok(None) => None,
                    Err(error) => {
                        let message = error.to_string();
                        if let Ok(mut slot) = failure.lock() {
                            *slot = Some(error);
                        }
                        Some((
                            Err(std::io::Error::other(message)),
                            (feeder, 0, failure, stop),
                        ))
                    }
                }
            });
        let outcome = Outcome {
            failure,
            _stop: stop.drop_guard(),
        };
        (Box::pin(stream), outcome)
    }
}

impl Reader {
    async fn fill(&mut self) -> Result<(), TransferError> {
        while self.pending.is_none() && !self.eof {
            match self.stream.next().await {
                Some(Ok(mut chunk)) => {
                    if self.skip > 0 {
                        let n = self.skip.min(chunk.len() as u64);
                        self.skip -= n;
                        chunk = chunk.slice(n as usize..);
                    }
                    if !chunk.is_empty() {
                        self.pending = Some(chunk);
                    }
                }
                Some(Err(e)) => return Err(e),
                None if self.skip > 0 => {
                    return Err(TransferError::Retryable("source: ended early".into()));
                }
                None => {
                    if self.total.is_some_and(|total| self.position != total) {
                        return Err(TransferError::Retryable(
                            "source: shorter than announced".into(),
                        ));
                    }
                    self.eof = true;
                }
            }
        }
        Ok(())
    }

    async fn next(&mut self, limit: u64) -> Result<Option<Bytes>, TransferError> {
        if limit == 0 {
            return Ok(None);
        }
        self.fill().await?;
        let Some(mut chunk) = self.pending.take() else {
            return Ok(None);
        };
        if chunk.len() as u64 > limit {
            self.pending = Some(chunk.split_off(limit as usize));
        }
        let end = self.position + chunk.len() as u64;
        if self.total.is_some_and(|t| end > t) {
            return Err(TransferError::Fatal(
                "Upload error: the source sent more bytes than it announced".into(),
            ));
        }
        if self.max.is_some_and(|m| end > m) {
            return Err(TransferError::Fatal("File size exceeds limit".into()));
        }
        self.position = end;
        self.progress.set(end);
        Ok(Some(chunk))
    }
}
