//! Caps on what one client may hold, and on the disk all Assemblies hold together, so whoever
//! has the (public) Auth Key cannot fill the server: Assemblies in progress per client,
//! Assemblies created per client per window, and a total of bytes. With `--redis-url` all three
//! hold for the whole fleet ([`super::shared`]).
//!
//! A client is the Auth Key with the caller's address, found as the tus endpoint and the
//! companion find it ([`ferry_auth::client::client_ip`]: the TCP peer, or behind a trusted proxy
//! the address it saw; IPv6 callers count by their /64). Refusals are Transloadit's:
//! `RATE_LIMIT_REACHED` with `info.retryIn` and `Retry-After` (both clients retry on it), a full
//! disk `CANNOT_ACCEPT_NEW_ASSEMBLIES` for a new Assembly and `MAX_SIZE_EXCEEDED` (413) for a
//! file that does not fit.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::Duration;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::StatusCode;
use axum::http::request::Parts;
use jiff::{SignedDuration, Timestamp};

use super::shared::Refusal;
use crate::error::ApiError;
use crate::id::Id;
use crate::service::Service;

/// The caps and the expiry rules (`--assembly-max-*`, `--assembly-retention`, ...).
#[derive(Clone, Debug)]
pub struct Quotas {
    /// Assemblies one client may have uploading or executing at once (0: no cap).
    pub max_active_per_client: usize,
    /// Assemblies one client may create per `window` (0: no cap).
    pub max_per_window: u32,
    /// The window of `max_per_window`.
    pub window: Duration,
    /// Bytes all Assemblies together may hold on disk (`None`: no cap).
    pub max_disk: Option<u64>,
    /// How long an ended Assembly and its files are kept.
    pub retention: Duration,
    /// How long an Assembly may wait for its uploads without one arriving.
    pub upload_timeout: Duration,
    /// Reverse proxies whose `X-Forwarded-For` names the client.
    pub trusted_proxies: Vec<ipnet::IpNet>,
}

impl Quotas {
    /// The defaults: 100 in progress and 250 a minute per client (Transloadit allows an
    /// account 250 a minute), no disk cap, a day's retention (Transloadit keeps result files
    /// 24 h), 8 h for uploads (Transloadit's limit).
    pub const DEFAULT: Self = Self {
        max_active_per_client: 100,
        max_per_window: 250,
        window: Duration::from_secs(60),
        max_disk: None,
        retention: Duration::from_secs(24 * 3600),
        upload_timeout: Duration::from_secs(8 * 3600),
        trusted_proxies: Vec::new(),
    };
}

impl Default for Quotas {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The caller of a request: its address (the Auth Key is added once the params are read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller(pub IpAddr);

impl FromRequestParts<Service> for Caller {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, svc: &Service) -> Result<Self, Self::Rejection> {
        // Served without connection info (in-process), every caller is one client.
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map_or(IpAddr::from([0, 0, 0, 0]), |c| c.0.ip());
        let proxies = &svc.config().quotas.trusted_proxies;
        Ok(Self(ferry_auth::client::client_ip(
            peer,
            &parts.headers,
            proxies,
        )))
    }
}

impl Caller {
    /// The client key: `key@address`, an IPv6 address by its /64.
    pub fn client(&self, key: &str) -> String {
        let ip = match self.0 {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => {
                    let s = v6.segments();
                    IpAddr::from([s[0], s[1], s[2], s[3], 0, 0, 0, 0])
                }
            },
            v4 => v4,
        };
        format!("{key}@{ip}")
    }
}

/// Assemblies created per client in the current window.
#[derive(Debug, Default)]
pub struct Windows(Mutex<HashMap<String, (Timestamp, u32)>>);

/// Clients remembered before windows that have passed are dropped.
const WINDOWS_KEPT: usize = 10_000;

impl Windows {
    /// Counts one creation by `client` at `now`, or refuses it with the seconds until its
    /// window ends.
    fn take(&self, client: &str, now: Timestamp, max: u32, window: Duration) -> Result<(), u64> {
        let window = SignedDuration::try_from(window).unwrap_or(SignedDuration::MAX);
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= WINDOWS_KEPT {
            map.retain(|_, (start, _)| start.checked_add(window).is_ok_and(|end| end > now));
        }
        let slot = map.entry(client.to_owned()).or_insert((now, 0));
        let end = slot.0.checked_add(window).unwrap_or(Timestamp::MAX);
        if end <= now {
            *slot = (now, 0);
        }
        if slot.1 >= max {
            let left = end.duration_since(now).as_secs_f64().ceil();
            return Err((left as u64).max(1));
        }
        slot.1 += 1;
        Ok(())
    }
}

