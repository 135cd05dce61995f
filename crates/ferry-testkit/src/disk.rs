//! A full disk for one child process: a small tmpfs mounted over a directory in a private mount
//! namespace (`unshare --mount --propagation private`, then `mount -t tmpfs -o size=...`), so
//! the child (e.g. `ferry serve --data-dir DIR`) runs out of space after a few bytes while the
//! rest of the machine sees nothing. It needs root (or `CAP_SYS_ADMIN`); [`TinyDisk::new`] says
//! why not when the machine refuses, and tests skip with that message.
//!
//! The test reaches the tmpfs as the child sees it through `/proc/PID/root/...`
//! ([`TinyDisk::path_for`]), to fill it or free space while the child runs. A restart mounts a
//! new, empty tmpfs: this disk lives as long as the one process.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tempfile::TempDir;

/// A directory that a wrapped command sees as a tmpfs of `size` bytes.
#[derive(Debug)]
pub struct TinyDisk {
    dir: TempDir,
    size: u64,
}

impl TinyDisk {
    /// A disk of `size` bytes (tmpfs rounds up to whole pages). `Err` says why this machine
    /// cannot make one (no `unshare`, no permission to mount).
    pub fn new(size: u64) -> Result<Self, String> {
        let disk = Self {
            dir: tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?,
            size,
        };
        let out = disk
            .wrap(&Command::new("true"))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run unshare: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "cannot mount a tmpfs in a private mount namespace ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(disk)
    }

    /// The mount point, as a path (outside the namespace it is an empty directory).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `inner` (program, arguments, environment, working directory) run with the tmpfs mounted
    /// over [`TinyDisk::dir`]. The shell and then `inner` replace `unshare` in the same process,
    /// so the child's PID is `inner`'s.
    pub fn wrap(&self, inner: &Command) -> Command {
        let mut cmd = Command::new("unshare");
        cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(r#"mount -t tmpfs -o size="$1" ferry-full-disk "$2" && shift 2 && exec "$@""#)
            .arg("sh")
            .arg(self.size.to_string())
            .arg(self.dir.path())
            .arg(inner.get_program())
            .args(inner.get_args());
        for (name, value) in inner.get_envs() {
            match value {
                Some(value) => cmd.env(name, value),
                None => cmd.env_remove(name),
            };
        }
        if let Some(cwd) = inner.get_current_dir() {
            cmd.current_dir(cwd);
        }
        cmd
    }

    /// `relative` inside the tmpfs, as the process `pid` (started through [`TinyDisk::wrap`])
    /// sees it: `/proc/PID/root/DIR/relative`.
    pub fn path_for(&self, pid: u32, relative: impl AsRef<Path>) -> PathBuf {
        let inside = self.dir.path().strip_prefix("/").unwrap_or(self.dir.path());
        Path::new("/proc")
            .join(pid.to_string())
            .join("root")
            .join(inside)
            .join(relative)
    }
}
