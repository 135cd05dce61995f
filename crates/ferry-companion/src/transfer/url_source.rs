//! A public URL as a source: a GET through the SSRF-safe source client, from a given byte with
//! `Range` when resuming. A server that ignores `Range` sends the whole file again, and the
//! feeder skips to the offset. Once the source has given a validator (a strong `ETag`, else
//! `Last-Modified`), a resumed GET carries it in `If-Range`, and a full answer with another
//! validator means the file changed: the transfer fails rather than splicing two files. A
//! partial answer is checked too, since some origins ignore `If-Range` and answer 206 from
//! whatever the file is now.

use std::sync::Mutex;

use futures_util::{StreamExt, TryStreamExt};
use reqwest::StatusCode;
use reqwest::header::{
    CONTENT_LENGTH, CONTENT_RANGE, ETAG, HeaderMap, HeaderValue, IF_RANGE, LAST_MODIFIED, RANGE,
};
use url::Url;

use super::TransferError;
use super::source::{Opened, Source};
use crate::names::path_name;

/// A file behind a public URL.
#[derive(Debug)]
pub struct UrlSource {
    client: reqwest::Client,
    url: Url,
    known: Mutex<Known>,
}

/// What the source said about the file so far.
#[derive(Debug, Default)]
struct Known {
    size: Option<u64>,
    validator: Option<HeaderValue>,
}

impl UrlSource {
    /// The file at `url` (already checked against the egress rules), fetched with `client`.
    pub fn new(client: reqwest::Client, url: Url) -> Self {
        Self {
            client,
            url,
            known: Mutex::default(),
        }
    }

    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        // Two plain fields: a holder's panic cannot leave them inconsistent.
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait::async_trait]
impl Source for UrlSource {
    async fn open(&self, from: u64) -> Result<Opened, TransferError> {
        let mut request = self.client.get(self.url.clone());
        let sent_validator = if from > 0 {
            request = request.header(RANGE, format!("bytes={from}-"));
            let validator = self.known().validator.clone();
            if let Some(v) = &validator {
                request = request.header(IF_RANGE, v.clone());
            }
            validator
        } else {
            None
        };
        let resp = request.send().await.map_err(|e| {
            if crate::egress::is_refusal(&e) {
                TransferError::Fatal("URL not allowed".into())
            } else {
                TransferError::Retryable(format!("source: {e}"))
            }
        })?;
        let (total, skip) = match resp.status() {
            StatusCode::PARTIAL_CONTENT if from > 0 => {
                let range = resp
                    .headers()
                    .get(CONTENT_RANGE)
                    .and_then(|v| v.to_str().ok());
                let (start, total) = parse_content_range(range.unwrap_or(""))
                    .ok_or_else(|| TransferError::Retryable("source: bad Content-Range".into()))?;
                if start != from {
                    return Err(TransferError::Retryable("source: wrong range".into()));
                }
                if sent_validator
                    .as_ref()
                    .is_some_and(|sent| differs(sent, resp.headers()))
                {
                    return Err(changed());
                }
                (total, 0)
            }
            s if s.is_success() => {
                if sent_validator.is_some() && sent_validator != validator(resp.headers()) {
                    return Err(changed());
                }
                (header_u64(resp.headers(), CONTENT_LENGTH), from)
            }
            s if s.is_server_error() || s == StatusCode::TOO_MANY_REQUESTS => {
                return Err(TransferError::Retryable(format!("source answered {s}")));
            }
            s => {
                return Err(TransferError::Fatal(format!(
                    "Failed to fetch the file (the source answered {})",
                    s.as_u16()
                )));
            }
        };
        {
            let mut known = self.known();
            known.size = total;
            if known.validator.is_none() {
                known.validator = validator(resp.headers());
            }
        }
        let stream = resp
            .bytes_stream()
            .map_err(|e| TransferError::Retryable(format!("source: {e}")))
            .boxed();
        Ok(Opened { stream, skip })
    }

    fn size(&self) -> Option<u64> {
        self.known().size
    }

