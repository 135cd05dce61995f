//! A store's "try again" is repeated where the body allows it: against a local store that
//! answers a scripted list of statuses, a write whose bytes are in memory succeeds after two
//! 503 `SlowDown`, every attempt carrying the same bytes; a streamed part is sent once; a 400
//! is not repeated; a store that never recovers fails the call after four attempts with its
//! own words.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use ferry_s3::{S3Bucket, S3Client, S3Error};

/// What the store answers, in order; once the script ends it answers 200.
#[derive(Clone, Default)]
struct Store {
    script: Arc<Mutex<VecDeque<u16>>>,
    bodies: Arc<Mutex<Vec<Bytes>>>,
}

impl Store {
    async fn start(script: &[u16]) -> (Self, SocketAddr) {
        let store = Self {
            script: Arc::new(Mutex::new(script.iter().copied().collect())),
            ..Self::default()
        };
        let app = axum::Router::new().fallback({
            let store = store.clone();
            move |body: Bytes| {
                let store = store.clone();
                async move { store.answer(body) }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move { axum::serve(listener, app).await });
        (store, addr)
    }

    fn answer(&self, body: Bytes) -> axum::response::Response {
        self.bodies.lock().expect("bodies").push(body);
        let status = self
            .script
            .lock()
            .expect("script")
            .pop_front()
            .unwrap_or(200);
        let status = StatusCode::from_u16(status).expect("status");
        let mut headers = HeaderMap::new();
        headers.insert("etag", "\"e1\"".parse().expect("etag"));
        let text = if status.is_success() {
            String::new()
        } else {
            format!("<Error><Code>SlowDown</Code><Message>status {status}</Message></Error>")
        };
        (status, headers, text).into_response()
    }

    fn bodies(&self) -> Vec<Bytes> {
        self.bodies.lock().expect("bodies").clone()
    }
}

fn client(addr: SocketAddr) -> S3Client {
    S3Client::new(S3Bucket {
        endpoint: format!("http://{addr}"),
        bucket: "b".to_owned(),
        region: "us-east-1".to_owned(),
        access_key: "key".to_owned(),
        secret_key: "secret".to_owned().into(),
        force_path_style: true,
        key_prefix: String::new(),
    })
    .expect("client")
}

#[tokio::test]
async fn a_write_in_memory_is_repeated_after_slow_down_with_the_same_bytes() {
    let (store, addr) = Store::start(&[503, 503]).await;
    client(addr)
        .put("k.info", b"{\"a\":1}".to_vec())
        .await
        .expect("stored on the third attempt");
    let bodies = store.bodies();
    assert_eq!(bodies.len(), 3);
    assert!(
        bodies.iter().all(|b| b.as_ref() == b"{\"a\":1}"),
        "{bodies:?}"
    );
}

#[tokio::test]
async fn a_streamed_part_is_sent_once() {
    let (store, addr) = Store::start(&[503]).await;
    let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(Bytes::from_static(b"abc"))]);
    let err = client(addr)
        .upload_part("k", "u", 1, 3, reqwest::Body::wrap_stream(chunks))
        .await
        .expect_err("not repeated");
    assert!(matches!(err, S3Error::Upstream(_)), "{err:?}");
    assert!(err.detail().contains("503"), "{}", err.detail());
    assert_eq!(store.bodies().len(), 1);
}

#[tokio::test]
async fn a_refusal_is_not_repeated_and_a_store_that_never_recovers_fails_the_call() {
    let (store, addr) = Store::start(&[400]).await;
    let err = client(addr)
        .put("k", b"x".to_vec())
        .await
        .expect_err("refused");
    assert!(
        matches!(err, S3Error::Client { status: 400, .. }),
        "{err:?}"
    );
    assert_eq!(store.bodies().len(), 1);

    let (store, addr) = Store::start(&[503; 10]).await;
    let err = client(addr)
        .put("k", b"x".to_vec())
        .await
        .expect_err("gave up");
    assert_eq!(
        err.detail(),
        "PutObject: 503 Service Unavailable SlowDown status 503 Service Unavailable"
    );
    assert_eq!(store.bodies().len(), 4, "one attempt and three repeats");
}
