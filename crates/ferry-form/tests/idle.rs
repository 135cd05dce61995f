//! Stalled bodies on the form endpoint, over real HTTP on loopback: a body that delivers less
//! than 1 KiB in one idle window is answered 408 with a message, and nothing of it is kept (form
//! uploads are all or nothing); a steady body over several windows is stored whole. The clock
//! is paused, so the windows pass without waiting and the pace of the sends is exact.

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::Server;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

const IDLE: Duration = Duration::from_secs(5);

async fn start() -> Server {
    common::start(None, |s| s.with_idle_timeout(IDLE)).await
}

/// A request whose body is fed by hand; its answer is status and JSON body.
struct Open {
    feed: mpsc::Sender<Bytes>,
    answer: JoinHandle<(u16, Value)>,
}

fn open(server: &Server, method: &str, path: &str, content_type: &str) -> Open {
    let (feed, rx) = mpsc::channel::<Bytes>(4);
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, std::io::Error>(b), rx))
    });
    let req = reqwest::Client::new()
        .request(
            reqwest::Method::from_bytes(method.as_bytes()).expect("method"),
            server.url(path),
        )
        .header("content-type", content_type)
        .body(reqwest::Body::wrap_stream(stream));
    let answer = tokio::spawn(async move {
        let res = req.send().await.expect("an answer");
        let status = res.status().as_u16();
        (status, res.json().await.unwrap_or_default())
    });
    Open { feed, answer }
}

impl Open {
    async fn send(&self, bytes: &[u8]) {
        self.feed
            .send(Bytes::copy_from_slice(bytes))
            .await
            .expect("body still open");
    }

    /// The answer, which must come within an hour of (paused) time.
    async fn answer(self) -> (u16, Value) {
        tokio::time::timeout(Duration::from_secs(3600), self.answer)
            .await
            .expect("answered: the stalled body was cut off")
            .expect("join")
    }
}

/// The head of a multipart part holding a file.
fn part_head(name: &str) -> String {
    format!(
        "--X\r\nContent-Disposition: form-data; name=\"files[]\"; filename=\"{name}\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    )
}

#[tokio::test(start_paused = true)]
async fn a_stalled_raw_or_form_body_is_answered_408_and_nothing_is_kept() {
    let server = start().await;
    let idle = (408, "the request body was idle for too long".to_owned());

    let raw = open(&server, "PUT", "/upload/raw?name=a.bin", "text/plain");
    raw.send(b"ten bytes!").await;
    let (status, body) = raw.answer().await;
    assert_eq!(
        (status, body["message"].as_str().unwrap_or_default()),
        (idle.0, idle.1.as_str())
    );

    // A bundle whose first file arrived whole and whose second stalls keeps neither.
    let form = open(
        &server,
        "POST",
        "/upload",
        "multipart/form-data; boundary=X",
    );
    form.send(part_head("one.bin").as_bytes()).await;
    form.send(&[1u8; 2048]).await;
    form.send(format!("\r\n{}", part_head("two.bin")).as_bytes())
        .await;
    form.send(&[2u8; 100]).await;
    let (status, body) = form.answer().await;
    assert_eq!(
        (status, body["message"].as_str().unwrap_or_default()),
        (idle.0, idle.1.as_str())
    );

    assert_eq!(server.stored(), Vec::<String>::new());
}

#[tokio::test(start_paused = true)]
async fn a_steady_body_over_several_idle_windows_is_stored_whole() {
    let server = start().await;
    let form = open(
        &server,
        "POST",
        "/upload",
        "multipart/form-data; boundary=X",
    );
    form.send(part_head("steady.bin").as_bytes()).await;
    // 2 KiB every 3 s for 12 s: more than 1 KiB in every 5 s window.
    let mut sent = Vec::new();
    for i in 0..4u8 {
        let chunk = vec![i; 2048];
        form.send(&chunk).await;
        sent.extend_from_slice(&chunk);
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    form.send(b"\r\n--X--\r\n").await;
    drop(form.feed);
    let (status, body) = tokio::time::timeout(Duration::from_secs(3600), form.answer)
        .await
        .expect("answered")
        .expect("join");
    assert_eq!(status, 200, "{body}");
    let url = body["url"].as_str().expect("url");
    let got = reqwest::get(server.url(url))
        .await
        .expect("GET")
        .bytes()
        .await
        .expect("bytes");
    assert_eq!(Sha256::digest(&got), Sha256::digest(&sent));
}
