//! The plumbing every provider with one-use (rotating) refresh tokens shares: Box, OneDrive and
//! Zoom. Each describes itself as a [`RotatingSpec`] (id, scopes, API prefix, error readers,
//! how long its refresh tokens live) and keeps a [`RotatingApi`], which holds its app,
//! endpoints, clients and [`Rotation`] ledger and makes the calls they all make the same way:
//! a bearer call that refreshes the session once when the provider refuses the access token
//! ([`RotatingApi::authed`]), a JSON GET under the API prefix, a call that may redirect, the
//! pre-signed download URL a redirect names, the refresh itself, and the revocation of a
//! session's newest tokens.

use std::future::Future;
use std::time::Duration;

use reqwest::RequestBuilder;
use reqwest::header::RANGE;
use serde_json::Value;

use super::api::{Answer, Api, ErrorReader};
use super::config::{Endpoints, OAuthApp, ProviderSetup};
use super::oauth2::{ClientAuth, TokenEndpoint};
use super::rotation::Rotation;
use super::{Deps, OAuthSpec, ProviderError, ProviderInfo, Revoked, Session};
use crate::egress::Egress;

/// Sessions a provider's rotation ledger remembers at most.
const LEDGER_CAPACITY: usize = 10_000;

/// What a rotating-token provider is, beyond the plumbing it shares.
#[derive(Clone, Debug)]
pub struct RotatingSpec {
    pub id: &'static str,
    pub name: &'static str,
    /// The folder a client lists first.
    pub root: &'static str,
    pub scopes: Vec<&'static str>,
    pub pkce: bool,
    /// How long the provider's refresh tokens live: the Uppy auth token and the rotation
    /// ledger last as long.
    pub session_days: u64,
    /// The most items the API gives in one page.
    pub max_page: u32,
    /// The API version path every call starts with (`/2.0`, `/v1.0`).
    pub prefix: &'static str,
    /// Reads the API's error answers.
    pub read: ErrorReader,
    /// Reads the token endpoint's error answers.
    pub token_read: ErrorReader,
    /// Where the token endpoint takes the app's credentials.
    pub client_auth: ClientAuth,
}

/// A rotating-token provider's app, endpoints, clients and rotation ledger, with the calls
/// they share.
#[derive(Debug)]
pub struct RotatingApi {
    pub app: OAuthApp,
    pub endpoints: Endpoints,
    pub api: Api,
    /// The egress-policed client, for the URLs the provider redirects to.
    pub sources: Egress,
    pub info: ProviderInfo,
    /// Items asked per page, within the API's limit.
    pub page_size: u32,
    pub rotation: Rotation,
    prefix: &'static str,
    read: ErrorReader,
    token_read: ErrorReader,
    client_auth: ClientAuth,
}

impl RotatingApi {
    /// The provider `spec` with `setup`'s app at its endpoints.
    pub fn new(setup: ProviderSetup, deps: &Deps, spec: RotatingSpec) -> Self {
        let session = Duration::from_secs(spec.session_days * 24 * 3600);
        let info = ProviderInfo {
            id: spec.id,
            name: spec.name,
            root: spec.root,
            oauth: OAuthSpec::standard(setup.endpoints.auth_url.clone(), spec.scopes, spec.pkce),
            client_id: setup.app.key.clone(),
            token_max_age: session.as_secs() as i64,
            supports_refresh: true,
        };
        Self {
            app: setup.app,
            endpoints: setup.endpoints,
            api: deps.api.clone(),
            sources: deps.sources.clone(),
            info,
            page_size: deps.page_size.clamp(1, spec.max_page),
            rotation: Rotation::new(session, LEDGER_CAPACITY),
            prefix: spec.prefix,
            read: spec.read,
            token_read: spec.token_read,
            client_auth: spec.client_auth,
        }
    }

    /// `{api_url}{prefix}{path}`.
    pub fn url(&self, path: &str) -> String {
        self.endpoints.api(&format!("{}{path}", self.prefix))
    }