/// Whether `client` may create Assembly `id` now: its Assemblies in progress, its window, and
/// the disk. In a fleet the client's counts are the fleet's ([`super::shared`]); if Redis does
/// not answer, this instance's own counts apply meanwhile.
pub async fn admit(svc: &Service, client: &str, id: &Id) -> Result<(), ApiError> {
    let q = &svc.config().quotas;
    let upkeep = &svc.0.upkeep;
    let disk = match (&upkeep.shared, q.max_disk) {
        // A new Assembly reads the fleet's total afresh.
        (Some(shared), Some(_)) => match shared.total_bytes().await {
            Ok(total) => {
                upkeep.set_fleet_bytes(total);
                total + upkeep.index.pending()
            }
            Err(_) => upkeep.disk_bytes(),
        },
        _ => upkeep.disk_bytes(),
    };
    if let Some(max) = q.max_disk.filter(|m| disk >= *m) {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "CANNOT_ACCEPT_NEW_ASSEMBLIES",
            format!(
                "The server's storage for Assemblies is full ({max} bytes); try again once older Assemblies have expired."
            ),
        )
        .retry_in(60));
    }
    if let Some(shared) = &upkeep.shared {
        match shared.admit(client, id, q).await {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(Refusal::Active(active))) => return Err(too_many_active(active)),
            Ok(Err(Refusal::Window(ms))) => {
                return Err(window_full(q, ms.div_ceil(1000).max(1)));
            }
            Err(e) => tracing::warn!(
                error = %e,
                "cannot count this client's assemblies across the fleet; this instance's own counts apply"
            ),
        }
    }
    let active = upkeep.index.active(client);
    if q.max_active_per_client > 0 && active >= q.max_active_per_client {
        return Err(too_many_active(active));
    }
    if q.max_per_window > 0 {
        let now = svc.0.upkeep.clock.now();
        upkeep
            .windows
            .take(client, now, q.max_per_window, q.window)
            .map_err(|left| window_full(q, left))?;
    }
    Ok(())
}

fn too_many_active(active: usize) -> ApiError {
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "RATE_LIMIT_REACHED",
        format!(
            "This client has {active} Assemblies in progress, the most allowed; wait for one to finish."
        ),
    )
    .retry_in(5)
}

fn window_full(q: &Quotas, left: u64) -> ApiError {
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "RATE_LIMIT_REACHED",
        format!(
            "This client created {} Assemblies in the last {} s, the most allowed; try again in {left} s.",
            q.max_per_window,
            q.window.as_secs()
        ),
    )
    .retry_in(left)
}

/// The refusal of a file that does not fit under `--assembly-max-disk`.
pub fn disk_full(max: u64) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "MAX_SIZE_EXCEEDED",
        format!(
            "The server's storage for Assemblies is full ({max} bytes); this file does not fit."
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_counts_until_it_ends_then_starts_again() {
        let w = Windows::default();
        let t0 = Timestamp::now();
        let minute = Duration::from_secs(60);
        assert_eq!(w.take("k@1.2.3.4", t0, 2, minute), Ok(()));
        assert_eq!(w.take("k@1.2.3.4", t0, 2, minute), Ok(()));
        let later = t0 + SignedDuration::from_secs(20);
        assert_eq!(w.take("k@1.2.3.4", later, 2, minute), Err(40));
        assert_eq!(w.take("k@5.6.7.8", later, 2, minute), Ok(()), "per client");
        let next = t0 + SignedDuration::from_secs(60);
        assert_eq!(w.take("k@1.2.3.4", next, 2, minute), Ok(()));
    }

    #[test]
    fn ipv6_callers_count_by_their_64() {
        let a = Caller("2001:db8:1:2:aaaa::1".parse().expect("ip")).client("k");
        let b = Caller("2001:db8:1:2:bbbb::9".parse().expect("ip")).client("k");
        let c = Caller("::ffff:192.0.2.7".parse().expect("ip")).client("k");
        assert_eq!(a, b);
        assert_eq!(a, "k@2001:db8:1:2::");
        assert_eq!(c, "k@192.0.2.7");
    }
}
