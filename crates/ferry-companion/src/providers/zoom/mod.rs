//! Zoom (`zoom`, API v2): cloud recordings by date range on Companion's routes and answer
//! shapes, so `@uppy/zoom` works unchanged. The root lists the years since the account was
//! created; a year lists its recorded meetings, one month's date range per Zoom call (Zoom
//! allows a month at most) with `next_page_token` paging, newest month first and paged to the
//! client (Companion asks all twelve months at once and answers one page); a meeting lists its
//! finished recording files; an import follows the file's download URL to Zoom's storage,
//! resumable with `Range`.
//!
//! Zoom access tokens last an hour and every refresh returns a new refresh token, the old one
//! retired. Like Box, Ferry refreshes on the server when Zoom refuses the access token, once per
//! session ([`Rotation`](super::rotation::Rotation)), so a client holding its original token keeps working. The token
//! endpoint takes the app's credentials as HTTP Basic (Zoom's documented form), not in the body.

mod errors;
mod items;

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::RANGE;
use serde_json::Value;

use super::api::{self, Answer};
use super::config::{Endpoints, ProviderSetup};
use super::oauth2::{ClientAuth, TokenEndpoint};
use super::rotating::{RotatingApi, RotatingSpec};
use super::{
    Deps, Download, ListCtx, ListPage, Provider, ProviderError, ProviderInfo, Revoked, Session,
};
use crate::transfer::source::ByteStream;

use errors::{token_error, zoom_error};
use items::{Folder, YearCursor};

/// Zoom calls one year's listing may make before answering (twelve empty months, and a few
/// pages of meetings without finished recordings).
const MAX_CALLS_PER_PAGE: usize = 24;

/// Zoom's endpoints: `api_url` is the API host (`/v2/...` is appended); the revoke endpoint is
/// `revoke` beside `token_url`.
pub fn default_endpoints() -> Endpoints {
    Endpoints::new(
        "https://zoom.us/oauth/authorize",
        "https://zoom.us/oauth/token",
        "https://api.zoom.us",
    )
}

/// The Zoom provider.
#[derive(Debug)]
pub struct Zoom {
    oauth: RotatingApi,
}

impl Zoom {
    /// Zoom with `setup`'s app at its endpoints; `deps.sources` (the egress-policed client)
    /// fetches the storage URLs Zoom's download URLs redirect to.
    pub fn new(setup: ProviderSetup, deps: &Deps) -> Self {
        let spec = RotatingSpec {
            id: "zoom",
            name: "Zoom",
            root: "",
            // Scopes are set in the app's settings on the Zoom App Marketplace.
            scopes: Vec::new(),
            pkce: false,
            // Zoom's refresh tokens last 90 days.
            session_days: 90,
            max_page: 300,
            prefix: "/v2",
            read: zoom_error,
            token_read: token_error,
            client_auth: ClientAuth::Basic,
        };
        Self {
            oauth: RotatingApi::new(setup, deps, spec),
        }
    }

    /// `users/me`: email (the username) and the account's creation date.
    async fn me(&self, session: &Session) -> Result<Value, ProviderError> {
        self.oauth.get_json(session, "/users/me", &[]).await
    }

    /// A meeting's recordings. UUIDs are always double-encoded: Zoom asks it of those with `/`.
    async fn recordings(&self, session: &Session, uuid: &str) -> Result<Value, ProviderError> {
        let once = utf8_percent_encode(uuid, NON_ALPHANUMERIC).to_string();
        let twice = utf8_percent_encode(&once, NON_ALPHANUMERIC).to_string();
        self.oauth
            .get_json(session, &format!("/meetings/{twice}/recordings"), &[])
            .await
    }

