//! A cap on how many uploads one client (by IP address) writes at once, so one client cannot
//! take every connection and lock of the server.
//!
//! The client is [`ferry_auth::client::client_ip`]: the TCP peer, or behind a trusted proxy the
//! address that proxy saw (the companion's auth sockets count clients the same way).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::extract::ConnectInfo;
use axum::http::{Extensions, HeaderMap};
use ferry_auth::client::client_ip;
use ipnet::IpNet;

use crate::protocol::TusError;

/// Counts of uploads in flight per client address.
#[derive(Debug, Default)]
pub(super) struct ClientSlots {
    cap: usize,
    trusted_proxies: Vec<IpNet>,
    in_flight: Mutex<HashMap<IpAddr, usize>>,
}

/// One write in flight; gives its slot back when dropped.
#[derive(Debug)]
pub(super) struct SlotGuard {
    slots: Arc<ClientSlots>,
    ip: IpAddr,
}

impl ClientSlots {
    /// `cap` 0 means no cap.
    pub(super) fn new(cap: usize, trusted_proxies: Vec<IpNet>) -> Self {
        Self {
            cap,
            trusted_proxies,
            in_flight: Mutex::default(),
        }
    }

    /// Takes a slot for the client of this request, or 429 when it already has `cap`. Requests
    /// served without connection info (in-process tests) are not counted.
    pub(super) fn take(
        self: &Arc<Self>,
        extensions: &Extensions,
        headers: &HeaderMap,
    ) -> Result<Option<SlotGuard>, TusError> {
        let Some(ConnectInfo(addr)) = extensions.get::<ConnectInfo<SocketAddr>>() else {
            return Ok(None);
        };
        if self.cap == 0 {
            return Ok(None);
        }
        let ip = client_ip(addr.ip(), headers, &self.trusted_proxies);
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        let count = in_flight.entry(ip).or_default();
        if *count >= self.cap {
            return Err(TusError::TooManyUploads);
        }
        *count += 1;
        Ok(Some(SlotGuard {
            slots: self.clone(),
            ip,
        }))
    }
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        let mut in_flight = self
            .slots
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(count) = in_flight.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                in_flight.remove(&self.ip);
            }
        }
    }
}
