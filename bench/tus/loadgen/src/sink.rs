//! The reference servers: PUT /upload streams the body into one file (the write-only baseline,
//! like `bench/tus/sink.mjs` but without Node's receive path in the way) or drops it (the
//! ceiling: what curl and loopback allow on this machine). OPTIONS /files/ answers 204 so the
//! readiness probe of run.sh works unchanged.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::routing::{options, put};
use bytes::Bytes;
use http_body_util::BodyExt;
use tokio::sync::mpsc;

use crate::Error;

/// Chunks in flight between the socket and the disk writer: enough to keep both busy.
const QUEUE: usize = 16;

/// Serves until killed. `file: None` discards every body.
pub async fn run(port: u16, file: Option<PathBuf>) -> Result<(), Error> {
    let app = Router::new()
        .route("/upload", put(upload))
        .route("/files/", options(|| async { StatusCode::NO_CONTENT }))
        .layer(DefaultBodyLimit::disable())
        .with_state(Arc::new(file));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    axum::serve(listener, app).await?;
    Ok(())
}

async fn upload(State(file): State<Arc<Option<PathBuf>>>, body: Body) -> StatusCode {
    let result = match file.as_ref() {
        None => discard(body).await,
        Some(path) => write(path.clone(), body).await,
    };
    match result {
        Ok(()) => StatusCode::OK,
        Err(err) => {
            eprintln!("sink: {err}");
            StatusCode::INTERNAL_SERVER_ERROR
        }
    }
}

/// Reads every chunk and drops it.
async fn discard(mut body: Body) -> Result<(), Error> {
    while let Some(frame) = body.frame().await {
        drop(frame?);
    }
    Ok(())
}

/// Hands each chunk to a blocking writer thread (plain `write_all`, no fsync) so reading the
/// socket and writing the page cache overlap on the two cores.
async fn write(path: PathBuf, mut body: Body) -> Result<(), Error> {
    let (tx, mut rx) = mpsc::channel::<Bytes>(QUEUE);
    let writer = tokio::task::spawn_blocking(move || -> std::io::Result<()> {
        let mut out = File::create(path)?;
        while let Some(chunk) = rx.blocking_recv() {
            out.write_all(&chunk)?;
        }
        Ok(())
    });
    let mut read = Ok(());
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                if let Ok(chunk) = frame.into_data()
                    && tx.send(chunk).await.is_err()
                {
                    break; // the writer failed; its error is reported below
                }
            }
            Err(err) => {
                read = Err(err);
                break;
            }
        }
    }
    drop(tx);
    writer.await??;
    read?;
    Ok(())
}
