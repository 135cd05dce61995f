//! A real `ferry serve` child process, for tests that need one (SIGKILL mid-request, several
//! instances on one Redis). It listens on `127.0.0.1:0` and the test reads the bound address from
//! the line the server prints, so no port is picked before the server binds it. Killed with
//! SIGKILL, by its own PID, when dropped.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long a server may take to print its address.
const START: Duration = Duration::from_secs(20);

/// A running `ferry serve`.
#[derive(Debug)]
pub struct FerryProcess {
    child: Child,
    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub base: String,
}

impl FerryProcess {
    /// Runs `bin serve --listen 127.0.0.1:0 ARGS...` and waits until it is listening.
    pub async fn start<I, S>(bin: &str, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut child = Command::new(bin)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
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
                panic!("ferry did not start within {START:?}");
            }
        };
        Self { child, base }
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
