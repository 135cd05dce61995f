//! The login hand-off socket `/api2/auth-callback/token/{id}` of the real binary: absent without
//! a provider; capped per client address (the address `--max-uploads-per-client` counts, behind
//! `--trusted-proxies` too) with a clear refusal; closed with "going away" on SIGTERM, so its
//! tasks hold nothing up.

use std::time::Duration;

use ferry_testkit::fake::google::FakeGoogle;
use ferry_testkit::process::FerryProcess as Ferry;
use futures_util::StreamExt;
use serde_json::Value;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{self, Message};

const APP: &str = "https://app.example";

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn with_google(google: &FakeGoogle, dir: &std::path::Path, extra: &[&str]) -> Ferry {
    let d = dir.display().to_string();
    let mut args = vec![
        "--data-dir".to_owned(),
        d.clone(),
        "--ui-dir".to_owned(),
        d,
        "--secret".to_owned(),
        "socket-secret".to_owned(),
        "--google-key".to_owned(),
        "k".to_owned(),
        "--google-secret".to_owned(),
        "s".to_owned(),
        "--google-auth-url".to_owned(),
        google.auth_url(),
        "--google-token-url".to_owned(),
        google.token_url(),
        "--google-api-url".to_owned(),
        google.api_url(),
        "--cors-origins".to_owned(),
        APP.to_owned(),
    ];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    Ferry::start(env!("CARGO_BIN_EXE_ferry"), args).await
}

/// Opens the socket `id` (with `X-Forwarded-For: xff` if given): the socket, or the refusal's
/// status and JSON body.
async fn open(base: &str, id: &str, xff: Option<&str>) -> Result<Socket, (u16, Value)> {
    let url = format!(
        "{}/api2/auth-callback/token/{id}",
        base.replace("http://", "ws://")
    );
    let mut req = url.into_client_request().expect("request");
    req.headers_mut()
        .insert("origin", APP.parse().expect("origin"));
    if let Some(xff) = xff {
        req.headers_mut()
            .insert("x-forwarded-for", xff.parse().expect("xff"));
    }
    match tokio_tungstenite::connect_async(req).await {
        Ok((ws, _)) => Ok(ws),
        Err(tungstenite::Error::Http(resp)) => {
            let body = resp
                .body()
                .as_deref()
                .and_then(|b| serde_json::from_slice(b).ok())
                .unwrap_or(Value::Null);
            Err((resp.status().as_u16(), body))
        }
        Err(e) => panic!("auth socket: {e}"),
    }
}

#[tokio::test]
async fn without_a_provider_the_route_is_absent() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path().display().to_string();
    let ferry = Ferry::start(
        env!("CARGO_BIN_EXE_ferry"),
        ["--data-dir", &d, "--ui-dir", &d, "--cors-origins", APP],
    )
    .await;
    let (status, body) = open(&ferry.base, "some-id", None)
        .await
        .expect_err("no socket");
    assert_eq!(status, 404);
    assert_eq!(body["message"], "not found", "{body}");
}

#[tokio::test]
async fn sockets_are_capped_per_client_address_with_a_clear_refusal() {
    let google = FakeGoogle::start("k", "s").await;
    let dir = tempfile::tempdir().expect("dir");
    let ferry = with_google(&google, dir.path(), &["--trusted-proxies", "127.0.0.1"]).await;
    let mut held = Vec::new();
    for i in 0..16 {
        held.push(
            open(&ferry.base, &format!("held-{i}"), None)
                .await
                .expect("under the cap"),
        );
    }
    let (status, body) = open(&ferry.base, "one-more", None)
        .await
        .expect_err("over the cap");
    assert_eq!(status, 429);
    assert_eq!(
        body["message"],
        "Too many sign-in sockets from this address (at most 16); close one and try again"
    );
    // Behind the trusted proxy, the client the proxy names is another address.
    let _other = open(&ferry.base, "behind-proxy", Some("198.51.100.7"))
        .await
        .expect("another client");
    // A closed socket gives its place back.
    let mut first = held.remove(0);
    first.close(None).await.expect("close");
    let again = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match open(&ferry.base, "again", None).await {
                Ok(ws) => break ws,
                Err((429, _)) => tokio::task::yield_now().await,
                Err(other) => panic!("{other:?}"),
            }
        }
    })
    .await;
    assert!(again.is_ok(), "the closed socket's place came back");
}

#[tokio::test]
async fn sigterm_closes_waiting_sockets_with_going_away() {
    let google = FakeGoogle::start("k", "s").await;
    let dir = tempfile::tempdir().expect("dir");
    let mut ferry = with_google(&google, dir.path(), &[]).await;
    let mut sockets = Vec::new();
    for i in 0..12 {
        sockets.push(
            open(&ferry.base, &format!("waiting-{i}"), None)
                .await
                .expect("socket"),
        );
    }
    let exited = tokio::task::spawn_blocking(move || ferry.terminate(Duration::from_secs(30)));
    for mut ws in sockets {
        let frame = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("a frame in time")
            .expect("open")
            .expect("a close frame, not a dropped connection");
        assert!(
            matches!(&frame, Message::Close(Some(c)) if u16::from(c.code) == 1001),
            "{frame:?}"
        );
    }
    assert!(exited.await.expect("join"), "ferry exits on SIGTERM");
}
