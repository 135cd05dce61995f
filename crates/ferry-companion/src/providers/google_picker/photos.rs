//! Google Photos Picker media: which URLs may be fetched with the page's token, their
//! download from any byte, and the renewal of one that expired (media URLs last an hour) from
//! the picking session's items (`GET /v1/mediaItems?sessionId=`).

use reqwest::header::RANGE;
use serde_json::Value;
use url::Url;

use super::super::api::{self, Api};
use super::super::oauth2;
use super::super::ratelimit::RateLimits;
use super::super::{Download, ProviderError};
use super::{GooglePickerConfig, Pick};
use crate::egress::Egress;

/// What a download of an expired (or otherwise refused) media URL ends with, without a session
/// to renew it from.
pub const EXPIRED: &str =
    "The Google Photos link has expired (they last an hour); pick the file again";
/// Pages of a picking session read at most while looking for an item (100 items each; the
/// picker lets a person pick 2000).
const MAX_PAGES: usize = 40;

/// The Photos half of the picker.
#[derive(Debug)]
pub struct Photos {
    /// The Photos Picker API, for renewals (a configured endpoint).
    api: Api,
    api_url: String,
    /// Downloads: the egress-policed client for Google's hosts, or `api` for a configured one.
    content: Api,
    /// The one origin allowed instead of Google's media hosts.
    content_origin: Option<url::Origin>,
}

impl Photos {
    pub fn new(config: &GooglePickerConfig, api: Api, sources: &Egress) -> Self {
        let content_origin = config
            .photos_content_url
            .as_deref()
            .and_then(|u| Url::parse(u).ok())
            .map(|u| u.origin());
        let content = match content_origin {
            Some(_) => api.clone(),
            // No retries on Google's media hosts (an empty backoff).
            None => Api::new(
                sources.client().clone(),
                RateLimits {
                    backoff: Vec::new(),
                    ..RateLimits::default()
                },
            ),
        };
        Self {
            api,
            api_url: config.photos_api_url.trim_end_matches('/').to_owned(),
            content,
            content_origin,
        }
    }

    /// `raw` as a media URL this server may fetch with a bearer token: Google's media host (or
    /// the configured origin), and a full-resolution download suffix.
    pub fn check(&self, raw: &str) -> Result<Url, ProviderError> {
        let refused = |why: &str| ProviderError::BadRequest(format!("Invalid URL: {why}"));
        let url = Url::parse(raw.trim()).map_err(|_| refused("not a URL"))?;
        match &self.content_origin {
            Some(origin) if &url.origin() == origin => {}
            Some(_) => return Err(refused("not on the configured Google Photos host")),
            None => {
                let host = url.host_str().unwrap_or_default();
                let google = url.scheme() == "https"
                    && url.port().is_none()
                    && is_media_host(host)
                    && matches!(url.host(), Some(url::Host::Domain(_)));
                if !google {
                    return Err(refused(
                        "only Google Photos media URLs (https://lhN.googleusercontent.com/...) are accepted",
                    ));
                }
            }
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(refused("credentials in the URL"));
        }
        if url.query().is_some() || suffix(url.path()).is_none() {
            return Err(refused("a Google Photos media URL ends with =d or =dv"));
        }
        Ok(url)
    }

    /// Opens `pick`'s media URL at `from`; one refused as expired is renewed once from the
    /// picking session, when the pick names it, and `pick.url` updated.
    pub async fn open(&self, pick: &mut Pick, from: u64) -> Result<Download, ProviderError> {
        let url = self.check(pick.url.as_deref().unwrap_or_default())?;
        match self.download(&url, &pick.access_token, from).await {
            Err(ProviderError::Status { status, .. }) if expired(status) => {
                let (Some(session), Some(id)) = (pick.session_id.clone(), pick.id.clone()) else {
                    return Err(gone());
                };
                let tail = suffix(url.path()).unwrap_or("=d");
                let fresh = self.renew(&pick.access_token, &session, &id, tail).await?;
                let download = self.download(&fresh, &pick.access_token, from).await;
                pick.url = Some(fresh.to_string());
                download.map_err(|e| match e {
                    ProviderError::Status { status, .. } if expired(status) => gone(),
                    other => other,
                })
            }
            Err(ProviderError::Status { status, .. }) if expired(status) => Err(gone()),
            other => other,
        }
    }

