//! The child-process runner every engine goes through: one process per job, never a shell, a
//! cleared environment, stdin closed, killed (SIGKILL, `kill_on_drop`) when its job is canceled,
//! when it outlives its time limit or when the caller drops the future; stdout and stderr read
//! concurrently so a chatty child cannot block on a full pipe, stderr kept only as a capped tail,
//! stdout capped. The exit status becomes an [`EngineError`] that names the program.
//!
//! Arguments are built by the engine modules from validated, typed values; file paths pass
//! [`check_path`] first, because ffmpeg and libvips read meaning into some file names.

use std::ffi::OsString;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::EngineError;

/// Bounds for one engine job.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Wall-clock limit of one child process.
    pub time_limit: Duration,
    /// Bytes of stderr kept (the tail) for error messages.
    pub stderr_cap: usize,
    /// Bytes of stdout accepted (probe JSON, headers); more is an error.
    pub stdout_cap: usize,
    /// Largest `width * height` an image or video may declare; checked from the header, before
    /// anything is decoded. The default is sharp's `limitInputPixels` (0x3FFF²).
    pub max_pixels: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            time_limit: Duration::from_secs(600),
            stderr_cap: 8 * 1024,
            stdout_cap: 4 * 1024 * 1024,
            max_pixels: 0x3FFF * 0x3FFF,
        }
    }
}

/// What a finished process left behind.
#[derive(Debug)]
pub struct Output {
    /// Everything it wrote to stdout (at most `stdout_cap` bytes), unless lines were streamed.
    pub stdout: Vec<u8>,
    /// The tail of its stderr, lossily decoded.
    pub stderr: String,
}

/// Refuses paths an engine could misread: not absolute (a leading `-` would be an option), not
/// UTF-8, or holding `%` (ffmpeg's image-sequence patterns), `[`/`]` (libvips's load/save
/// options) or a control character.
pub fn check_path(path: &Path) -> Result<&str, EngineError> {
    let text = path
        .to_str()
        .ok_or_else(|| EngineError::Invalid(format!("path {} is not UTF-8", path.display())))?;
    if !path.is_absolute() {
        return Err(EngineError::Invalid(format!("path {text} is not absolute")));
    }
    if text
        .chars()
        .any(|c| matches!(c, '%' | '[' | ']') || c.is_control())
    {
        return Err(EngineError::Invalid(format!(
            "path {text} holds a character engines interpret (%, [, ] or a control character)"
        )));
    }
    Ok(text)
}

/// Runs `program args...` to completion within `limits`, returning its stdout and stderr tail.
pub async fn run(
    program: &Path,
    args: &[OsString],
    env: &[(&str, &str)],
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<Output, EngineError> {
    run_inner(program, args, env, limits, cancel, None).await
}

/// Like [`run`], but hands each stdout line to `on_line` as it arrives (ffmpeg's
/// `-progress pipe:1`) instead of collecting stdout.
pub async fn run_lines(
    program: &Path,
    args: &[OsString],
    env: &[(&str, &str)],
    limits: &Limits,
    cancel: &CancellationToken,
    on_line: &mut (dyn FnMut(&str) + Send),
) -> Result<Output, EngineError> {
    run_inner(program, args, env, limits, cancel, Some(on_line)).await
}

async fn run_inner(
    program: &Path,
    args: &[OsString],
    env: &[(&str, &str)],
    limits: &Limits,
    cancel: &CancellationToken,
    on_line: Option<&mut (dyn FnMut(&str) + Send)>,
) -> Result<Output, EngineError> {
    let name = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| program.display().to_string());
    // The command line, for an operator (and bench/processing, which reruns it by hand); engine
    // arguments are paths inside the Assembly's directory and validated options, never secrets.
    tracing::debug!(program = %program.display(), args = ?args, "engine command");
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // PATH only, so a bare program name resolves; nothing else of the server's environment
    // (credentials, tokens) reaches an engine.
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => EngineError::Failed {
            program: name.clone(),
            status: "not started".into(),
            stderr: format!("{} was not found", program.display()),
        },
        _ => EngineError::io(format!("starting {name}"), e),
    })?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(EngineError::bad_output(&name, "no pipes"));
    };

    let work = async {
        let out = async {
            match on_line {
                Some(on_line) => stream_lines(stdout, limits.stdout_cap, on_line)
                    .await
                    .map(|()| Some(Vec::new())),
                None => read_capped(stdout, limits.stdout_cap).await,
            }
        };
        let (out, err) = tokio::join!(out, read_tail(stderr, limits.stderr_cap));
        let status = child.wait().await;
        (out, err, status)
    };
    let (out, err, status) = tokio::select! {
        done = work => done,
        () = cancel.cancelled() => return Err(EngineError::Canceled { program: name }),
        () = tokio::time::sleep(limits.time_limit) => {
            return Err(EngineError::TimedOut { program: name, limit: limits.time_limit });
        }
    };
    // Leaving the select drops `work` and with it the child: kill_on_drop sends SIGKILL.
    let status = status.map_err(|e| EngineError::io(format!("waiting for {name}"), e))?;
    let stderr = err.map_err(|e| EngineError::io(format!("reading {name}'s stderr"), e))?;
    let stdout = match out {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
            return Err(EngineError::bad_output(
                &name,
                format!("more than {} bytes on stdout", limits.stdout_cap),
            ));
        }
        Err(e) => return Err(EngineError::io(format!("reading {name}'s stdout"), e)),
    };
    if !status.success() {
        return Err(EngineError::Failed {
            program: name,
            status: describe(status),
            stderr: stderr.trim().to_owned(),
        });
    }
    Ok(Output { stdout, stderr })
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "unknown exit".into(),
    }
}

/// Reads all of `reader`; `None` once it passes `cap` (the rest is drained so the child never
/// blocks on a full pipe).
async fn read_capped(
    reader: impl AsyncRead + Unpin,
    cap: usize,
) -> std::io::Result<Option<Vec<u8>>> {
    let mut reader = reader;
    let mut kept = Vec::new();
    let mut over = false;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = reader.read(&mut buf).await?;
        if n == 0 {
            return Ok((!over).then_some(kept));
        }
        if !over && kept.len() + n <= cap {
            kept.extend_from_slice(&buf[..n]);
        } else {
            over = true;
            kept = Vec::new();
        }
    }
}

/// Keeps the last `cap` bytes of `reader` (an engine's last stderr lines say why it failed).
async fn read_tail(reader: impl AsyncRead + Unpin, cap: usize) -> std::io::Result<String> {
    let mut reader = reader;
    let mut tail: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 8 * 1024];
    loop {
        let n = reader.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > cap {
            tail.drain(..tail.len() - cap);
        }
    }
    Ok(String::from_utf8_lossy(&tail).into_owned())
}

/// Feeds complete lines to `on_line`; a line longer than `cap` is skipped, not buffered whole.
async fn stream_lines(
    reader: impl AsyncRead + Unpin,
    cap: usize,
    on_line: &mut (dyn FnMut(&str) + Send),
) -> std::io::Result<()> {
    let mut reader = BufReader::new(reader);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut reader)
            .take(cap as u64)
            .read_until(b'\n', &mut line)
            .await?;
        if n == 0 {
            return Ok(());
        }
        if line.last() == Some(&b'\n') {
            on_line(String::from_utf8_lossy(&line).trim_end());
        }
    }
}