    /// One page of a year's meetings: months from the cursor's down to January, until a page
    /// has meetings to show (or the year is done).
    async fn year_page(
        &self,
        session: &Session,
        year: i16,
        cursor: Option<&str>,
    ) -> Result<(Vec<super::Item>, Option<String>), ProviderError> {
        let today = jiff::Timestamp::now()
            .to_zoned(jiff::tz::TimeZone::UTC)
            .date();
        let mut at = match cursor {
            Some(c) => YearCursor::parse(c)?,
            None => match items::last_month(year, today) {
                Some(month) => YearCursor { month, token: None },
                None => return Ok((Vec::new(), None)),
            },
        };
        let size = self.oauth.page_size.to_string();
        let mut listed = Vec::new();
        for _ in 0..MAX_CALLS_PER_PAGE {
            let (from, to) = items::month_range(year, at.month)
                .ok_or_else(|| ProviderError::BadRequest("Invalid cursor".into()))?;
            let mut query = vec![("from", from.as_str()), ("to", to.as_str())];
            query.push(("page_size", size.as_str()));
            if let Some(t) = &at.token {
                query.push(("next_page_token", t.as_str()));
            }
            let page = self
                .oauth
                .get_json(session, "/users/me/recordings", &query)
                .await?;
            listed.extend(
                page.get("meetings")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(items::meeting_item),
            );
            let token = page
                .get("next_page_token")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty());
            let next = match token {
                Some(t) => Some(YearCursor {
                    month: at.month,
                    token: Some(t.to_owned()),
                }),
                None if at.month > 1 => Some(YearCursor {
                    month: at.month - 1,
                    token: None,
                }),
                None => None,
            };
            match next {
                Some(n) if listed.is_empty() => at = n,
                other => return Ok((listed, other.map(|n| n.next_page_path(year)))),
            }
        }
        Ok((listed, Some(at.next_page_path(year))))
    }

    /// The storage URL (or Zoom's own answer) of a download URL. The access token goes only to
    /// Zoom's own hosts: the configured API and token hosts, or `zoom.us` and its subdomains.
    async fn open_download(
        &self,
        session: &Session,
        raw: &str,
        from: u64,
    ) -> Result<reqwest::Response, ProviderError> {
        let url = url::Url::parse(raw)
            .ok()
            .filter(|u| self.zoom_host(u))
            .ok_or_else(|| ProviderError::Status {
                status: 502,
                message: "Zoom returned a download URL off its own hosts".into(),
            })?;
        let o = &self.oauth;
        let answer = o
            .authed(session, |s| {
                let mut req = o.api.get(url.to_string(), &s.access_token);
                if from > 0 {
                    req = req.header(RANGE, format!("bytes={from}-"));
                }
                o.api.answer(req, zoom_error)
            })
            .await?;
        match answer {
            Answer::Body(resp) => Ok(resp),
            // Zoom's storage link is pre-signed: fetched without the token, under egress rules.
            // Its storage throttles too (503 or 429 with `Retry-After`): waited out.
            Answer::Moved(location) => {
                o.download_presigned(&location, from, download_host_error)
                    .await
            }
        }
    }

    fn zoom_host(&self, u: &url::Url) -> bool {
        let Some(host) = u.host_str() else {
            return false;
        };
        let endpoints = &self.oauth.endpoints;
        let configured = [&endpoints.api_url, &endpoints.token_url]
            .into_iter()
            .filter_map(|c| url::Url::parse(c).ok())
            .any(|c| c.origin() == u.origin());
        configured || (u.scheme() == "https" && (host == "zoom.us" || host.ends_with(".zoom.us")))
    }
}

#[async_trait::async_trait]
impl Provider for Zoom {
    fn info(&self) -> &ProviderInfo {
        &self.oauth.info
    }

