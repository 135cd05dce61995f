//! A real `ferry serve` child process, for tests that need one (SIGKILL mid-request, several
//! instances on one Redis). It listens on `127.0.0.1:0` and the test reads the bound address from
//! the line the server prints, so no port is picked before the server binds it. Killed with
//! SIGKILL, by its own PID, when dropped. [`FerryProcess::kill9_restart`] plays a crash: SIGKILL,
//! then the same command on the same address and data.

use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

/// How long a server may take to print its address.
const START: Duration = Duration::from_secs(20);

/// Wraps the `ferry serve` command before it is spawned (e.g. [`crate::disk::TinyDisk::wrap`]).
pub type Wrap = Arc<dyn Fn(&Command) -> Command + Send + Sync>;

/// A running `ferry serve`.
pub struct FerryProcess {
    child: Child,
    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub base: String,
    bin: OsString,
    args: Vec<OsString>,
    wrap: Option<Wrap>,
}

impl std::fmt::Debug for FerryProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FerryProcess")
            .field("pid", &self.child.id())
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl FerryProcess {
    /// Runs `bin serve --listen 127.0.0.1:0 ARGS...` and waits until it is listening.
    pub async fn start<I, S>(bin: &str, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Self::launch(bin.into(), collect(args), None, "127.0.0.1:0").await
    }

    /// Like [`FerryProcess::start`], with the command passed through `wrap` first (the child's
    /// PID stays the server's when `wrap` execs it, as [`crate::disk::TinyDisk::wrap`] does).
    pub async fn start_wrapped<I, S>(bin: &str, args: I, wrap: Wrap) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Self::launch(bin.into(), collect(args), Some(wrap), "127.0.0.1:0").await
    }

    async fn launch(bin: OsString, args: Vec<OsString>, wrap: Option<Wrap>, listen: &str) -> Self {
        let mut command = Command::new(&bin);
        command.args(["serve", "--listen", listen]).args(&args);
        if let Some(wrap) = &wrap {
            command = wrap(&command);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ferry");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = tokio::sync::oneshot::channel();
        // Reads the address line, then keeps draining stdout so the child never blocks on it.
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on ").nth(1)
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(rest.trim().trim_end_matches('/').to_owned());
                }
            }
        });
        let base = match tokio::time::timeout(START, rx).await {
            Ok(Ok(base)) => base,
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("ferry did not start within {START:?}");
            }
        };
        Self {
            child,
            base,
            bin,
            args,
            wrap,
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL (no shutdown code runs), then the same command again on the same address, so
    /// upload URLs clients hold stay valid. Returns how long the new process took to listen.
    /// A wrapped command runs through its wrapper again (a [`crate::disk::TinyDisk`] comes
    /// back empty).
    pub async fn kill9_restart(&mut self) -> Duration {
        self.child.kill().expect("kill -9");
        self.child.wait().expect("reap");
        let listen = self.base.trim_start_matches("http://").to_owned();
        let started = std::time::Instant::now();
        let next = Self::launch(
            self.bin.clone(),
            std::mem::take(&mut self.args),
            self.wrap.take(),
            &listen,
        )
        .await;
        let took = started.elapsed();
        // The old child is reaped; dropping it with `self` would kill nothing.
        *self = next;
        took
    }

    /// SIGTERM, then waits up to `within` for the process to exit (a clean shutdown). True if
    /// it exited in time.
    pub fn terminate(&mut self, within: Duration) -> bool {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status();
        if !sent.is_ok_and(|s| s.success()) {
            return false;
        }
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// SIGKILL: no shutdown code runs.
    pub fn kill9(mut self) {
        self.child.kill().expect("kill -9");
        self.child.wait().expect("reap");
    }
}

impl Drop for FerryProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn collect<I, S>(args: I) -> Vec<OsString>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    args.into_iter().map(|a| a.as_ref().to_owned()).collect()
}
