//! Which IP addresses outbound requests may reach. Everything that is not plainly a public
//! unicast address is refused, including the IPv6 forms that embed an IPv4 address
//! (mapped, compatible, NAT64, 6to4), which are judged by the address they embed.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The address rules of one egress client.
#[derive(Clone, Debug, Default)]
pub struct IpPolicy {
    /// Allow every address (`--allow-local-urls`).
    pub allow_local: bool,
    /// Addresses allowed even though they are local (tests, trusted infrastructure).
    pub exempt: Vec<IpAddr>,
}

impl IpPolicy {
    /// Whether a connection to `ip` is allowed.
    pub fn allows(&self, ip: IpAddr) -> bool {
        self.allow_local || self.exempt.contains(&ip) || is_public(ip)
    }
}

/// Whether `ip` is a public unicast address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let special = ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_documentation()
        || a == 0 // "this network"
        || (a == 100 && (64..128).contains(&b)) // CGNAT 100.64.0.0/10
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240; // reserved
    !special
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let seg = ip.segments();
    if let Some(v4) = embedded_v4(ip) {
        return is_public_v4(v4);
    }
    // Only global unicast 2000::/3 can be public.
    if seg[0] & 0xe000 != 0x2000 {
        return false;
    }
    // 2001:db8::/32 documentation; 2001::/23 IETF assignments (incl. Teredo 2001::/32);
    // 3fff::/20 documentation (RFC 9637).
    let ietf = seg[0] == 0x2001 && (seg[1] == 0x0db8 || seg[1] < 0x0200);
    let doc = seg[0] == 0x3fff && seg[1] < 0x1000;
    !(ietf || doc)
}

/// The IPv4 address embedded in an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 address.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let seg = ip.segments();
    let o = ip.octets();
    let tail = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    if seg[..5] == [0; 5] && (seg[5] == 0xffff || seg[5] == 0) {
        // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, includes :: and ::1 as 0.0.0.x)
        return Some(tail);
    }
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail); // NAT64 well-known prefix 64:ff9b::/96
    }
    if seg[0] == 0x64 && seg[1] == 0xff9b && seg[2] == 1 {
        return Some(Ipv4Addr::UNSPECIFIED); // local-use NAT64 64:ff9b:1::/48: never public
    }
    if seg[0] == 0x2002 {
        return Some(Ipv4Addr::new(o[2], o[3], o[4], o[5])); // 6to4 2002:aabb:ccdd::/48
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_addresses() {
        let cases: &[(&str, bool)] = &[
            ("8.8.8.8", true),
            ("1.1.1.1", true),
            ("127.0.0.1", false),
            ("127.1.2.3", false),
            ("10.0.0.1", false),
            ("172.16.5.4", false),
            ("192.168.1.1", false),
            ("169.254.169.254", false),
            ("100.64.0.1", false),
            ("100.127.255.255", false),
            ("100.128.0.1", true),
            ("0.0.0.0", false),
            ("0.1.2.3", false),
            ("224.0.0.1", false),
            ("255.255.255.255", false),
            ("240.0.0.1", false),
            ("2606:4700::1111", true),
            ("::1", false),
            ("::", false),
            ("::ffff:127.0.0.1", false),
            ("::ffff:8.8.8.8", true),
            ("::127.0.0.1", false),
            ("64:ff9b::a00:1", false),
            ("64:ff9b::808:808", true),
            ("64:ff9b:1::808:808", false),
            ("2002:7f00:1::", false),
            ("2002:808:808::", true),
            ("fe80::1", false),
            ("fc00::1", false),
            ("fd12:3456::1", false),
            ("ff02::1", false),
            ("2001:db8::1", false),
            ("2001::1", false),
        ];
        for (ip, public) in cases {
            let parsed: IpAddr = ip.parse().expect("test address");
            assert_eq!(is_public(parsed), *public, "{ip}");
        }
    }
}
