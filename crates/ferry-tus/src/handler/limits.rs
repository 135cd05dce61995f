//! A cap on how many uploads one client (by IP address) writes at once, so one client cannot
//! take every connection and lock of the server.
//!
//! The client is the TCP peer, unless the peer is one of the configured trusted proxies: then
//! it is the nearest address in `X-Forwarded-For` that is not itself a trusted proxy. Behind a
//! reverse proxy every connection comes from the proxy, so without this all clients would share
//! one count; from anyone else the header is ignored, so a client cannot choose its address.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::extract::ConnectInfo;
use axum::http::{Extensions, HeaderMap};
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

/// The client behind `peer`: the peer itself, or, when it is a trusted proxy, the nearest
/// `X-Forwarded-For` entry that is not a trusted proxy. Each proxy appends the address it saw,
/// so the list is read from the right; an entry that is not an address stops the walk at the
/// last good one (a proxy then counts for the clients behind it).
fn client_ip(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    let mut client = peer;
    if !is_trusted(&peer) {
        return client;
    }
    for value in headers.get_all("x-forwarded-for").iter().rev() {
        let Ok(list) = value.to_str() else {
            return client;
        };
        for entry in list.rsplit(',') {
            let Ok(ip) = entry.trim().parse::<IpAddr>() else {
                return client;
            };
            client = ip;
            if !is_trusted(&ip) {
                return client;
            }
        }
    }
    client
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

#[cfg(test)]
mod tests {
    use super::*;

    fn xff(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append("x-forwarded-for", v.parse().expect("header value"));
        }
        headers
    }

    #[test]
    fn the_client_is_found_behind_trusted_proxies_only() {
        let proxies: Vec<IpNet> = ["10.0.0.0/8", "127.0.0.1/32"]
            .iter()
            .map(|n| n.parse().expect("net"))
            .collect();
        let ip = |s: &str| s.parse::<IpAddr>().expect("ip");
        let cases = [
            // (peer, X-Forwarded-For values, client)
            ("203.0.113.9", &["198.51.100.1"][..], "203.0.113.9"),
            ("127.0.0.1", &[][..], "127.0.0.1"),
            ("127.0.0.1", &["198.51.100.1"][..], "198.51.100.1"),
            // A client's own forged entry sits left of what the proxy saw.
            ("127.0.0.1", &["1.2.3.4, 198.51.100.1"][..], "198.51.100.1"),
            ("127.0.0.1", &["198.51.100.1, 10.1.2.3"][..], "198.51.100.1"),
            (
                "127.0.0.1",
                &["198.51.100.1", "10.1.2.3"][..],
                "198.51.100.1",
            ),
            ("127.0.0.1", &["2001:db8::1"][..], "2001:db8::1"),
            ("127.0.0.1", &["garbage, 10.1.2.3"][..], "10.1.2.3"),
            ("127.0.0.1", &["10.1.2.3, 10.4.5.6"][..], "10.1.2.3"),
        ];
        for (peer, values, want) in cases {
            assert_eq!(
                client_ip(ip(peer), &xff(values), &proxies),
                ip(want),
                "{peer} {values:?}"
            );
        }
        assert_eq!(
            client_ip(ip("127.0.0.1"), &xff(&["198.51.100.1"]), &[]),
            ip("127.0.0.1"),
            "no trusted proxies: the header is ignored"
        );
    }
}
