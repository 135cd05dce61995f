//! A TCP fault proxy for the fault suite: it listens on `127.0.0.1:0`, forwards every connection
//! to a target, and misbehaves on demand. The mode is switched at run time and applies at once
//! to connections already open as well as new ones:
//!
//! - [`Mode::Pass`]: bytes flow both ways;
//! - [`Mode::Cut`]: every open connection is reset, and new ones are reset on arrival (a peer
//!   that went away or cannot be reached);
//! - [`Mode::Stall`]: nothing is forwarded any more, sockets stay open (a peer that hangs);
//!   back to `Pass`, the held bytes flow again;
//! - [`Mode::Trickle`]: at most `bytes` per `every`, each way, per connection (a slow link).
//!
//! [`FaultProxy::stall_after`] passes a given number of client bytes more, then stalls: a peer
//! that hangs in the middle of a large request while the small ones before it went through.
//!
//! Each direction of a connection is a small pump that reads only while its mode lets it, so a
//! stall really stops reading and the sender's buffers fill as they would in front of a hung
//! peer.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{ReadHalf, WriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

/// What the proxy does with the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Pass,
    Cut,
    Stall,
    Trickle { bytes: usize, every: Duration },
}

/// A running proxy; stops (closing every connection) when dropped.
#[derive(Debug)]
pub struct FaultProxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    stats: Arc<Stats>,
    task: JoinHandle<()>,
}

#[derive(Debug)]
struct Stats {
    mode: watch::Sender<Mode>,
    accepted: AtomicUsize,
    /// Bytes forwarded from clients to the target.
    upstream: AtomicU64,
    /// Bytes forwarded from the target to clients.
    downstream: AtomicU64,
    /// Client bytes still passed before the proxy stalls ([`NO_BUDGET`]: no such limit).
    budget: AtomicU64,
}

const NO_BUDGET: u64 = u64::MAX;

impl FaultProxy {
    /// Listens on `127.0.0.1:0` and forwards to `target` in [`Mode::Pass`].
    pub async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy address");
        let (mode, watch) = watch::channel(Mode::Pass);
        let stats = Arc::new(Stats {
            mode,
            accepted: AtomicUsize::new(0),
            upstream: AtomicU64::new(0),
            downstream: AtomicU64::new(0),
            budget: AtomicU64::new(NO_BUDGET),
        });
        let task = tokio::spawn(accept(listener, target, watch, stats.clone()));
        Self { addr, stats, task }
    }

    /// Forwards to the `host:port` of an `http://` URL (e.g. Garage's endpoint).
    pub async fn in_front_of(url: &str) -> Self {
        let url = url::Url::parse(url).expect("target url");
        let target = url
            .socket_addrs(|| None)
            .expect("target address")
            .into_iter()
            .next()
            .expect("one target address");
        Self::start(target).await
    }

    /// `http://127.0.0.1:PORT`: the target's URL through the proxy.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Switches every connection, open or to come, to `mode`.
    pub fn set_mode(&self, mode: Mode) {
        self.stats.budget.store(NO_BUDGET, Ordering::SeqCst);
        self.stats.mode.send_replace(mode);
    }

    /// Passes `bytes` more from clients to the target (over all connections), then switches to
    /// [`Mode::Stall`].
    pub fn stall_after(&self, bytes: u64) {
        self.stats.budget.store(bytes, Ordering::SeqCst);
        self.stats.mode.send_replace(Mode::Pass);
    }

    /// The mode in force.
    pub fn mode(&self) -> Mode {
        *self.stats.mode.borrow()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.stats.accepted.load(Ordering::SeqCst)
    }

    /// Bytes forwarded from clients to the target so far.
    pub fn bytes_upstream(&self) -> u64 {
        self.stats.upstream.load(Ordering::SeqCst)
    }

    /// Bytes forwarded from the target to clients so far.
    pub fn bytes_downstream(&self) -> u64 {
        self.stats.downstream.load(Ordering::SeqCst)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        // Aborting the accept loop drops its JoinSet, which aborts every connection.
        self.task.abort();
    }
}

async fn accept(
    listener: TcpListener,
    target: SocketAddr,
    mode: watch::Receiver<Mode>,
    stats: Arc<Stats>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((client, _)) = accepted else { continue };
                stats.accepted.fetch_add(1, Ordering::SeqCst);
                connections.spawn(connection(client, target, mode.clone(), stats.clone()));
            }
            // Reaps finished connections so the set does not grow.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// One client: waits while stalled, then connects to the target and pumps both ways until