    fn oauth2(&self) -> Option<TokenEndpoint<'_>> {
        Some(self.oauth.token_endpoint())
    }

    async fn signed_in(&self, mut session: Session) -> Result<Session, ProviderError> {
        let me = self.me(&session).await?;
        session.username = me.get("email").and_then(Value::as_str).map(str::to_owned);
        Ok(session)
    }

    async fn refresh(&self, session: &Session) -> Result<Session, ProviderError> {
        self.oauth.refresh(session).await
    }

    async fn revoke(&self, session: &Session) -> Result<Revoked, ProviderError> {
        let o = &self.oauth;
        let revoked = o.revoke(session, |current| async move {
            let req = o
                .api
                .client()
                .post(o.endpoints.revoke_url())
                .basic_auth(&o.app.key, Some(&o.app.secret))
                .query(&[("token", current.access_token.as_str())]);
            match o.api.json(req, token_error).await {
                Ok(v) => v.get("status").and_then(Value::as_str) == Some("success"),
                Err(_) => false,
            }
        });
        Ok(revoked.await)
    }

    async fn list(
        &self,
        session: &Session,
        _ctx: &ListCtx,
        path: &str,
        cursor: Option<&str>,
    ) -> Result<ListPage, ProviderError> {
        let folder = items::folder(path)?;
        let (listed, next_page_path) = match folder {
            Folder::Root => {
                let me = self.me(session).await?;
                let now = jiff::Timestamp::now()
                    .to_zoned(jiff::tz::TimeZone::UTC)
                    .year();
                let created = me
                    .get("created_at")
                    .and_then(Value::as_str)
                    .and_then(|c| c.parse::<jiff::Timestamp>().ok())
                    .map(|t| t.to_zoned(jiff::tz::TimeZone::UTC).year())
                    .unwrap_or(now)
                    .min(now);
                let username = me.get("email").and_then(Value::as_str).map(str::to_owned);
                return Ok(ListPage {
                    username: username.or_else(|| session.username.clone()),
                    items: items::years(created, now),
                    next_page_path: None,
                });
            }
            Folder::Year(year) => self.year_page(session, year, cursor).await?,
            Folder::Meeting(uuid) => {
                let rec = self.recordings(session, uuid).await?;
                let topic = rec.get("topic").and_then(Value::as_str).unwrap_or("Zoom");
                let files = rec
                    .get("recording_files")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|f| items::file_item(uuid, topic, f))
                    .collect();
                (files, None)
            }
        };
        let username = match &session.username {
            Some(u) => Some(u.clone()),
            None => self
                .me(session)
                .await?
                .get("email")
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        Ok(ListPage {
            username,
            items: listed,
            next_page_path,
        })
    }

    async fn download(
        &self,
        session: &Session,
        id: &str,
        from: u64,
    ) -> Result<Download, ProviderError> {
        let (uuid, file_id) = items::file_ref(id)?;
        let rec = self.recordings(session, uuid).await?;
        let file = items::find_file(&rec, file_id).ok_or_else(|| ProviderError::Status {
            status: 404,
            message: "HTTP 404: No downloadable recording file with this id".into(),
        })?;
        let link = file
            .get("download_url")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let resp = self.open_download(session, link, from).await?;
        if !resp.status().is_success() {
            return Err(download_host_error(resp.status().as_u16(), &[]));
        }
        let (total, skip) = api::ranged(&resp, from)?;
        let topic = rec.get("topic").and_then(Value::as_str).unwrap_or("Zoom");
        Ok(Download {
            size: total.or_else(|| file.get("file_size").and_then(Value::as_u64)),
            name: items::file_item(uuid, topic, file).map(|i| i.name),
            stream: api::byte_stream(resp),
            skip,
        })
    }

    async fn thumbnail(
        &self,
        _session: &Session,
        _id: &str,
    ) -> Result<(String, ByteStream), ProviderError> {
        Err(ProviderError::BadRequest(
            "Zoom recordings have no thumbnails".into(),
        ))
    }
}

/// A recording that Zoom's storage did not serve.
fn download_host_error(status: u16, _body: &[u8]) -> ProviderError {
    ProviderError::Status {
        status,
        message: format!("HTTP {status}: Zoom did not send the recording"),
    }
}
