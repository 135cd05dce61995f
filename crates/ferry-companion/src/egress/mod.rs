//! The one outbound HTTP client of the companion (link import, destinations). It resolves names
//! itself and connects only to addresses its [`IpPolicy`] allows, refuses literal-IP URLs the
//! same way, re-checks every redirect hop, caps redirects, speaks only http and https, never
//! uses a proxy from the environment and never decompresses bodies.
//!
//! # Layout
//!
//! - [`policy`]: which addresses are public; [`resolve`]: the resolver seam and its vetting adapter.

pub mod policy;
pub mod resolve;

use std::sync::Arc;
use std::time::Duration;

use reqwest::redirect;
use url::{Host, Url};

use crate::error::CompanionError;
pub use policy::IpPolicy;
pub use resolve::{Resolver, StaticResolver, SystemResolver};

/// Most redirects followed for one request.
pub const MAX_REDIRECTS: usize = 5;

/// An SSRF-safe HTTP client.
#[derive(Clone, Debug)]
pub struct Egress {
    client: reqwest::Client,
    policy: Arc<IpPolicy>,
}

impl Egress {
    /// A client resolving with `resolver` under `policy`; `follow_redirects` enables up to
    /// [`MAX_REDIRECTS`] checked hops. `idle` bounds the wait for any read.
    pub fn new(
        resolver: Arc<dyn Resolver>,
        policy: IpPolicy,
        follow_redirects: bool,
        idle: Duration,
    ) -> Result<Self, CompanionError> {
        let redirects = if follow_redirects {
            let hop_policy = policy.clone();
            redirect::Policy::custom(move |attempt| {
                // `previous` includes the original request.
                if attempt.previous().len() > MAX_REDIRECTS {
                    attempt.error(TooManyRedirects)
                } else if let Err(e) = check_url(&hop_policy, attempt.url()) {
                    attempt.error(e)
                } else {
                    attempt.follow()
                }
            })
        } else {
            redirect::Policy::none()
        };
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(resolve::Vetting {
                resolver,
                policy: policy.clone(),
            }))
            .redirect(redirects)
            .no_proxy()
            // Bodies pass through as sent: no on-the-fly decompression (a zip bomb cannot grow
            // past the size cap), even if another crate enables reqwest's decoders.
            .no_gzip()
            .no_brotli()
            .no_zstd()
            .no_deflate()
            .connect_timeout(Duration::from_secs(10))
            .read_timeout(idle)
            .user_agent(concat!("ferry-companion/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| CompanionError::Config(format!("egress client: {e}")))?;
        Ok(Self {
            client,
            policy: Arc::new(policy),
        })
    }

    /// Parses `raw` and checks its scheme and (literal) host; names are vetted at connect time.
    pub fn check(&self, raw: &str) -> Result<Url, CompanionError> {
        let url = Url::parse(raw.trim())
            .map_err(|_| CompanionError::BadRequest("Invalid request body".to_owned()))?;
        check_url(&self.policy, &url).map_err(|e| CompanionError::Forbidden(e.to_string()))?;
        Ok(url)
    }

    /// The underlying client; only use it with URLs that passed [`Egress::check`].
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }
}

/// Why a URL is refused before any connection.
#[derive(Debug, thiserror::Error)]
pub enum UrlRefused {
    #[error("only http and https URLs are allowed")]
    Scheme,
    #[error("the URL has no host")]
    NoHost,
    #[error("the URL points at an address that is not allowed")]
    Address,
}

/// Too many redirects.
#[derive(Debug, thiserror::Error)]
#[error("too many redirects")]
pub struct TooManyRedirects;

fn check_url(policy: &IpPolicy, url: &Url) -> Result<(), UrlRefused> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UrlRefused::Scheme);
    }
    match url.host() {
        None => Err(UrlRefused::NoHost),
        Some(Host::Ipv4(ip)) if !policy.allows(ip.into()) => Err(UrlRefused::Address),
        Some(Host::Ipv6(ip)) if !policy.allows(ip.into()) => Err(UrlRefused::Address),
        Some(Host::Domain("")) => Err(UrlRefused::NoHost),
        Some(_) => Ok(()),
    }
}

/// Whether `err` (anywhere in its chain) is a refusal by the address policy.
pub fn is_refusal(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        if e.is::<resolve::Refused>() || e.is::<UrlRefused>() || e.is::<TooManyRedirects>() {
            return true;
        }
        cur = e.source();
    }
    false
}
