//! Requests no HTTP client would send, written byte for byte on a fresh connection: framing
//! that could smuggle a second request, malformed request lines and headers, oversized heads.
//! Each must be refused with a 4xx/5xx status line, never served and never left hanging.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::probe::{raw, run_table, start};

#[tokio::test]
async fn malformed_framing_is_refused() {
    let server = start(&[]).await;
    let big = format!(
        "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(1 << 20)
    );
    run_table(
        &server,
        vec![
            raw(
                "two different Content-Lengths",
                "POST /upload/raw?name=a HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
            )
            .expect(400, ""),
            raw(
                "negative Content-Length",
                "POST /upload/raw?name=a HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
            )
            .expect(400, ""),
            raw("a header without a colon", "GET /health HTTP/1.1\r\nHost x\r\n\r\n").expect(400, ""),
            raw("an unknown HTTP version", "GET /health HTTP/9.9\r\nHost: x\r\n\r\n").expect(400, ""),
            raw("a head too large", big).expect(431, ""),
        ],
    )
    .await;
}

/// `Content-Length` and `Transfer-Encoding` together: the chunked framing wins (RFC 9112 §6.3)
/// and the connection closes after the one answer, so bytes a proxy framed differently are
/// never read as a second request. Here a `GET /health` follows the chunked body on the same
/// connection: it must not be answered.
#[tokio::test]
async fn content_length_with_chunked_closes_after_one_answer() {
    let server = start(&[]).await;
    let mut stream = TcpStream::connect(server.addr).await.expect("connect");
    stream
        .write_all(
            b"POST /files/ HTTP/1.1\r\nHost: x\r\nTus-Resumable: 1.0.0\r\nUpload-Length: 1\r\n\
              Content-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n\
              GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
        )
        .await
        .expect("write");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .expect("the connection closes")
        .expect("read");
    let answer = String::from_utf8_lossy(&answer);
    assert_eq!(answer.matches("HTTP/1.1 ").count(), 1, "{answer}");
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
}
