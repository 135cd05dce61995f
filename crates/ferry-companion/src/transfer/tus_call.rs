//! One request of the tus destination, and where it goes: over HTTP with the destinations'
//! client, or, when the URL is this server's own endpoint and the application is attached
//! ([`super::local`]), handed to it in process. Both carry the same method, path, headers and
//! streamed body; the destination reads only the answer's status and headers, so both give an
//! [`Answer`].

use axum::body::Body;
use reqwest::header::{HOST, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use url::{Position, Url};

use super::Transfer;
use super::feeder::BodyStream;
use super::local::Local;

const TUS_RESUMABLE: HeaderName = HeaderName::from_static("tus-resumable");

/// What the destination reads of an answer.
#[derive(Debug)]
pub(super) struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
}

impl Answer {
    /// A header as a number.
    pub fn u64(&self, name: &HeaderName) -> Option<u64> {
        self.headers.get(name)?.to_str().ok()?.trim().parse().ok()
    }
}

/// A tus request being built: the client's forwarded headers, `Tus-Resumable`, then its own.
#[derive(Debug)]
pub(super) struct TusCall {
    method: Method,
    url: Url,
    headers: HeaderMap,
}

impl TusCall {
    pub fn new(transfer: &Transfer, method: Method, url: &Url) -> Self {
        let mut headers = transfer.headers.clone();
        headers.append(TUS_RESUMABLE, HeaderValue::from_static("1.0.0"));
        Self {
            method,
            url: url.clone(),
            headers,
        }
    }

    /// Adds a header (appended, as the HTTP client's builder does).
    pub fn header(mut self, name: HeaderName, value: impl Into<HeaderValue>) -> Self {
        self.headers.append(name, value.into());
        self
    }

    /// Sends it with `body` (none: empty). A failure to deliver it is the error's text.
    pub async fn send(
        self,
        transfer: &Transfer,
        body: Option<BodyStream>,
    ) -> Result<Answer, String> {
        let own = &transfer.state.config().own_origins;
        match transfer.state.config().local.route(&self.url, own) {
            Some(local) => self.send_local(local, body).await,
            None => self.send_http(transfer, body).await,
        }
    }

    async fn send_http(
        self,
        transfer: &Transfer,
        body: Option<BodyStream>,
    ) -> Result<Answer, String> {
        let mut req = transfer
            .client()
            .request(self.method, self.url)
            .headers(self.headers);
        if let Some(body) = body {
            req = req.body(reqwest::Body::wrap_stream(body));
        }
        let resp = req.send().await.map_err(|e| e.to_string())?;
        Ok(Answer {
            status: resp.status(),
            headers: resp.headers().clone(),
        })
    }

    /// The request as a connection to `self.url` would have delivered it: origin-form URI and
    /// the `Host` the HTTP client would have sent.
    async fn send_local(self, local: Local, body: Option<BodyStream>) -> Result<Answer, String> {
        let target = &self.url[Position::BeforePath..Position::AfterQuery];
        let host = &self.url[Position::BeforeHost..Position::AfterPort];
        let mut builder = axum::http::Request::builder()
            .method(self.method)
            .uri(target);
        if let Some(headers) = builder.headers_mut() {
            *headers = self.headers;
            let host = HeaderValue::from_str(host).map_err(|e| e.to_string())?;
            headers.insert(HOST, host);
        }
        let body = body.map_or_else(Body::empty, Body::from_stream);
        let request = builder.body(body).map_err(|e| e.to_string())?;
        let resp = local
            .send(request)
            .await
            .map_err(|e| format!("in-process request failed: {e}"))?;
        let (parts, _) = resp.into_parts();
        Ok(Answer {
            status: parts.status,
            headers: parts.headers,
        })
    }
}