    async fn download(
        &self,
        url: &Url,
        access_token: &str,
        from: u64,
    ) -> Result<Download, ProviderError> {
        let mut req = self
            .content
            .client()
            .get(url.clone())
            .bearer_auth(access_token);
        if from > 0 {
            req = req.header(RANGE, format!("bytes={from}-"));
        }
        let resp = self.content.send(req, media_error).await?;
        let (total, skip) = api::ranged(&resp, from)?;
        Ok(Download {
            stream: api::byte_stream(resp),
            skip,
            size: total,
            name: None,
        })
    }

    /// The current media URL of item `id` in picking session `session`, with `tail` (`=d`).
    async fn renew(
        &self,
        access_token: &str,
        session: &str,
        id: &str,
        tail: &str,
    ) -> Result<Url, ProviderError> {
        let mut page_token: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut query = vec![("sessionId", session), ("pageSize", "100")];
            if let Some(t) = page_token.as_deref() {
                query.push(("pageToken", t));
            }
            let req = self
                .api
                .get(format!("{}/v1/mediaItems", self.api_url), access_token)
                .query(&query);
            let page = self.api.json(req, oauth2::token_error).await?;
            let items = page.get("mediaItems").and_then(Value::as_array);
            let found = items
                .into_iter()
                .flatten()
                .find(|i| i.get("id").and_then(Value::as_str) == Some(id));
            if let Some(item) = found {
                let base = item
                    .pointer("/mediaFile/baseUrl")
                    .and_then(Value::as_str)
                    .ok_or_else(gone)?;
                // Google's answer is held to the same rules as the client's URL.
                return self.check(&format!("{base}{tail}"));
            }
            page_token = page
                .get("nextPageToken")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_owned);
            if page_token.is_none() {
                break;
            }
        }
        Err(gone())
    }
}

/// Google's media hosts: `lh3.googleusercontent.com` and its numbered siblings.
fn is_media_host(host: &str) -> bool {
    host.strip_suffix(".googleusercontent.com")
        .and_then(|h| h.strip_prefix("lh"))
        .is_some_and(|n| !n.is_empty() && n.len() <= 2 && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The full-resolution download suffix a media URL ends with (`=d` photos, `=dv` videos).
fn suffix(path: &str) -> Option<&'static str> {
    if path.ends_with("=dv") {
        Some("=dv")
    } else if path.ends_with("=d") {
        Some("=d")
    } else {
        None
    }
}

/// How Google refuses an expired media URL.
fn expired(status: u16) -> bool {
    matches!(status, 403 | 404 | 410)
}

fn gone() -> ProviderError {
    ProviderError::Status {
        status: 410,
        message: EXPIRED.into(),
    }
}

/// Media host errors: 401 is the token; the rest keep their status (checked for expiry).
fn media_error(status: u16, body: &[u8]) -> ProviderError {
    match status {
        401 => ProviderError::Auth,
        _ => ProviderError::Status {
            status,
            message: api::error_message(body, status),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn google() -> Photos {
        let egress = Egress::new(
            std::sync::Arc::new(crate::egress::SystemResolver),
            crate::egress::IpPolicy::default(),
            false,
            std::time::Duration::from_secs(1),
        )
        .expect("egress");
        let api = Api::new(egress.client().clone(), RateLimits::default());
        Photos::new(&GooglePickerConfig::default(), api, &egress)
    }

    #[test]
    fn only_googles_media_hosts_with_a_download_suffix_pass() {
        let p = google();
        for ok in [
            "https://lh3.googleusercontent.com/pp/AF1Qip-abc=d",
            "https://lh4.googleusercontent.com/x/y=dv",
        ] {
            assert!(p.check(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://lh3.googleusercontent.com/a=d",
            "https://lh3.googleusercontent.com:8443/a=d",
            "https://evil.example/lh3.googleusercontent.com/a=d",
            "https://lh3.googleusercontent.com.evil.example/a=d",
            "https://script.googleusercontent.com/a=d",
            "https://lhx.googleusercontent.com/a=d",
            "https://user:pw@lh3.googleusercontent.com/a=d",
            "https://lh3.googleusercontent.com/a=w100-h100",
            "https://lh3.googleusercontent.com/a=d?x=1",
            "https://127.0.0.1/a=d",
            "file:///etc/passwd",
            "not a url",
        ] {
            let err = p.check(bad).expect_err(bad).to_string();
            assert!(err.starts_with("Invalid URL: "), "{bad}: {err}");
        }
    }
}
