//! [`S3Client`]: every S3 call Ferry makes, presigned with `rusty-s3` and sent with one
//! `reqwest` client. Answers are checked in one place ([`S3Client::send`]): a 2xx is success, a
//! 4xx other than 403 is the store's word about the request ([`S3Error::Client`]), anything
//! else (403 means our credentials) is [`S3Error::Upstream`]. Every call is bounded by the
//! client's [`S3Timeouts`] (see [`crate::timeouts`]); a call that times out is
//! [`S3Error::Upstream`] too. A store's "try again" (503 and kin) is repeated where the body
//! allows it (see [`crate::retry`]).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use reqwest::{Method, Response, Url};
use rusty_s3::actions::{ListObjectsV2, ListParts};
use rusty_s3::{Bucket, Credentials, S3Action, UrlStyle};

use crate::retry::{self, Failure};
use crate::timeouts::{Activity, Payload, read_answer, watched_answer};
use crate::xml;
use crate::{MAX_PARTS, S3Bucket, S3Error, S3Timeouts};

/// Server-side requests are signed right before they are sent, so they need not live long.
const CALL_TTL: Duration = Duration::from_secs(60);

/// One uploaded part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub number: u16,
    pub size: u64,
    pub etag: String,
}

/// A bucket, its credentials and an HTTP client. Cheap to clone.
#[derive(Clone)]
pub struct S3Client {
    settings: Arc<S3Bucket>,
    bucket: Arc<Bucket>,
    credentials: Arc<Credentials>,
    http: reqwest::Client,
    timeouts: S3Timeouts,
}