    fn name(&self) -> Option<String> {
        path_name(&self.url)
    }

    fn origin(&self) -> Option<String> {
        Some(self.url.to_string())
    }

    fn validator(&self) -> Option<String> {
        self.known()
            .validator
            .as_ref()
            .and_then(|v| v.to_str().ok().map(str::to_owned))
    }

    fn restore_validator(&self, validator: &str) {
        if let Ok(value) = HeaderValue::from_str(validator) {
            self.known().validator = Some(value);
        }
    }
}

fn header_u64(headers: &HeaderMap, name: reqwest::header::HeaderName) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}

/// The validator `If-Range` may carry: a strong `ETag`, else `Last-Modified`.
fn validator(headers: &HeaderMap) -> Option<HeaderValue> {
    let strong = headers
        .get(ETAG)
        .filter(|v| !v.as_bytes().starts_with(b"W/"));
    strong.or_else(|| headers.get(LAST_MODIFIED)).cloned()
}

/// The error of a source that is no longer the file the transfer started from.
fn changed() -> TransferError {
    TransferError::Fatal("Upload error: the source changed during the transfer".into())
}

/// Whether a partial answer names another version than `sent` (the validator `If-Range`
/// carried): its `ETag` when `sent` was an `ETag`, else its `Last-Modified`. An answer without
/// that header cannot tell, and is taken as the same file.
fn differs(sent: &HeaderValue, headers: &HeaderMap) -> bool {
    let is_etag = sent.as_bytes().starts_with(b"\"");
    let now = headers.get(if is_etag { ETAG } else { LAST_MODIFIED });
    now.is_some_and(|now| now != sent)
}

/// `bytes START-END/TOTAL` -> (START, TOTAL or None for `*`).
fn parse_content_range(value: &str) -> Option<(u64, Option<u64>)> {
    let rest = value.trim().strip_prefix("bytes ")?;
    let (range, total) = rest.split_once('/')?;
    let (start, _) = range.split_once('-')?;
    let total = if total.trim() == "*" {
        None
    } else {
        Some(total.trim().parse().ok()?)
    };
    Some((start.trim().parse().ok()?, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_range() {
        assert_eq!(parse_content_range("bytes 5-9/10"), Some((5, Some(10))));
        assert_eq!(parse_content_range("bytes 5-9/*"), Some((5, None)));
        assert_eq!(parse_content_range("bytes x-9/10"), None);
        assert_eq!(parse_content_range("items 5-9/10"), None);
    }

    #[test]
    fn a_partial_answer_differs_only_by_the_validator_of_the_same_kind() {
        let etag = HeaderValue::from_static("\"v1\"");
        let date = HeaderValue::from_static("Tue, 01 Jul 2025 10:00:00 GMT");
        let mut headers = HeaderMap::new();
        assert!(!differs(&etag, &headers), "no validator: cannot tell");
        headers.insert(
            LAST_MODIFIED,
            HeaderValue::from_static("Wed, 02 Jul 2025 10:00:00 GMT"),
        );
        assert!(
            !differs(&etag, &headers),
            "an ETag is compared with an ETag"
        );
        assert!(differs(&date, &headers));
        headers.insert(ETAG, HeaderValue::from_static("\"v2\""));
        assert!(differs(&etag, &headers));
        headers.insert(ETAG, etag.clone());
        assert!(!differs(&etag, &headers));
    }

    #[test]
    fn if_range_prefers_a_strong_etag() {
        let mut headers = HeaderMap::new();
        headers.insert(
            LAST_MODIFIED,
            HeaderValue::from_static("Tue, 01 Jul 2025 10:00:00 GMT"),
        );
        headers.insert(ETAG, HeaderValue::from_static("W/\"weak\""));
        assert_eq!(validator(&headers), headers.get(LAST_MODIFIED).cloned());
        headers.insert(ETAG, HeaderValue::from_static("\"v1\""));
        assert_eq!(
            validator(&headers),
            Some(HeaderValue::from_static("\"v1\""))
        );
        assert_eq!(validator(&HeaderMap::new()), None);
    }
}
