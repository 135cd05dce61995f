//! tus requests the fault tests share, against one `ferry` base URL (the binary's own
//! `tests/common` starts servers and creates uploads for every suite).

use reqwest::{Client, RequestBuilder, StatusCode};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_ferry");

/// A request with `Tus-Resumable: 1.0.0`.
pub fn tus(client: &Client, method: reqwest::Method, url: &str) -> RequestBuilder {
    client.request(method, url).header("Tus-Resumable", "1.0.0")
}

/// Creates an upload of `len` bytes on `base` ([`crate::common::create`]); returns its URL.
pub async fn create(client: &Client, base: &str, len: usize) -> String {
    let location = crate::common::create(client, base, len).await;
    // Locations are paths here; an absolute one is taken as it is.
    if location.starts_with('/') {
        format!("{base}{location}")
    } else {
        location
    }
}

/// The upload's offset, or the status HEAD answered instead of 200.
pub async fn offset(client: &Client, url: &str) -> Result<u64, StatusCode> {
    let res = tus(client, reqwest::Method::HEAD, url)
        .send()
        .await
        .expect("head");
    if res.status() != StatusCode::OK {
        return Err(res.status());
    }
    Ok(res.headers()["upload-offset"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("number"))
}

/// PATCHes `body` at `offset` in one request.
pub async fn patch(client: &Client, url: &str, offset: u64, body: Vec<u8>) -> reqwest::Response {
    tus(client, reqwest::Method::PATCH, url)
        .header("Upload-Offset", offset.to_string())
        .header("Content-Type", "application/offset+octet-stream")
        .body(body)
        .send()
        .await
        .expect("patch answered")
}

/// The finished upload's bytes.
pub async fn download(client: &Client, url: &str) -> Vec<u8> {
    let res = client.get(url).send().await.expect("download");
    assert_eq!(res.status(), 200, "GET {url}");
    res.bytes().await.expect("body").to_vec()
}

/// Bytes handed to request bodies, over every attempt (what was sent, resends included).
pub type Sent = std::sync::Arc<std::sync::atomic::AtomicU64>;

/// PATCHes `body` at `offset`, `chunk` bytes every `pace`, counting what it hands over in
/// `sent`. `Err` when the request failed without an answer (connection cut, server gone).
pub async fn paced_patch(
    client: &Client,
    url: &str,
    offset: u64,
    body: Vec<u8>,
    chunk: usize,
    pace: std::time::Duration,
    sent: &Sent,
) -> reqwest::Result<reqwest::Response> {
    let len = body.len();
    let chunks: Vec<bytes::Bytes> = body
        .chunks(chunk)
        .map(bytes::Bytes::copy_from_slice)
        .collect();
    let sent = sent.clone();
    let stream = futures_util::stream::unfold(chunks.into_iter(), move |mut rest| {
        let sent = sent.clone();
        async move {
            let next = rest.next()?;
            tokio::time::sleep(pace).await;
            sent.fetch_add(next.len() as u64, std::sync::atomic::Ordering::Relaxed);
            Some((Ok::<_, std::io::Error>(next), rest))
        }
    });
    tus(client, reqwest::Method::PATCH, url)
        .header("Upload-Offset", offset.to_string())
        .header("Content-Type", "application/offset+octet-stream")
        .header("Content-Length", len.to_string())
        .body(reqwest::Body::wrap_stream(stream))
        .send()
        .await
}

/// Polls `GET {base}/health` until it answers 200; the time that took. Panics after `within`.
pub async fn health_back(
    client: &Client,
    base: &str,
    within: std::time::Duration,
) -> std::time::Duration {
    let started = std::time::Instant::now();
    while started.elapsed() < within {
        if let Ok(res) = client.get(format!("{base}/health")).send().await
            && res.status() == StatusCode::OK
        {
            return started.elapsed();
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    panic!("/health did not answer 200 within {within:?}");
}
