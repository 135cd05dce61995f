//! `/file/virusscan` through clamd's unix socket (`--clamd-socket PATH`): the `zINSTREAM`
//! command, the file sent in length-prefixed chunks, the reply read up to its NUL. A file over
//! the stream limit is refused before anything is sent (clamd would otherwise answer "size limit
//! exceeded" mid-stream, and a file must never pass unscanned). Connect, every write and the
//! reply are bounded by one deadline, and a canceled job drops the connection.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio_util::sync::CancellationToken;

use super::EngineError;

/// Where clamd listens and how much it is sent.
#[derive(Debug, Clone)]
pub struct ClamdConfig {
    /// clamd's `LocalSocket`.
    pub socket: PathBuf,
    /// Bytes per INSTREAM chunk.
    pub chunk_size: usize,
    /// Largest file sent; keep it at or under clamd's `StreamMaxLength` (25 MiB by default).
    pub max_stream_bytes: u64,
    /// Deadline for one whole scan (connect, send, verdict).
    pub timeout: Duration,
}

impl ClamdConfig {
    /// Defaults for a socket: 64 KiB chunks, clamd's default 25 MiB stream limit, 120 s.
    pub fn new(socket: impl Into<PathBuf>) -> Self {
        Self {
            socket: socket.into(),
            chunk_size: 64 * 1024,
            max_stream_bytes: 25 * 1024 * 1024,
            timeout: Duration::from_secs(120),
        }
    }
}

/// clamd's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No signature matched.
    Clean,
    /// A signature matched; its name, e.g. `Eicar-Test-Signature`.
    Infected(String),
}

/// Asks clamd whether it is up (`zPING` → `PONG`).
pub async fn ping(config: &ClamdConfig) -> Result<(), EngineError> {
    let reply = with_deadline(config, &CancellationToken::new(), async {
        let mut stream = connect(&config.socket).await?;
        stream.write_all(b"zPING\0").await.map_err(write_error)?;
        read_reply(&mut stream).await
    })
    .await?;
    if reply == "PONG" {
        Ok(())
    } else {
        Err(EngineError::Clamd(format!(
            "unexpected answer to PING: {reply:?}"
        )))
    }
}

/// Scans `path`'s bytes with clamd.
pub async fn scan_file(
    config: &ClamdConfig,
    path: &Path,
    cancel: &CancellationToken,
) -> Result<Verdict, EngineError> {
    let size = super::probe::regular_file(path).await?;
    if size > config.max_stream_bytes {
        return Err(EngineError::TooLarge {
            size,
            max: config.max_stream_bytes,
        });
    }
    let mut file = tokio::fs::File::open(path)
        .await
        .map_err(|e| EngineError::io(format!("opening {}", path.display()), e))?;
    let reply = with_deadline(config, cancel, async {
        let mut stream = connect(&config.socket).await?;
        let sent = send_stream(&mut stream, &mut file, path, config).await;
        match sent {
            Ok(()) => read_reply(&mut stream).await,
            // clamd closes the connection when the stream passes its StreamMaxLength, after
            // saying so: its reason beats "broken pipe".
            Err(EngineError::Clamd(lost)) => match read_reply(&mut stream).await {
                Ok(reply) if !reply.is_empty() => Ok(reply),
                _ => Err(EngineError::Clamd(lost)),
            },
            Err(other) => Err(other),
        }
    })
    .await?;
    parse_reply(&reply)
}

async fn send_stream(
    stream: &mut UnixStream,
    file: &mut tokio::fs::File,
    path: &Path,
    config: &ClamdConfig,
) -> Result<(), EngineError> {
    stream
        .write_all(b"zINSTREAM\0")
        .await
        .map_err(write_error)?;
    let mut chunk = vec![0u8; config.chunk_size.clamp(1, u32::MAX as usize)];
    let mut sent = 0u64;
    loop {
        let n = file
            .read(&mut chunk)
            .await
            .map_err(|e| EngineError::io(format!("reading {}", path.display()), e))?;
        if n == 0 {
            break;
        }
        sent += n as u64;
        if sent > config.max_stream_bytes {
            // The file grew while being sent.
            return Err(EngineError::TooLarge {
                size: sent,
                max: config.max_stream_bytes,
            });
        }
        let len = u32::try_from(n).map_err(|_| EngineError::Clamd("chunk too large".into()))?;
        stream
            .write_all(&len.to_be_bytes())
            .await
            .map_err(write_error)?;
        stream.write_all(&chunk[..n]).await.map_err(write_error)?;
    }
    stream
        .write_all(&0u32.to_be_bytes())
        .await
        .map_err(write_error)
}

fn parse_reply(reply: &str) -> Result<Verdict, EngineError> {
    // `stream: OK`, `stream: Eicar-Test-Signature FOUND`, `INSTREAM size limit exceeded. ERROR`.
    let body = reply.strip_prefix("stream: ").unwrap_or(reply);
    if body == "OK" {
        return Ok(Verdict::Clean);
    }
    if let Some(name) = body.strip_suffix(" FOUND") {
        return Ok(Verdict::Infected(name.trim().to_owned()));
    }
    Err(EngineError::Clamd(format!("scan failed: {reply}")))
}

async fn with_deadline<T>(
    config: &ClamdConfig,
    cancel: &CancellationToken,
    work: impl std::future::Future<Output = Result<T, EngineError>>,
) -> Result<T, EngineError> {
    tokio::select! {
        result = tokio::time::timeout(config.timeout, work) => result.map_err(|_| {
            EngineError::Clamd(format!("no verdict within {}s", config.timeout.as_secs_f64()))
        })?,
        () = cancel.cancelled() => Err(EngineError::Canceled { program: "clamd".into() }),
    }
}

async fn connect(socket: &Path) -> Result<UnixStream, EngineError> {
    UnixStream::connect(socket)
        .await
        .map_err(|e| EngineError::Clamd(format!("cannot connect to {}: {e}", socket.display())))
}

fn write_error(e: std::io::Error) -> EngineError {
    EngineError::Clamd(format!("connection lost while sending: {e}"))
}

/// Reads up to the NUL that ends a `z`-command reply (at most 4 KiB).
async fn read_reply(stream: &mut UnixStream) -> Result<String, EngineError> {
    let mut reply = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        let n = stream
            .read(&mut buf)
            .await
            .map_err(|e| EngineError::Clamd(format!("reading the reply: {e}")))?;
        if n == 0 {
            break;
        }
        reply.extend_from_slice(&buf[..n]);
        if let Some(end) = reply.iter().position(|b| *b == 0) {
            reply.truncate(end);
            break;
        }
        if reply.len() > 4096 {
            return Err(EngineError::Clamd("reply longer than 4 KiB".into()));
        }
    }
    Ok(String::from_utf8_lossy(&reply).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_map_to_verdicts() {
        assert_eq!(parse_reply("stream: OK").ok(), Some(Verdict::Clean));
        assert_eq!(
            parse_reply("stream: Eicar-Test-Signature FOUND").ok(),
            Some(Verdict::Infected("Eicar-Test-Signature".into()))
        );
        assert!(parse_reply("INSTREAM size limit exceeded. ERROR").is_err());
    }
}