/// either side closes or the mode turns to [`Mode::Cut`], which resets both sockets.
async fn connection(
    mut client: TcpStream,
    target: SocketAddr,
    mut mode: watch::Receiver<Mode>,
    stats: Arc<Stats>,
) {
    let _ = client.set_nodelay(true);
    if wait_while_stalled(&mut mode).await == Mode::Cut {
        reset(client);
        return;
    }
    let Ok(mut server) = TcpStream::connect(target).await else {
        reset(client);
        return;
    };
    let _ = server.set_nodelay(true);
    let cut = {
        let (mut client_read, mut client_write) = client.split();
        let (mut server_read, mut server_write) = server.split();
        let up = pump(
            &mut client_read,
            &mut server_write,
            mode.clone(),
            &stats.upstream,
            Some(&stats),
        );
        let down = pump(
            &mut server_read,
            &mut client_write,
            mode,
            &stats.downstream,
            None,
        );
        tokio::try_join!(up, down).is_err()
    };
    if cut {
        reset(client);
        reset(server);
    }
}

/// A pump stopped by [`Mode::Cut`].
struct Cut;

/// Closes `stream` with a reset (RST) rather than an orderly FIN, as a crashed peer would.
fn reset(stream: TcpStream) {
    let _ = stream.set_zero_linger();
    drop(stream);
}

/// Waits until the mode is not [`Mode::Stall`]; returns it.
async fn wait_while_stalled(mode: &mut watch::Receiver<Mode>) -> Mode {
    loop {
        let now = *mode.borrow_and_update();
        if now != Mode::Stall {
            return now;
        }
        if mode.changed().await.is_err() {
            return Mode::Cut;
        }
    }
}

/// Copies `from` to `to` as the mode allows. Ends `Ok` when `from` closes (the close is passed
/// on) or `to` fails, `Err` when cut: the caller resets the connection. The client-to-target
/// pump also spends the [`FaultProxy::stall_after`] budget of `budget`.
async fn pump(
    from: &mut ReadHalf<'_>,
    to: &mut WriteHalf<'_>,
    mut mode: watch::Receiver<Mode>,
    count: &AtomicU64,
    budget: Option<&Stats>,
) -> Result<(), Cut> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let (mut want, pause) = match wait_while_stalled(&mut mode).await {
            Mode::Cut => return Err(Cut),
            Mode::Trickle { bytes, every } => (bytes.clamp(1, buf.len()), Some(every)),
            Mode::Pass | Mode::Stall => (buf.len(), None),
        };
        if let Some(stats) = budget {
            match stats.budget.load(Ordering::SeqCst) {
                NO_BUDGET => {}
                0 => {
                    stats.budget.store(NO_BUDGET, Ordering::SeqCst);
                    stats.mode.send_replace(Mode::Stall);
                    continue;
                }
                left => want = want.min(usize::try_from(left).unwrap_or(usize::MAX)),
            }
        }
        let read = tokio::select! {
            read = from.read(&mut buf[..want]) => read,
            // A mode change while waiting for bytes takes effect now (a cut, a stall).
            _ = mode.changed() => continue,
        };
        let n = match read {
            Ok(0) | Err(_) => {
                let _ = to.shutdown().await;
                return Ok(());
            }
            Ok(n) => n,
        };
        let written = tokio::select! {
            written = to.write_all(&buf[..n]) => written,
            _ = cut(&mut mode) => return Err(Cut),
        };
        if written.is_err() {
            return Ok(());
        }
        count.fetch_add(n as u64, Ordering::SeqCst);
        if let Some(stats) = budget {
            let spend = |left: u64| (left != NO_BUDGET).then(|| left.saturating_sub(n as u64));
            let _ = stats
                .budget
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, spend);
        }
        if let Some(pause) = pause {
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = cut(&mut mode) => return Err(Cut),
            }
        }
    }
}

/// Resolves when the mode turns to [`Mode::Cut`].
async fn cut(mode: &mut watch::Receiver<Mode>) {
    loop {
        if *mode.borrow_and_update() == Mode::Cut || mode.changed().await.is_err() {
            return;
        }
    }
}
