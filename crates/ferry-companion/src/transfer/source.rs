//! Reading the source: a GET from a given byte (a `Range` request when resuming; when the
//! source ignores it, the first bytes are skipped), and a [`Feeder`] that hands the bytes out in
//! bounded slices to destination request bodies, checking them against the announced length and
//! the size cap so a source that lies about its length fails instead of corrupting the upload.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::{StreamExt, TryStreamExt};
use reqwest::StatusCode;
use reqwest::header::{CONTENT_LENGTH, CONTENT_RANGE, RANGE};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::{Ctx, Fail, Progress};

/// A source response being consumed from an absolute byte position.
pub struct Feeder {
    stream: BoxStream<'static, Result<Bytes, std::io::Error>>,
    pending: Option<Bytes>,
    /// Bytes still to discard (the source ignored the Range request).
    skip: u64,
    /// Absolute position of the next byte handed out.
    pub position: u64,
    /// Full length of the source, when it said.
    pub total: Option<u64>,
    /// The source has ended (and its length checked).
    pub eof: bool,
    max: Option<u64>,
    progress: Arc<Progress>,
}

impl std::fmt::Debug for Feeder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feeder")
            .field("position", &self.position)
            .field("total", &self.total)
            .finish_non_exhaustive()
    }
}

/// Opens the source of `ctx` at byte `from`.
pub async fn open(ctx: &Ctx, from: u64) -> Result<Feeder, Fail> {
    let mut req = ctx.state.sources().client().get(ctx.req.source.clone());
    if from > 0 {
        req = req.header(RANGE, format!("bytes={from}-"));
    }
    let resp = req.send().await.map_err(|e| {
        if crate::egress::is_refusal(&e) {
            Fail::Fatal("URL not allowed".into())
        } else {
            Fail::Retryable(format!("source: {e}"))
        }
    })?;
    let status = resp.status();
    let header_u64 = |name| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let (total, skip) = match status {
        StatusCode::PARTIAL_CONTENT if from > 0 => {
            let range = resp
                .headers()
                .get(CONTENT_RANGE)
                .and_then(|v| v.to_str().ok());
            let (start, total) = parse_content_range(range.unwrap_or(""))
                .ok_or_else(|| Fail::Retryable("source: bad Content-Range".into()))?;
            if start != from {
                return Err(Fail::Retryable("source: wrong range".into()));
            }
            (total, 0)
        }
        s if s.is_success() => (header_u64(CONTENT_LENGTH), from),
        s if s.is_server_error() || s == StatusCode::TOO_MANY_REQUESTS => {
            return Err(Fail::Retryable(format!("source answered {s}")));
        }
        s => {
            return Err(Fail::Fatal(format!(
                "Failed to fetch the file (the source answered {})",
                s.as_u16()
            )));
        }
    };
    if let (Some(total), Some(max)) = (total, ctx.state.config().max_file_size) {
        if total > max {
            return Err(Fail::Fatal("File size exceeds limit".into()));
        }
    }
    let stream = resp.bytes_stream().map_err(std::io::Error::other).boxed();
    ctx.progress.set(from);
    Ok(Feeder {
        stream,
        pending: None,
        skip,
        position: from,
        total,
        eof: false,
        max: ctx.state.config().max_file_size,
        progress: ctx.progress.clone(),
    })
}

/// `bytes START-END/TOTAL` -> (START, TOTAL or None for `*`).
fn parse_content_range(value: &str) -> Option<(u64, Option<u64>)> {
    let rest = value.trim().strip_prefix("bytes ")?;
    let (range, total) = rest.split_once('/')?;
    let (start, _) = range.split_once('-')?;
    let total = if total.trim() == "*" {
        None
    } else {
        Some(total.trim().parse().ok()?)
    };
    Some((start.trim().parse().ok()?, total))
}

impl Feeder {
    /// Makes sure a chunk is pending or the end is known.
    pub async fn fill(&mut self) -> Result<(), Fail> {
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
                Some(Err(e)) => return Err(Fail::Retryable(format!("source: {e}"))),
                None if self.skip > 0 => return Err(Fail::Retryable("source: ended early".into())),
                None => {
                    if let Some(total) = self.total {
                        if self.position != total {
                            return Err(Fail::Retryable("source: shorter than announced".into()));
                        }
                    }
                    self.eof = true;
                }
            }
        }
        Ok(())
    }

    /// The next slice of at most `limit` bytes, `None` at the end.
    pub async fn next(&mut self, limit: u64) -> Result<Option<Bytes>, Fail> {
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
            return Err(Fail::Fatal(
                "Upload error: the source sent more bytes than it announced".into(),
            ));
        }
        if self.max.is_some_and(|m| end > m) {
            return Err(Fail::Fatal("File size exceeds limit".into()));
        }
        self.position = end;
        self.progress.set(end);
        Ok(Some(chunk))
    }
}

/// A request body streaming at most `limit` bytes from `feeder`. A source failure is recorded in
/// `failure` (the body just errors, which aborts the request). The body also errors when `stop`
/// is cancelled: the HTTP client drives a request body on its own connection task, so dropping
/// the request future alone would leave a paused or cancelled upload open at the destination.
pub fn body(
    feeder: Arc<Mutex<Feeder>>,
    limit: u64,
    failure: Arc<std::sync::Mutex<Option<Fail>>>,
    stop: CancellationToken,
) -> reqwest::Body {
    let state = (feeder, limit, failure, stop);
    let stream = futures_util::stream::unfold(state, |(feeder, left, failure, stop)| async move {
        let next = tokio::select! {
            next = async { feeder.lock().await.next(left).await } => next,
            () = stop.cancelled() => Err(Fail::Cancelled),
        };
        match next {
            Ok(Some(chunk)) => {
                let left = left - chunk.len() as u64;
                let state = (feeder, left, failure, stop);
                Some((Ok::<Bytes, std::io::Error>(chunk), state))
            }
            Ok(None) => None,
            Err(fail) => {
                let message = fail.to_string();
                if let Ok(mut slot) = failure.lock() {
                    *slot = Some(fail);
                }
                Some((
                    Err(std::io::Error::other(message)),
                    (feeder, 0, failure, stop),
                ))
            }
        }
    });
    reqwest::Body::wrap_stream(stream)
}

#[cfg(test)]
mod tests {
    use super::parse_content_range;

    #[test]
    fn content_range() {
        assert_eq!(parse_content_range("bytes 5-9/10"), Some((5, Some(10))));
        assert_eq!(parse_content_range("bytes 5-9/*"), Some((5, None)));
        assert_eq!(parse_content_range("bytes x-9/10"), None);
        assert_eq!(parse_content_range("items 5-9/10"), None);
    }
}