    /// The provider's standard OAuth2 token endpoint.
    pub fn token_endpoint(&self) -> TokenEndpoint<'_> {
        TokenEndpoint {
            api: &self.api,
            url: &self.endpoints.token_url,
            app: &self.app,
            read: self.token_read,
            client_auth: self.client_auth,
        }
    }

    /// Refreshes `session` at the token endpoint, once per session however many callers ask
    /// at the same time (its refresh token works once).
    pub async fn refresh(&self, session: &Session) -> Result<Session, ProviderError> {
        let endpoint = self.token_endpoint();
        self.rotation
            .refresh(session, |s| async move { endpoint.refresh(&s).await })
            .await
    }

    /// Runs `call` with the newest tokens of `session`; if the provider refuses the access
    /// token, the session is refreshed (once, shared with concurrent callers) and `call`
    /// repeated.
    pub async fn authed<T, F, Fut>(&self, session: &Session, call: F) -> Result<T, ProviderError>
    where
        F: Fn(Session) -> Fut,
        Fut: Future<Output = Result<T, ProviderError>>,
    {
        self.rotation
            .authed(session, |s| async move { self.refresh(&s).await }, call)
            .await
    }

    /// Revokes `session` at the provider through `call`, which gets its newest tokens (the
    /// client's copy may hold ones already rotated away) and answers whether the provider
    /// revoked them; the session is forgotten here either way.
    pub async fn revoke<F, Fut>(&self, session: &Session, call: F) -> Revoked
    where
        F: FnOnce(Session) -> Fut,
        Fut: Future<Output = bool>,
    {
        let revoked = call(self.rotation.latest(session)).await;
        self.rotation.forget(session);
        Revoked {
            revoked,
            manual_url: None,
        }
    }

    /// A JSON GET of `path` (under the API prefix) with `query`.
    pub async fn get_json(
        &self,
        session: &Session,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<Value, ProviderError> {
        self.authed(session, |s| {
            let req = self.api.get(self.url(path), &s.access_token).query(query);
            self.api.json(req, self.read)
        })
        .await
    }

    /// A GET of `path` (under the API prefix) that may redirect: where it redirects, or its
    /// own answer.
    pub async fn answer(
        &self,
        session: &Session,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<Answer, ProviderError> {
        self.authed(session, |s| {
            let req = self.api.get(self.url(path), &s.access_token).query(query);
            self.api.answer(req, self.read)
        })
        .await
    }

    /// A URL the provider redirected to (a download host, a placeholder image), from byte
    /// `from`: fetched under the egress policy and without the user's token (these URLs are
    /// pre-signed).
    pub async fn fetch_presigned(
        &self,
        location: &str,
        from: u64,
    ) -> Result<reqwest::Response, ProviderError> {
        self.presigned(location, from)?
            .send()
            .await
            .map_err(|e| ProviderError::Unreachable(e.to_string()))
    }

    /// [`RotatingApi::fetch_presigned`] for a file's bytes: a 429, or a 503 with
    /// `Retry-After`, from the download host is waited out under the providers' rate limits
    /// (the import shows as waiting); any other failure is `read`'s error.
    pub async fn download_presigned(
        &self,
        location: &str,
        from: u64,
        read: ErrorReader,
    ) -> Result<reqwest::Response, ProviderError> {
        let req = self.presigned(location, from)?;
        Api::new(self.sources.client().clone(), self.api.limits().clone())
            .send(req, read)
            .await
    }

    /// The GET of a pre-signed `location` (checked against the egress policy) from byte `from`.
    fn presigned(&self, location: &str, from: u64) -> Result<RequestBuilder, ProviderError> {
        let url = self
            .sources
            .check(location)
            .map_err(|_| ProviderError::Status {
                status: 400,
                message: "URL not allowed".into(),
            })?;
        let mut req = self.sources.client().get(url);
        if from > 0 {
            req = req.header(RANGE, format!("bytes={from}-"));
        }
        Ok(req)
    }
}
