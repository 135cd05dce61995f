//! Shared state of the companion's routes: config, the two egress clients, the allowlist, the
//! transfer registry and the metrics.

use std::sync::Arc;

use crate::allowlist::Allowlist;
use crate::config::CompanionConfig;
use crate::egress::{Egress, IpPolicy, Resolver, SystemResolver};
use crate::error::CompanionError;
use crate::metrics::Metrics;
use crate::oauth::auth_socket::SocketLimits;
use crate::oauth::handoff::AuthHandoff;
use crate::oauth::routes::UsedNonces;
use crate::providers::Providers;
use crate::providers::google_picker::GooglePicker;
use crate::registry::Registry;

/// Cheap to clone; everything lives behind one `Arc`.
#[derive(Clone, Debug)]
pub struct AppState {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: CompanionConfig,
    sources: Egress,
    destinations: Egress,
    allowlist: Allowlist,
    metrics: Metrics,
    providers: Providers,
    google_picker: Option<Arc<GooglePicker>>,
    handoff: Arc<dyn AuthHandoff>,
    used_nonces: UsedNonces,
    auth_sockets: Arc<SocketLimits>,
    closing: tokio_util::sync::CancellationToken,
}

impl AppState {
    /// State for `config`, resolving names with the system resolver.
    pub fn new(config: CompanionConfig) -> Result<Self, CompanionError> {
        Self::with_resolver(config, Arc::new(SystemResolver))
    }

    /// State for `config` with a custom resolver (tests use a fixed table).
    pub fn with_resolver(
        config: CompanionConfig,
        resolver: Arc<dyn Resolver>,
    ) -> Result<Self, CompanionError> {
        let handoff = config.handoff.clone();
        Self::with_parts(config, resolver, handoff)
    }

    /// State for `config` with a custom resolver and login hand-off (a shared one lets a
    /// login's popup and socket reach different instances).
    pub fn with_parts(
        config: CompanionConfig,
        resolver: Arc<dyn Resolver>,
        handoff: Arc<dyn AuthHandoff>,
    ) -> Result<Self, CompanionError> {
        let policy = IpPolicy {
            allow_local: config.allow_local_urls,
            exempt: config.exempt_ips.clone(),
        };
        // The stall watchdog reports a silent peer; the read timeout is only a backstop behind it.
        let idle = config.stall_timeout * 2;
        let sources = Egress::new(resolver.clone(), policy, true, idle)?;
        // Destinations passed the operator's allowlist, which may name local services (the
        // server's own /files/ by default), so they are not held to the local-address ban.
        let dest_policy = IpPolicy {
            allow_local: true,
            exempt: Vec::new(),
        };
        let destinations = Egress::new(resolver.clone(), dest_policy.clone(), false, idle)?;
        let providers = providers(
            &config,
            resolver.clone(),
            dest_policy.clone(),
            &sources,
            idle,
        )?;
        let google_picker = google_picker(&config, resolver, dest_policy, &sources, idle)?;
        let allowlist = Allowlist::new(&config.upload_urls, &config.own_origins)?;
        let auth_sockets = Arc::new(SocketLimits::new(
            config.providers.auth_sockets_per_client,
            config.providers.auth_sockets,
            config.trusted_proxies.clone(),
        ));
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                sources,
                destinations,
                allowlist,
                metrics: Metrics::default(),
                providers,
                google_picker,
                handoff,
                used_nonces: UsedNonces::default(),
                auth_sockets,
                closing: tokio_util::sync::CancellationToken::new(),
            }),
        })
    }

    pub fn config(&self) -> &CompanionConfig {
        &self.inner.config
    }
    /// The client for sources (local addresses refused unless allowed).
    pub fn sources(&self) -> &Egress {
        &self.inner.sources
    }
    /// The client for allowlisted destinations.
    pub fn destinations(&self) -> &Egress {
        &self.inner.destinations
    }
    pub fn allowlist(&self) -> &Allowlist {
        &self.inner.allowlist
    }
    /// Where transfers live (this process, or the fleet's shared registry).
    pub fn registry(&self) -> &Arc<dyn Registry> {
        &self.inner.config.registry
    }
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }
    /// The enabled cloud providers.
    pub fn providers(&self) -> &Providers {
        &self.inner.providers
    }
    /// The Google Picker imports, when `/google-picker/get` is enabled.
    pub fn google_picker(&self) -> Option<&Arc<GooglePicker>> {
        self.inner.google_picker.as_ref()
    }
    /// Login outcomes waiting for their auth socket.
    pub fn handoff(&self) -> &Arc<dyn AuthHandoff> {
        &self.inner.handoff
    }
    /// The caps on open auth sockets (and how many are open).
    pub fn auth_sockets(&self) -> &Arc<SocketLimits> {
        &self.inner.auth_sockets
    }
    /// Cancelled at shutdown: waits that only a page would end (auth sockets) end with it.
    pub fn closing(&self) -> &tokio_util::sync::CancellationToken {
        &self.inner.closing
    }
    /// The server is shutting down: auth sockets close with "going away" (rather than being
    /// cut when the runtime stops); resolves when they are gone or after `within`.
    pub async fn close(&self, within: std::time::Duration) {
        self.inner.closing.cancel();
        let _ = tokio::time::timeout(within, self.inner.auth_sockets.all_closed()).await;
    }
    /// Login nonces already used on this instance.
    pub fn used_nonces(&self) -> &UsedNonces {
        &self.inner.used_nonces
    }
}

/// The enabled providers. Their API endpoints are the operator's configuration (so, like
/// destinations, not held to the local-address ban, and no redirects followed); URLs the
/// providers return go through the sources client. A provider without `--secret` is refused.
fn providers(
    config: &CompanionConfig,
    resolver: Arc<dyn Resolver>,
    policy: IpPolicy,
    sources: &Egress,
    idle: std::time::Duration,
) -> Result<Providers, CompanionError> {
    if !config.providers.any_enabled() {
        return Ok(Providers::default());
    }
    if config.secret.as_ref().is_none_or(|s| s.expose().is_empty()) {
        return Err(CompanionError::Config(format!(
            "cloud providers are enabled ({}) but --secret (FERRY_SECRET) is not set: it seals provider tokens and login state",
            config.providers.enabled_ids()
        )));
    }
    let api = Egress::new(resolver, policy, false, idle)?;
    Providers::from_config(&config.providers, &api, sources)
}

/// The Google Picker imports, when enabled. Their endpoints are configuration (like the
/// providers' API endpoints); Google's media hosts go through `sources`. The picker's access
/// tokens are sealed in transfer specs, so `--secret` is required.
fn google_picker(
    config: &CompanionConfig,
    resolver: Arc<dyn Resolver>,
    policy: IpPolicy,
    sources: &Egress,
    idle: std::time::Duration,
) -> Result<Option<Arc<GooglePicker>>, CompanionError> {
    let Some(picker) = &config.google_picker else {
        return Ok(None);
    };
    if config.secret.as_ref().is_none_or(|s| s.expose().is_empty()) {
        return Err(CompanionError::Config(
            "the Google Picker route is enabled but --secret (FERRY_SECRET) is not set: it seals the pickers' access tokens in transfers".into(),
        ));
    }
    let api = Egress::new(resolver, policy, false, idle)?;
    let api =
        crate::providers::api::Api::new(api.client().clone(), config.providers.rate_limits.clone());
    Ok(Some(Arc::new(GooglePicker::new(picker, api, sources))))
}
