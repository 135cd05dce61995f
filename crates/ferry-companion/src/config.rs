//! The companion's settings, filled in by the binary from flags and environment.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use ferry_hooks::{Hooks, NoHooks};

/// Settings of the companion.
#[derive(Clone, Debug)]
pub struct CompanionConfig {
    /// Allow sources and destinations on loopback, private, link-local and similar addresses.
    pub allow_local_urls: bool,
    /// Allowed destinations: origins (`https://host:port`) or origin + path prefix. Empty: only
    /// the server's own tus endpoint and form endpoint under [`CompanionConfig::own_origins`].
    pub upload_urls: Vec<String>,
    /// The server's own origins (`http://host:port`), whose `/files/` and `/upload` are allowed
    /// destinations by default, even on a local address.
    pub own_origins: Vec<String>,
    /// Browser origins allowed by CORS; `*` (or `true`) allows any.
    pub cors_origins: Vec<String>,
    /// Largest file a transfer may move, in bytes.
    pub max_file_size: Option<u64>,
    /// How long a job waits for its websocket before it is dropped.
    pub socket_wait: Duration,
    /// A transfer that moves no byte for this long fails as stalled.
    pub stall_timeout: Duration,
    /// How long a finished job's last frame stays available to a reconnecting socket.
    pub keep_finished: Duration,
    /// Secret shared by all instances: seals cloud-provider tokens and login state (Companion's
    /// format); required when a provider is enabled. Never logged.
    pub secret: Option<ferry_auth::Secret>,
    /// Bytes per tus PATCH request.
    pub tus_chunk_size: u64,
    /// Addresses exempt from the local-address ban (tests and trusted infrastructure only).
    pub exempt_ips: Vec<IpAddr>,
    /// Reverse proxies whose `X-Forwarded-For` names the client, for per-client caps (the same
    /// list the tus endpoint uses).
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Forward a client-supplied `Authorization` header to destinations.
    pub forward_authorization: bool,
    /// Waits before each retry of a failed tus attempt (Companion: 0, 1, 3, 5 s).
    pub retry_delays: Vec<Duration>,
    /// The bucket for `s3-multipart` transfers (shared with the S3 signing routes).
    pub s3: Option<crate::s3::S3State>,
    /// Where transfers report the files they stored (post-finish); none by default.
    pub hooks: Arc<dyn Hooks>,
    /// Cloud providers (Google Drive, Instagram): app keys, endpoints, timings.
    pub providers: crate::providers::ProvidersConfig,
    /// `POST /google-picker/get` (Uppy's Google Drive and Photos Pickers), when set; needs
    /// [`CompanionConfig::secret`]. Off by default, as in Companion.
    pub google_picker: Option<crate::providers::google_picker::GooglePickerConfig>,
    /// Where transfers live: in this process by default; a shared registry lets several
    /// instances watch, steer and take over each other's transfers.
    pub registry: Arc<dyn crate::registry::Registry>,
    /// Where login outcomes wait for their auth socket: in this process by default.
    pub handoff: Arc<dyn crate::oauth::handoff::AuthHandoff>,
    /// This server's application, to which tus requests for [`CompanionConfig::own_origins`]
    /// are handed in process once the binary attaches it (detached by default: HTTP).
    pub local: crate::transfer::LocalEndpoint,
}

impl Default for CompanionConfig {
    fn default() -> Self {
        Self {
            allow_local_urls: false,
            upload_urls: Vec::new(),
            own_origins: Vec::new(),
            cors_origins: Vec::new(),
            max_file_size: None,
            socket_wait: Duration::from_secs(60),
            stall_timeout: Duration::from_secs(30),
            keep_finished: Duration::from_secs(60),
            secret: None,
            tus_chunk_size: 64 * 1024 * 1024,
            exempt_ips: Vec::new(),
            trusted_proxies: Vec::new(),
            forward_authorization: false,
            retry_delays: [0, 1000, 3000, 5000].map(Duration::from_millis).to_vec(),
            s3: None,
            hooks: Arc::new(NoHooks),
            providers: crate::providers::ProvidersConfig::default(),
            google_picker: None,
            registry: Arc::new(crate::registry::LocalRegistry::default()),
            handoff: Arc::new(crate::oauth::handoff::LocalHandoff::default()),
            local: crate::transfer::LocalEndpoint::default(),
        }
    }
}
