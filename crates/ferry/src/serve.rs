//! The accept loop: HTTP/1.1 (with upgrades, for the progress websocket) on every accepted
//! connection, with what `axum::serve` lacks:
//!
//! - a timer, so hyper's header-read timeout runs: a client that trickles its request line
//!   and headers (Slowloris) is disconnected after `--header-timeout`;
//! - a lingering close ([`crate::linger`]), so an answer given before the body was read reaches
//!   the client instead of a reset.
//!
//! Each request carries `ConnectInfo<SocketAddr>` (the per-client upload cap reads the peer
//! address). On shutdown the listener closes, idle connections close, requests in flight finish
//! (the caller bounds how long), and the returned future resolves when every connection is done.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tower::ServiceExt;

use crate::linger::{Linger, LingerIo, Tracked, Unread};

/// How each connection is served.
#[derive(Clone, Copy, Debug)]
pub struct Connections {
    /// Longest a client may take to send a request line and headers.
    pub header_timeout: Duration,
    /// Bounds of the lingering close after an early answer.
    pub linger: Linger,
}

/// Serves `app` on `listener` until `shutdown` resolves, then until every connection is done.
pub async fn run(
    listener: TcpListener,
    app: Router,
    options: Connections,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    // `true` once shutdown has begun; connection tasks hold receivers, so the sender sees
    // when the last one is gone.
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    accept_failed(err).await;
                    continue;
                }
            },
        };
        tokio::spawn(connection(
            stream,
            peer,
            app.clone(),
            options,
            stop_rx.clone(),
        ));
    }
    drop(listener);
    drop(stop_rx);
    let _ = stop_tx.send(true);
    stop_tx.closed().await;
}

/// A failed accept: a connection that died before it was accepted is nothing to wait for; out
/// of descriptors or memory, waiting a moment lets connections close instead of spinning.
async fn accept_failed(err: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        err.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::error!(error = %err, "cannot accept connections; retrying in 1 s");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// Serves one connection until it closes, or until shutdown closes it once idle.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    options: Connections,
    mut stop: watch::Receiver<bool>,
) {
    let unread = Arc::new(Unread::default());
    let io = TokioIo::new(LingerIo::new(stream, unread.clone(), options.linger));
    let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        let unread = unread.clone();
        let mut req = req.map(|body| axum::body::Body::new(Tracked::new(body, unread.clone())));
        req.extensions_mut().insert(ConnectInfo(peer));
        let app = app.clone();
        async move {
            let mut response = app.oneshot(req).await?;
            unread.close_if_unread(&mut response);
            Ok::<_, std::convert::Infallible>(response)
        }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(options.header_timeout);
    let conn = builder.serve_connection(io, service).with_upgrades();
    let mut conn = std::pin::pin!(conn);
    let mut stopping = false;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(err) = result {
                    tracing::debug!(%peer, error = %err, "connection ended with an error");
                }
                return;
            }
            changed = stop.changed(), if !stopping => {
                stopping = true;
                if changed.is_ok() {
                    conn.as_mut().graceful_shutdown();
                }
            }
        }
    }
}
