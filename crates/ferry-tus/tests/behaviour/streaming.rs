//! A PATCH whose body the test feeds piece by piece, to hold a request open mid-body.

use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::common::Endpoint;

/// An open PATCH: send pieces with `feed`, drop it to end the body.
pub struct OpenPatch {
    pub feed: mpsc::Sender<Bytes>,
    pub answer: JoinHandle<Result<u16, String>>,
}

impl OpenPatch {
    /// Starts a PATCH (or a creation POST when `path` is `/files/`) with `headers`.
    pub fn start(ep: &Endpoint, method: &str, path: &str, headers: &[(&str, String)]) -> Self {
        let (feed, rx) = mpsc::channel::<Bytes>(4);
        let stream = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|b| (Ok::<_, std::io::Error>(b), rx))
        });
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut req = ep
            .client
            .request(method, ep.url(path))
            .body(reqwest::Body::wrap_stream(stream));
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        let answer = tokio::spawn(async move {
            match req.send().await {
                Ok(res) => Ok(res.status().as_u16()),
                Err(e) => Err(e.to_string()),
            }
        });
        Self { feed, answer }
    }

    /// Hands `bytes` to the body.
    pub async fn send(&self, bytes: &[u8]) {
        self.feed
            .send(Bytes::copy_from_slice(bytes))
            .await
            .expect("body still open");
    }
}

/// The stored length (read from disk, so the writer is not disturbed), polled until it reaches
/// `at_least`: bytes in flight on loopback arrive within milliseconds.
pub async fn offset_reaches(ep: &Endpoint, path: &str, at_least: u64) -> u64 {
    for _ in 0..200 {
        let offset = ep.store_offset(path).await;
        if offset >= at_least {
            return offset;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    ep.store_offset(path).await
}
