//! Who the client of a request is, for per-client caps (tus uploads in flight, the companion's
//! auth sockets): the TCP peer, unless the peer is one of the configured trusted proxies; then
//! the nearest address in `X-Forwarded-For` that is not itself a trusted proxy. Behind a
//! reverse proxy every connection comes from the proxy, so without this all clients would share
//! one count; from anyone else the header is ignored, so a client cannot choose its address.

use std::net::IpAddr;

use axum::http::HeaderMap;
use ipnet::IpNet;

/// The client behind `peer`: the peer itself, or, when it is a trusted proxy, the nearest
/// `X-Forwarded-For` entry that is not a trusted proxy. Each proxy appends the address it saw,
/// so the list is read from the right; an entry that is not an address stops the walk at the
/// last good one (a proxy then counts for the clients behind it).
pub fn client_ip(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
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
