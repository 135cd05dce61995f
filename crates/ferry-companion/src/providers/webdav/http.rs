//! Requests to a WebDAV server: always through the egress-policed client (the server URL is
//! the person's, so it is held to the link-import rules: http(s) only, no private or loopback
//! address unless configured, every redirect hop re-checked), with the session's
//! `Authorization`, rate limits waited out as every provider's are ([`crate::providers::ratelimit`]:
//! 429, or 503 with `Retry-After`), and failures mapped to messages safe to show.

use std::sync::Arc;

use reqwest::header::AUTHORIZATION;
use reqwest::{Method, RequestBuilder, Response};
use url::Url;

use super::target::Target;
use crate::egress::{self, Egress};
use crate::providers::ProviderError;
use crate::providers::ratelimit::{self, RateLimits, Waits};

/// What a refused address is answered with (the link import's words).
pub const ADDRESS_REFUSED: &str = "The WebDAV URL points at an address that is not allowed";

/// The WebDAV client.
#[derive(Clone, Debug)]
pub struct Http {
    sources: Egress,
    limits: Arc<RateLimits>,
}

impl Http {
    pub fn new(sources: Egress, limits: &RateLimits) -> Self {
        Self {
            sources,
            limits: Arc::new(limits.clone()),
        }
    }

    /// A `method` request to `url` with `target`'s credentials, once `url` passed the
    /// egress check (scheme and literal address; names are vetted when connecting).
    pub fn request(
        &self,
        target: &Target,
        method: Method,
        url: &Url,
    ) -> Result<RequestBuilder, ProviderError> {
        let url = self.sources.check(url.as_str()).map_err(|e| match e {
            crate::error::CompanionError::Forbidden(_) => {
                ProviderError::BadRequest(ADDRESS_REFUSED.into())
            }
            _ => ProviderError::BadRequest("Invalid WebDAV URL".into()),
        })?;
        let mut req = self.sources.client().request(method, url);
        if let Some(auth) = &target.authorization {
            req = req.header(AUTHORIZATION, auth);
        }
        Ok(req)
    }

    /// Sends `req`, waiting out rate limits; a success (2xx) is the response.
    pub async fn send(&self, req: RequestBuilder) -> Result<Response, ProviderError> {
        let mut waits = Waits::new(&self.limits);
        loop {
            let attempt = req
                .try_clone()
                .ok_or_else(|| ProviderError::Unreachable("request cannot be retried".into()))?;
            let resp = attempt.send().await.map_err(transport)?;
            let status = resp.status();
            if status.is_success() {
                return Ok(resp);
            }
            // WebDAV bodies carry no rate-limit signal of their own: the status and
            // `Retry-After` say it all.
            let Some(asked) = ratelimit::signal(status, resp.headers(), &[]) else {
                return Err(refusal(status.as_u16()));
            };
            match waits.next(asked) {
                Ok(wait) => {
                    tracing::info!(
                        status = status.as_u16(),
                        ?wait,
                        "WebDAV rate limit; waiting"
                    );
                    ratelimit::waiting(wait);
                    tokio::time::sleep(wait).await;
                }
                Err(retry_after) => return Err(ProviderError::RateLimited { retry_after }),
            }
        }
    }
}

/// A transport failure: a refused address is the person's input (400), anything else is the
/// server being unreachable.
fn transport(e: reqwest::Error) -> ProviderError {
    if egress::is_refusal(&e) {
        return ProviderError::BadRequest(ADDRESS_REFUSED.into());
    }
    // reqwest's message names the URL, which never carries credentials (they are headers).
    ProviderError::Unreachable(e.to_string())
}

/// A refusing status as the error shown to the person.
fn refusal(status: u16) -> ProviderError {
    let message = match status {
        401 => return ProviderError::Auth,
        403 => "HTTP 403: the WebDAV server refused access".to_owned(),
        404 => "HTTP 404: not found on the WebDAV server".to_owned(),
        s => format!("HTTP {s}: the WebDAV server refused the request"),
    };
    ProviderError::Status { status, message }
}
