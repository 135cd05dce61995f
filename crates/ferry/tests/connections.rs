//! The connections `ferry serve` keeps and closes, over raw TCP so every byte is the test's:
//! a client trickling its headers is disconnected after `--header-timeout`, and an answer
//! given before the body was read (413 while the client is still sending) reaches the client
//! whole, every time, instead of a reset. Node clients (tus-js-client, node:http) are in
//! `e2e/early-answers.e2e.ts`. The accept loop also keeps what `axum::serve` gave: the peer
//! address on every request, and a shutdown that closes idle connections at once.

mod common;

use std::time::Duration;

use clap::Parser;
use common::{Server, serve as start};
use ferry::{Cli, Command};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Far above any timeout configured here: only a connection that is never closed reaches it.
const GENEROUS: Duration = Duration::from_secs(20);
const MIB: usize = 1024 * 1024;

/// Reads until the server closes the connection; what arrived, or the error that ended it.
async fn read_until_closed(stream: &mut (impl AsyncReadExt + Unpin)) -> std::io::Result<String> {
    let mut got = Vec::new();
    stream.read_to_end(&mut got).await?;
    Ok(String::from_utf8_lossy(&got).into_owned())
}

#[tokio::test]
async fn a_client_trickling_its_headers_is_disconnected_at_the_header_timeout() {
    let server = start(&["--header-timeout", "1"]).await;
    for partial in [
        "POST /files/ HTT".to_owned(),
        format!(
            "POST /files/ HTTP/1.1\r\nHost: {}\r\nTus-Resumable: 1.0.0\r\nUpload-Len",
            server.addr
        ),
    ] {
        let mut stalled = TcpStream::connect(server.addr).await.expect("connect");
        stalled.write_all(partial.as_bytes()).await.expect("write");
        let closed = tokio::time::timeout(GENEROUS, read_until_closed(&mut stalled))
            .await
            .unwrap_or_else(|_| panic!("still open after {GENEROUS:?}: {partial:?}"));
        // Closed, with at most an error answer; never a request handled from half a head.
        if let Ok(answer) = closed {
            assert!(
                answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
                "{answer:?}"
            );
        }
    }

    // A client that sends its head in time is served as before, on the same server.
    let mut prompt = TcpStream::connect(server.addr).await.expect("connect");
    prompt
        .write_all(b"GET /health HTTP/1.1\r\nHost: ferry\r\nConnection: close\r\n\r\n")
        .await
        .expect("write");
    let answer = tokio::time::timeout(GENEROUS, read_until_closed(&mut prompt))
        .await
        .expect("answered")
        .expect("read");
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
}

/// Sends `head` and `body_len` bytes of body, then reads the answer. A failed write ends the
/// exchange with that error, as in Node's http client (tus-js-client's "write EPIPE"): the
/// server must let the client finish sending, within its bounds, for the answer to arrive.
async fn send_then_read(
    addr: std::net::SocketAddr,
    head: &str,
    body_prefix: &[u8],
    body_len: usize,
) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(addr).await?;
    let exchange = async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body_prefix).await?;
        let chunk = vec![b'x'; 64 * 1024];
        let mut left = body_len - body_prefix.len();
        while left > 0 {
            let n = left.min(chunk.len());
            stream.write_all(&chunk[..n]).await?;
            left -= n;
        }
        read_until_closed(&mut stream).await
    };
    tokio::time::timeout(GENEROUS, exchange)
        .await
        .map_err(|_| std::io::Error::other("no answer in time"))?
}

