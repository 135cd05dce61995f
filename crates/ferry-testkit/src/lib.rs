//! Helpers for Ferry's integration tests: a router served on `127.0.0.1:0`, random fixtures and
//! digests.
//!
//! # Layout
//!
//! [`TestServer`], [`random_bytes`], [`sha256_hex`] here; [`origin`]: misbehaving origin
//! servers, a connection-counting sink and a fail-then-recover wrapper; [`garage`]: Garage (S3);
//! [`redis`]: `redis-server`; [`hooks`]: a recording hook receiver ([`hooks::HookReceiver`]);
//! [`fake`]: fake Google (OAuth + Drive) and Instagram servers for the provider tests;
//! [`process`]: a real `ferry serve` child process ([`process::FerryProcess`]).
//!
//! For the fault suite: [`proxy`]: a TCP proxy that passes, cuts, stalls or trickles
//! ([`proxy::FaultProxy`]); [`disk`]: a tiny tmpfs in a private mount namespace, a full disk
//! for one child ([`disk::TinyDisk`]); kill -9 and restart of `ferry`
//! ([`process::FerryProcess::kill9_restart`]), Garage ([`garage::Garage::restart`]) and Redis
//! ([`redis::RedisServer::restart`]).

pub mod disk;
pub mod fake;
pub mod garage;
pub mod hooks;
pub mod origin;
pub mod process;
pub mod proxy;
pub mod redis;

use std::net::SocketAddr;

use axum::Router;
use rand::RngCore;
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// A router served on a free loopback port; stopped when dropped.
#[derive(Debug)]
pub struct TestServer {
    pub addr: SocketAddr,
    task: JoinHandle<()>,
}

impl TestServer {
    /// Serves `router` on `127.0.0.1:0`.
    pub async fn start(router: Router) -> Self {
        Self::start_on("127.0.0.1:0", router).await
    }

    /// Serves `router` on `addr` (e.g. `127.0.0.2:0`).
    pub async fn start_on(addr: &str, router: Router) -> Self {
        let listener = TcpListener::bind(addr).await.expect("bind a loopback port");
        Self::serve(listener, router)
    }

    /// Serves `router` on a listener bound already (when the router must know its address).
    pub fn serve(listener: TcpListener, router: Router) -> Self {
        let addr = listener.local_addr().expect("local address");
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.expect("test server");
        });
        Self { addr, task }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `len` random bytes.
pub fn random_bytes(len: usize) -> Vec<u8> {
    let mut bytes = vec![0; len];
    rand::rng().fill_bytes(&mut bytes);
    bytes
}

/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