impl std::fmt::Debug for S3Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Client")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl S3Client {
    /// Validates `settings` (endpoint URL, bucket name) into a client.
    pub fn new(settings: S3Bucket) -> Result<Self, S3Error> {
        let endpoint = Url::parse(&settings.endpoint)
            .map_err(|e| S3Error::Config(format!("endpoint {:?}: {e}", settings.endpoint)))?;
        let style = if settings.force_path_style {
            UrlStyle::Path
        } else {
            UrlStyle::VirtualHost
        };
        let bucket = Bucket::new(
            endpoint,
            style,
            settings.bucket.clone(),
            settings.region.clone(),
        )
        .map_err(|e| S3Error::Config(format!("bucket {:?}: {e}", settings.bucket)))?;
        let credentials = Credentials::new(
            settings.access_key.clone(),
            settings.secret_key.expose().to_owned(),
        );
        let timeouts = S3Timeouts::default();
        Ok(Self {
            settings: Arc::new(settings),
            bucket: Arc::new(bucket),
            credentials: Arc::new(credentials),
            http: http_client(&timeouts)?,
            timeouts,
        })
    }

    /// The same bucket with other bounds on its calls (a new HTTP client with `timeouts`'
    /// connect timeout; call it before [`S3Client::with_http`]).
    pub fn with_timeouts(mut self, timeouts: S3Timeouts) -> Result<Self, S3Error> {
        self.http = http_client(&timeouts)?;
        self.timeouts = timeouts;
        Ok(self)
    }

    /// The same bucket, sending through `http` (e.g. a client with an egress policy; its own
    /// connect timeout applies, the idle bounds of [`S3Timeouts`] still do).
    pub fn with_http(mut self, http: reqwest::Client) -> Self {
        self.http = http;
        self
    }

    /// The bounds on this client's calls.
    pub fn timeouts(&self) -> S3Timeouts {
        self.timeouts
    }

    pub fn settings(&self) -> &S3Bucket {
        &self.settings
    }

    /// The `rusty-s3` bucket, for presigning URLs the browser uses.
    pub fn bucket(&self) -> &Bucket {
        &self.bucket
    }

    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    pub fn object_url(&self, key: &str) -> Url {
        self.bucket.object_url(key)
    }

    /// One attempt; see the module doc for how answers are judged. A body in memory goes with
    /// its `Content-Length` (a streamed one's is among `headers`); the call fails when it makes
    /// no progress for the idle time.
    pub(crate) async fn send_once(
        &self,
        what: &'static str,
        method: Method,
        url: Url,
        headers: &[(String, String)],
        body: Option<Payload>,
    ) -> Result<Response, Failure> {
        let mut request = self.http.request(method, url);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let activity = Activity::new();
        if let Some(body) = body {
            let given = headers
                .iter()
                .any(|(name, _)| name.eq_ignore_ascii_case("content-length"));
            if let Some(len) = body.len().filter(|_| !given) {
                request = request.header(reqwest::header::CONTENT_LENGTH, len);
            }
            request = request.body(body.watched(activity.clone()));
        }
        let idle = self.timeouts.idle;
        let response = tokio::select! {
            sent = request.send() => sent.map_err(|e| {
                let again = e.is_connect();
                let error = S3Error::upstream(what, e);
                if again { Failure::Again(error) } else { Failure::Final(error) }
            })?,
            () = activity.stalled(idle) => return Err(Failure::Final(S3Error::timed_out(what, idle))),
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let again = retry::retryable(status);
        let text = read_answer(what, response, idle).await.unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        let code = xml::element(&text, "Code").unwrap_or_default();
        let message = xml::element(&text, "Message").unwrap_or_else(|| code.clone());
        if status.is_client_error() && status != reqwest::StatusCode::FORBIDDEN {
            return Err(Failure::Final(S3Error::Client {
                status: status.as_u16(),
                message: format!("{what}: {message}"),
            }));
        }
        let error = S3Error::upstream(what, format!("{status} {code} {message}"));
        Err(if again {
            Failure::Again(error)
        } else {
            Failure::Final(error)
        })
    }

    async fn send_text(
        &self,
        what: &'static str,
        method: Method,
        url: Url,
        body: Option<Payload>,
    ) -> Result<String, S3Error> {
        let response = self.send(what, method, url, &[], body).await?;
        let bytes = read_answer(what, response, self.timeouts.idle).await?;
        String::from_utf8(bytes.to_vec()).map_err(|e| S3Error::upstream(what, e))
    }

    /// Starts a multipart upload of `key` (with `headers` such as `content-type` signed in);
    /// returns its upload id.
    pub async fn create_multipart(
        &self,
        key: &str,
        headers: &[(String, String)],
    ) -> Result<String, S3Error> {
        let mut action = self
            .bucket
            .create_multipart_upload(Some(&self.credentials), key);
        for (name, value) in headers {
            action.headers_mut().insert(name.clone(), value.clone());
        }
        let what = "CreateMultipartUpload";
        let response = self
            .send(what, Method::POST, action.sign(CALL_TTL), headers, None)
            .await?;
        let body = read_answer(what, response, self.timeouts.idle).await?;
        let body = String::from_utf8_lossy(&body);
        xml::element(&body, "UploadId")
            .filter(|id| !id.is_empty())
            .ok_or_else(|| S3Error::upstream(what, "no UploadId in the answer"))
    }

    /// A presigned URL for part `number` valid for `ttl`.
    pub fn part_url(&self, key: &str, upload_id: &str, number: u16, ttl: Duration) -> Url {
        self.bucket
            .upload_part(Some(&self.credentials), key, number, upload_id)
            .sign(ttl)
    }

    /// Uploads part `number` of `size` bytes; returns its ETag.
    pub async fn upload_part(
        &self,
        key: &str,
        upload_id: &str,
        number: u16,
        size: u64,
        body: impl Into<Payload>,
    ) -> Result<String, S3Error> {
        let body = body.into();
        if body.len().is_some_and(|len| len != size) {
            return Err(S3Error::upstream(
                "UploadPart",
                format!("part {number} is not {size} bytes long"),
            ));
        }
        if number == 0 || number > MAX_PARTS {
            return Err(S3Error::upstream(
                "UploadPart",
                format!("part {number} is outside 1..={MAX_PARTS}"),
            ));
        }
        let url = self.part_url(key, upload_id, number, CALL_TTL);
        let length = [("content-length".to_owned(), size.to_string())];
        let response = self
            .send("UploadPart", Method::PUT, url, &length, Some(body))
            .await?;
        response
            .headers()
            .get(reqwest::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| S3Error::upstream("UploadPart", "no ETag in the answer"))
    }

    /// Every uploaded part of an upload, following ListParts' pages.
    pub async fn list_parts(&self, key: &str, upload_id: &str) -> Result<Vec<Part>, S3Error> {
        let mut parts = Vec::new();
        let mut marker: Option<u16> = None;
        // At most 10,000 parts at 1,000 a page: 11 pages, plus a guard against a looping store.
        for _ in 0..20 {
            let mut action = self
                .bucket
                .list_parts(Some(&self.credentials), key, upload_id);
            if let Some(marker) = marker {
                action.set_part_number_marker(marker);
            }
            let body = self
                .send_text("ListParts", Method::GET, action.sign(CALL_TTL), None)
                .await?;
            let page = ListParts::parse_response(&body)
                .map_err(|e| S3Error::upstream("ListParts answer", e))?;
            let before = parts.len();
            parts.extend(page.parts.into_iter().map(|p| Part {
                number: p.number,
                size: p.size,
                etag: p.etag,
            }));
            let truncated = xml::element(&body, "IsTruncated").is_some_and(|t| t == "true");
            match page.next_part_number_marker {
                Some(next) if truncated && parts.len() > before && Some(next) != marker => {
                    marker = Some(next)
                }
                _ => return Ok(parts),
            }
        }
        Err(S3Error::upstream("ListParts", "the listing did not end"))
    }

    /// Completes a multipart upload from `(part number, etag)` pairs sorted by number; returns
    /// the object's location. S3 may answer 200 and report the failure in the body: that is an
    /// error here, for every caller.
    pub async fn complete(
        &self,
        key: &str,
        upload_id: &str,
        parts: &[(u16, String)],
    ) -> Result<String, S3Error> {
        let mut body = String::from("<CompleteMultipartUpload>");
        for (number, etag) in parts {
            body.push_str(&format!(
                "<Part><PartNumber>{number}</PartNumber><ETag>{}</ETag></Part>",
                xml::escape(etag)
            ));
        }
        body.push_str("</CompleteMultipartUpload>");
        let url = self
            .bucket
            .complete_multipart_upload(Some(&self.credentials), key, upload_id, std::iter::empty())
            .sign(CALL_TTL);
        let what = "CompleteMultipartUpload";
        let answer = self
            .send_text(what, Method::POST, url, Some(body.into()))
            .await?;
        if answer.contains("<Error>") {
            let message = xml::element(&answer, "Message")
                .or_else(|| xml::element(&answer, "Code"))
                .unwrap_or_default();
            return Err(S3Error::Failed(format!("{what} failed: {message}")));
        }
        if !answer.contains("CompleteMultipartUploadResult") {
            return Err(S3Error::upstream(
                what,
                format!("unexpected answer: {answer}"),
            ));
        }
        Ok(xml::element(&answer, "Location").unwrap_or_else(|| self.object_url(key).to_string()))
    }

    /// Aborts a multipart upload (the store deletes its parts).
    pub async fn abort(&self, key: &str, upload_id: &str) -> Result<(), S3Error> {
        let url = self
            .bucket
            .abort_multipart_upload(Some(&self.credentials), key, upload_id)
            .sign(CALL_TTL);
        self.send("AbortMultipartUpload", Method::DELETE, url, &[], None)
            .await
            .map(drop)
    }

    /// The object at `key`, its body as a stream (each chunk within the idle time).
    pub async fn get(
        &self,
        key: &str,
    ) -> Result<BoxStream<'static, Result<Bytes, S3Error>>, S3Error> {
        let response = self.get_response(key).await?;
        Ok(watched_answer(
            "GetObject body",
            response,
            self.timeouts.idle,
        ))
    }

    async fn get_response(&self, key: &str) -> Result<Response, S3Error> {
        let url = self
            .bucket
            .get_object(Some(&self.credentials), key)
            .sign(CALL_TTL);
        self.send("GetObject", Method::GET, url, &[], None).await
    }

    /// A small object's bytes.
    pub async fn get_bytes(&self, key: &str) -> Result<Vec<u8>, S3Error> {
        let response = self.get_response(key).await?;
        let bytes = read_answer("GetObject body", response, self.timeouts.idle).await?;
        Ok(bytes.to_vec())
    }

    /// Writes a small object.
    pub async fn put(&self, key: &str, bytes: impl Into<bytes::Bytes>) -> Result<(), S3Error> {
        let url = self
            .bucket
            .put_object(Some(&self.credentials), key)
            .sign(CALL_TTL);
        self.send(
            "PutObject",
            Method::PUT,
            url,
            &[],
            Some(bytes.into().into()),
        )
        .await
        .map(drop)
    }

    /// Writes `key` from `body` of `size` bytes in one PUT (a streamed body is never held
    /// whole), with `headers` such as `content-type` or `x-amz-acl` signed in.
    pub async fn put_with(
        &self,
        key: &str,
        headers: &[(String, String)],
        size: u64,
        body: impl Into<Payload>,
    ) -> Result<(), S3Error> {
        let mut action = self.bucket.put_object(Some(&self.credentials), key);
        for (name, value) in headers {
            action.headers_mut().insert(name.clone(), value.clone());
        }
        let mut sent = headers.to_vec();
        sent.push(("content-length".to_owned(), size.to_string()));
        self.send(
            "PutObject",
            Method::PUT,
            action.sign(CALL_TTL),
            &sent,
            Some(body.into()),
        )
        .await
        .map(drop)
    }

    /// Deletes `key`; a missing object is fine.
    pub async fn delete(&self, key: &str) -> Result<(), S3Error> {
        let url = self
            .bucket
            .delete_object(Some(&self.credentials), key)
            .sign(CALL_TTL);
        match self
            .send("DeleteObject", Method::DELETE, url, &[], None)
            .await
        {
            Err(e) if !e.is_not_found() => Err(e),
            _ => Ok(()),
        }
    }

    /// Every key under `prefix`, all pages.
    pub async fn list_keys(&self, prefix: &str) -> Result<Vec<String>, S3Error> {
        let mut keys = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut list = ListObjectsV2::new(&self.bucket, Some(&self.credentials));
            if !prefix.is_empty() {
                list.with_prefix(prefix);
            }
            if let Some(token) = &token {
                list.with_continuation_token(token.as_str());
            }
            let body = self
                .send_text("ListObjectsV2", Method::GET, list.sign(CALL_TTL), None)
                .await?;
            let page = ListObjectsV2::parse_response(&body)
                .map_err(|e| S3Error::upstream("ListObjectsV2 answer", e))?;
            keys.extend(page.contents.into_iter().map(|o| o.key));
            token = page.next_continuation_token;
            if token.is_none() {
                return Ok(keys);
            }
        }
    }
}

/// The HTTP client of [`S3Client::new`]: `timeouts`' connect bound, keep-alive probes so a
/// silently dead connection is noticed.
fn http_client(timeouts: &S3Timeouts) -> Result<reqwest::Client, S3Error> {
    reqwest::Client::builder()
        .connect_timeout(timeouts.connect)
        .tcp_keepalive(Duration::from_secs(30))
        .build()
        .map_err(|e| S3Error::Config(format!("HTTP client: {e}")))
}