/// The status line and the body's message of 20 early answers in a row.
async fn twenty_early_answers(
    server: &Server,
    head: &str,
    prefix: &[u8],
    len: usize,
    status: &str,
    message: &str,
) {
    let mut failures = Vec::new();
    for attempt in 0..20 {
        match send_then_read(server.addr, head, prefix, len).await {
            Ok(answer) if answer.starts_with(status) && answer.contains(message) => {}
            Ok(answer) => failures.push(format!("{attempt}: {:.200}", answer)),
            Err(err) => failures.push(format!("{attempt}: {err}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 20 early answers lost ({status}):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[tokio::test]
async fn answers_given_before_the_body_is_read_reach_the_client() {
    let server = start(&["--max-size", "1048576"]).await;
    let host = server.addr;
    let len = 8 * MIB;

    // tus: the declared length is over --max-size, so the creation answers before its body.
    let tus = format!(
        "POST /files/ HTTP/1.1\r\nHost: {host}\r\nTus-Resumable: 1.0.0\r\nUpload-Length: {len}\r\n\
         Content-Type: application/offset+octet-stream\r\nContent-Length: {len}\r\n\r\n"
    );
    twenty_early_answers(
        &server,
        &tus,
        b"",
        len,
        "HTTP/1.1 413",
        "upload is larger than the maximum size",
    )
    .await;

    // The raw form route: Content-Length over the maximum.
    let raw = format!(
        "PUT /upload/raw?name=big.bin HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len}\r\n\r\n"
    );
    twenty_early_answers(
        &server,
        &raw,
        b"",
        len,
        "HTTP/1.1 413",
        "File exceeds the maximum size of 1048576 bytes",
    )
    .await;

    // The multipart form: refused once the file part passes the maximum, mid-body.
    let part =
        b"--b0undary\r\nContent-Disposition: form-data; name=\"files[]\"; filename=\"big.bin\"\r\n\
                 Content-Type: application/octet-stream\r\n\r\n";
    let form = format!(
        "POST /upload HTTP/1.1\r\nHost: {host}\r\nContent-Type: multipart/form-data; boundary=b0undary\r\n\
         Content-Length: {len}\r\n\r\n"
    );
    twenty_early_answers(
        &server,
        &form,
        part,
        len,
        "HTTP/1.1 413",
        "File exceeds the maximum size of 1048576 bytes",
    )
    .await;
}

/// The accept loop hands every request its peer address (`ConnectInfo`, which the per-client
/// upload cap and the hooks read): a hook names the client's own address and port.
#[tokio::test]
async fn requests_carry_the_peer_address() {
    let receiver = ferry_testkit::hooks::HookReceiver::start().await;
    let hooks = receiver.url();
    let server = start(&[
        "--hooks-http",
        &hooks,
        "--hooks-enabled-events",
        "pre-create",
    ])
    .await;
    let mut client = TcpStream::connect(server.addr).await.expect("connect");
    let peer = client.local_addr().expect("local addr");
    client
        .write_all(
            b"POST /files/ HTTP/1.1\r\nHost: ferry\r\nTus-Resumable: 1.0.0\r\n\
              Upload-Length: 5\r\nConnection: close\r\n\r\n",
        )
        .await
        .expect("write");
    let answer = tokio::time::timeout(GENEROUS, read_until_closed(&mut client))
        .await
        .expect("answered")
        .expect("read");
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    let seen = receiver.wait_for("pre-create", 1, GENEROUS).await;
    assert_eq!(
        seen[0]["Event"]["HTTPRequest"]["RemoteAddr"],
        peer.to_string(),
        "{}",
        seen[0]
    );
}

/// Shutdown closes connections left open between requests at once: the server returns long
/// before its grace period, with a keep-alive client still connected.
#[tokio::test]
async fn shutdown_closes_idle_keep_alive_connections() {
    let data = tempfile::tempdir().expect("temp dir");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (listen, dir) = (addr.to_string(), data.path().display().to_string());
    let args = [
        "ferry",
        "serve",
        "--listen",
        &listen,
        "--data-dir",
        &dir,
        "--no-ui",
    ];
    let Command::Serve(config) = Cli::try_parse_from(args).expect("flags").command;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let stop = async move {
            let _ = stop_rx.await;
        };
        ferry::serve_with_grace(&config, listener, stop, Duration::from_secs(600)).await
    });
    let mut idle = TcpStream::connect(addr).await.expect("connect");
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: ferry\r\n\r\n")
        .await
        .expect("write");
    // The whole answer (`ok\n` ends it), and the connection stays open for the next request.
    let mut answer = Vec::new();
    while !answer.ends_with(b"\r\n\r\nok\n") {
        let mut chunk = [0u8; 256];
        let n = idle.read(&mut chunk).await.expect("read");
        assert!(n > 0, "closed before the answer");
        answer.extend_from_slice(&chunk[..n]);
    }
    assert!(answer.starts_with(b"HTTP/1.1 200 OK"));

    let _ = stop_tx.send(());
    let served = tokio::time::timeout(GENEROUS, server)
        .await
        .expect("serve returned with an idle connection open")
        .expect("task");
    assert!(served.is_ok(), "{served:?}");
    let rest = tokio::time::timeout(GENEROUS, read_until_closed(&mut idle))
        .await
        .expect("closed");
    assert_eq!(
        rest.ok().as_deref(),
        Some(""),
        "nothing more after the answer"
    );
}
