//! Name resolution for the egress client: a [`Resolver`] trait (the system's resolver in
//! production, a fixed table in tests) and the adapter that plugs it into reqwest while
//! dropping every address the [`IpPolicy`] refuses, so a connection only ever goes to a vetted
//! address (no second lookup between check and connect).

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::policy::IpPolicy;

/// A boxed future of resolved addresses.
pub type Lookup = Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>>;

/// Turns a host name into addresses.
pub trait Resolver: Send + Sync + 'static {
    /// All addresses of `host`.
    fn lookup(&self, host: &str) -> Lookup;
}

/// The operating system's resolver (`getaddrinfo` on a blocking thread).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn lookup(&self, host: &str) -> Lookup {
        let host = host.to_owned();
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// A fixed name table, for tests: unknown names fail to resolve.
#[derive(Debug, Default, Clone)]
pub struct StaticResolver {
    table: HashMap<String, Vec<IpAddr>>,
}

impl StaticResolver {
    /// Adds `host` resolving to `ips`.
    pub fn with(mut self, host: &str, ips: &[IpAddr]) -> Self {
        self.table.insert(host.to_ascii_lowercase(), ips.to_vec());
        self
    }
}

impl Resolver for StaticResolver {
    fn lookup(&self, host: &str) -> Lookup {
        let key = host.trim_end_matches('.').to_ascii_lowercase();
        let found = self.table.get(&key).cloned();
        Box::pin(async move {
            found.ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "unknown host"))
        })
    }
}

/// The reqwest side: resolves with a [`Resolver`], keeps only allowed addresses.
pub(super) struct Vetting {
    pub resolver: Arc<dyn Resolver>,
    pub policy: IpPolicy,
}

impl Resolve for Vetting {
    fn resolve(&self, name: Name) -> Resolving {
        let lookup = self.resolver.lookup(name.as_str());
        let policy = self.policy.clone();
        Box::pin(async move {
            let ips = lookup.await?;
            let allowed: Vec<SocketAddr> = ips
                .into_iter()
                .filter(|ip| policy.allows(*ip))
                .map(|ip| SocketAddr::new(ip, 0))
                .collect();
            if allowed.is_empty() {
                return Err(Box::new(Refused) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// Every address of the name is refused by the policy.
#[derive(Debug, thiserror::Error)]
#[error("the host resolves only to addresses that are not allowed")]
pub struct Refused;
