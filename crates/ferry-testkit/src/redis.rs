//! A real `redis-server` on loopback for tests: a free port, no persistence, a temporary working
//! directory, started and stopped by PID (never by name: other test runs use the same binary).
//! Tests that play Redis faults restart it on the same port and send admin commands (`CLIENT
//! KILL`, `CLIENT PAUSE`) through `redis-cli`, so this helper needs no Redis client library.

use std::io::{Read, Write};
use std::net::{TcpListener as StdListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// How long a fresh server may take to answer `PING`.
const READY_WITHIN: Duration = Duration::from_secs(10);

/// A running `redis-server` on `127.0.0.1`; killed (by PID) on drop.
#[derive(Debug)]
pub struct RedisServer {
    /// The TCP port it listens on.
    pub port: u16,
    child: Option<Child>,
    dir: TempDir,
}

/// The `redis-server` binary: `REDIS_SERVER_BIN`, else the one on `PATH`.
pub fn redis_server_bin() -> PathBuf {
    std::env::var_os("REDIS_SERVER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("redis-server"))
}

fn free_port() -> u16 {
    let listener = StdListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("local address").port()
}

impl RedisServer {
    /// Starts a server on a free port; panics (it is a test helper) when it does not come up.
    pub fn start() -> Self {
        let mut server = Self {
            port: free_port(),
            child: None,
            dir: tempfile::tempdir().expect("temp dir"),
        };
        server.spawn();
        server
    }

    /// `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The server's process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the server (SIGKILL by PID) and waits for it: every key is gone, every client is cut.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port, empty (it never persists).
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    /// Runs `redis-cli -p PORT ARGS...` and returns its standard output (trimmed).
    pub fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .arg("-p")
            .arg(self.port.to_string())
            .args(args)
            .output()
            .expect("run redis-cli");
        assert!(out.status.success(), "redis-cli {args:?} failed");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    fn spawn(&mut self) {
        let log = std::fs::File::create(self.dir.path().join("redis.log")).expect("log file");
        let child = Command::new(redis_server_bin())
            .args(["--bind", "127.0.0.1", "--port"])
            .arg(self.port.to_string())
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(self.dir.path())
            .stdout(log)
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server (is it installed?)");
        self.child = Some(child);
        self.wait_ready();
    }

    fn wait_ready(&mut self) {
        let started = Instant::now();
        while started.elapsed() < READY_WITHIN {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                panic!(
                    "redis-server exited at start ({status}); port {}",
                    self.port
                );
            }
            if ping(self.port) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server did not answer PING on port {}", self.port);
    }
}

/// One raw `PING` over RESP: true when the server answers `+PONG`.
fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    if stream.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 7];
    stream.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}
