//! File hooks as tusd runs them (`pkg/hooks/file/file.go`): the executable `DIR/<hook type>`
//! runs in `DIR` with the hook request as JSON on stdin, `TUS_ID`, `TUS_SIZE` and `TUS_OFFSET`
//! in its environment, and its stderr passed through. Exit 0 with a
//! JSON answer (or nothing) on stdout is a response; another exit code is a failure. A missing
//! executable means the hook is not used, as in tusd. File hooks are not retried (tusd does
//! not either); a run longer than the timeout is killed.
//!
//! Unlike tusd, the hook does not inherit the server's environment: that holds the server's
//! secrets (`FERRY_AUTH_SECRET`, S3 keys, `COMPANION_*`), and a hook is often a script an
//! operator copied from elsewhere. It gets `PATH` (so `#!/bin/sh` scripts find their tools) and
//! the `TUS_*` variables, nothing else.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use async_trait::async_trait;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::time::Instant;

use super::Transport;
use crate::config::HooksConfig;
use crate::error::HookError;
use crate::event::HookEvent;
use crate::response::HookResponse;

#[derive(Debug)]
pub(super) struct FileTransport {
    dir: PathBuf,
    timeout: std::time::Duration,
    size_limit: usize,
}

impl FileTransport {
    pub(super) fn new(config: &HooksConfig, dir: &Path) -> Result<Self, HookError> {
        let dir = std::path::absolute(dir)
            .map_err(|err| HookError::Config(format!("--hooks-dir {}: {err}", dir.display())))?;
        if !dir.is_dir() {
            return Err(HookError::Config(format!(
                "--hooks-dir {} is not a directory",
                dir.display()
            )));
        }
        Ok(Self {
            dir,
            timeout: config.timeout,
            size_limit: config.response_size_limit,
        })
    }

    async fn run(&self, event: &HookEvent, path: &Path) -> Result<HookResponse, HookError> {
        let hook = event.hook;
        let upload = event.upload();
        let input = serde_json::to_vec(event)
            .map_err(|err| HookError::unavailable(hook, format!("encoding: {err}")))?;
        let mut command = Command::new(path);
        command.env_clear();
        if let Some(search) = std::env::var_os("PATH") {
            command.env("PATH", search);
        }
        let spawned = command
            .current_dir(&self.dir)
            .env("TUS_ID", &upload.id)
            .env("TUS_SIZE", upload.size.unwrap_or(0).to_string())
            .env("TUS_OFFSET", upload.offset.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(HookResponse::default());
            }
            Err(err) => {
                return Err(HookError::unavailable(
                    hook,
                    format!("cannot run {}: {err}", path.display()),
                ));
            }
        };
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(HookError::unavailable(hook, "hook pipes are missing"));
        };
        // Written while stdout is read, so neither side can fill a pipe and wait forever. A
        // hook that exits without reading its input (tusd's examples do) is not an error.
        let write = async move {
            let _ = stdin.write_all(&input).await;
            drop(stdin);
        };
        let limit = u64::try_from(self.size_limit).unwrap_or(u64::MAX);
        let read = async move {
            let mut output = Vec::new();
            stdout
                .take(limit + 1)
                .read_to_end(&mut output)
                .await
                .map(|_| output)
        };
        let ((), output) = tokio::join!(write, read);
        let output =
            output.map_err(|err| HookError::unavailable(hook, format!("reading stdout: {err}")))?;
        if output.len() > self.size_limit {
            return Err(HookError::invalid(
                hook,
                format!("stdout is larger than {} bytes", self.size_limit),
            ));
        }
        let status = child
            .wait()
            .await
            .map_err(|err| HookError::unavailable(hook, format!("waiting for the hook: {err}")))?;
        if !status.success() {
            return Err(HookError::unavailable(
                hook,
                format!(
                    "{} exited with {status}: {}",
                    path.display(),
                    String::from_utf8_lossy(&output[..output.len().min(200)])
                ),
            ));
        }
        HookResponse::from_json(&output).map_err(|err| HookError::invalid(hook, err.to_string()))
    }
}

#[async_trait]
impl Transport for FileTransport {
    async fn send(
        &self,
        event: &HookEvent,
        deadline: Option<Instant>,
    ) -> Result<HookResponse, HookError> {
        let path = self.dir.join(event.hook.as_str());
        let timeout = match deadline {
            Some(deadline) => self
                .timeout
                .min(deadline.saturating_duration_since(Instant::now())),
            None => self.timeout,
        };
        // Dropping the run on timeout drops the child, which kills it (`kill_on_drop`).
        tokio::time::timeout(timeout, self.run(event, &path))
            .await
            .unwrap_or(Err(HookError::Timeout {
                hook: event.hook,
                after: timeout,
            }))
    }
}
