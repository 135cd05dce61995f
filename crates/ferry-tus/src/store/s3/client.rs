//! The s3 store's HTTP side: presigned URLs from `rusty-s3` (SigV4 without I/O) sent with
//! `reqwest`. Status codes become [`StoreError`]s here; S3's error bodies are logged by status only.

use std::time::Duration;

use reqwest::{Method, Response, Url};
use rusty_s3::actions::ListObjectsV2;
use rusty_s3::{Bucket, Credentials, S3Action};

use crate::store::StoreError;

/// How long each presigned request stays valid; requests are signed right before sending.
const SIGN_FOR: Duration = Duration::from_secs(15 * 60);

/// A bucket, its credentials and an HTTP client.
#[derive(Clone)]
pub(super) struct Client {
    pub(super) bucket: Bucket,
    pub(super) creds: Credentials,
    pub(super) http: reqwest::Client,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("bucket", &self.bucket.name())
            .finish_non_exhaustive()
    }
}

/// A failure talking to S3, as a store error that the handler logs and answers 500 for.
pub(super) fn s3_error(what: &str, detail: impl std::fmt::Display) -> StoreError {
    StoreError::Io(std::io::Error::other(format!("s3 {what}: {detail}")))
}

impl Client {
    /// Signs `action` and sends it with `body`; 404 is [`StoreError::NotFound`].
    pub(super) async fn send(
        &self,
        what: &str,
        method: Method,
        action: &impl S3Action<'_>,
        body: Option<reqwest::Body>,
    ) -> Result<Response, StoreError> {
        self.send_url(what, method, action.sign(SIGN_FOR), body)
            .await
    }

    pub(super) async fn send_url(
        &self,
        what: &str,
        method: Method,
        url: Url,
        body: Option<reqwest::Body>,
    ) -> Result<Response, StoreError> {
        let mut req = self.http.request(method, url);
        if let Some(body) = body {
            req = req.body(body);
        }
        let res = req.send().await.map_err(|e| s3_error(what, e))?;
        match res.status().as_u16() {
            200..=299 => Ok(res),
            404 => Err(StoreError::NotFound),
            status => Err(s3_error(what, format!("HTTP {status}"))),
        }
    }

    pub(super) async fn get_bytes(&self, key: &str) -> Result<Vec<u8>, StoreError> {
        let action = self.bucket.get_object(Some(&self.creds), key);
        let res = self.send("get", Method::GET, &action, None).await?;
        let bytes = res.bytes().await.map_err(|e| s3_error("get body", e))?;
        Ok(bytes.to_vec())
    }

    pub(super) async fn put_bytes(&self, key: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        let action = self.bucket.put_object(Some(&self.creds), key);
        self.send("put", Method::PUT, &action, Some(bytes.into()))
            .await?;
        Ok(())
    }

    /// Deletes `key`; a missing object is fine.
    pub(super) async fn delete(&self, key: &str) -> Result<(), StoreError> {
        let action = self.bucket.delete_object(Some(&self.creds), key);
        match self.send("delete", Method::DELETE, &action, None).await {
            Ok(_) | Err(StoreError::NotFound) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Every key under `prefix`, all pages.
    pub(super) async fn list_keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let mut keys = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut list = ListObjectsV2::new(&self.bucket, Some(&self.creds));
            if !prefix.is_empty() {
                list.with_prefix(prefix);
            }
            if let Some(token) = &token {
                list.with_continuation_token(token.as_str());
            }
            let res = self.send("list", Method::GET, &list, None).await?;
            let body = res.text().await.map_err(|e| s3_error("list", e))?;
            let page = ListObjectsV2::parse_response(&body).map_err(|e| s3_error("list", e))?;
            keys.extend(page.contents.into_iter().map(|o| o.key));
            token = page.next_continuation_token;
            if token.is_none() {
                return Ok(keys);
            }
        }
    }
}
