//! In-process fakes of Google (OAuth + Drive v3), Instagram (Instagram Login + Graph), Box
//! (OAuth 2.0 with rotating refresh tokens + API 2.0), Microsoft (identity platform v2.0 +
//! Graph v1.0 for OneDrive and SharePoint), Unsplash (search API), Dropbox (OAuth 2 + API v2),
//! Zoom (OAuth with rotating refresh tokens + cloud recordings) and Facebook (Login + Graph),
//! speaking the documented wire shapes on `127.0.0.1:0`, with fault switches (expired access
//! tokens, revoked refresh tokens, 429 and 403 rate limits, 500s, 503s with `Retry-After` on
//! downloads, slow and cut download bodies), so the production provider code is what the tests
//! run.
//!
//! # Layout
//!
//! [`Faults`] and the download body helper here; [`bench`]: the fixture of `bench/providers/`; [`oauth`]: the authorize / consent / token
//! endpoints the OAuth fakes share ([`oauth::Authority`]); [`google`]: [`google::FakeGoogle`];
//! [`google_photos`]: [`google_photos::FakePhotos`] (the Photos Picker API);
//! [`instagram`]: [`instagram::FakeInstagram`]; [`r#box`]: [`r#box::FakeBox`];
//! [`onedrive`]: [`onedrive::FakeOneDrive`]; [`unsplash`]: [`unsplash::FakeUnsplash`];
//! [`dropbox`]: [`dropbox::FakeDropbox`]; [`zoom`]: [`zoom::FakeZoom`];
//! [`facebook`]: [`facebook::FakeFacebook`]; [`webdav`]: [`webdav::FakeWebDav`] (a
//! Nextcloud-like WebDAV server); [`switches`]: the fault switches `ferry-fakes` reads on stdin.

pub mod bench;
pub mod r#box;
pub mod dropbox;
pub mod facebook;
pub mod google;
pub mod google_photos;
pub mod instagram;
pub mod oauth;
pub mod onedrive;
pub mod switches;
pub mod unsplash;
pub mod webdav;
pub mod zoom;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use rand::RngCore;

/// Fault switches shared by the fakes' API routes.
#[derive(Debug, Default)]
pub struct Faults {
    /// Every access token is refused (as if expired).
    pub expire_access: AtomicBool,
    /// Every refresh is refused (`invalid_grant`).
    pub revoke_refresh: AtomicBool,
    /// Refreshes return a new refresh token and retire the old one.
    pub rotate_refresh: AtomicBool,
    /// The next N API calls answer 429 with `Retry-After` ([`Faults::retry_after`]).
    pub too_many: AtomicU32,
    /// Seconds a 429 asks the client to wait (`Retry-After`, and Dropbox's body field).
    pub retry_after: AtomicU64,
    /// `Retry-After` is sent as an HTTP-date that many seconds ahead, not as delta-seconds.
    pub retry_after_date: AtomicBool,
    /// The next N download answers (any fake's content or download host, [`download`]) are
    /// `503 Service Unavailable` with `Retry-After` ([`Faults::retry_after`]): a throttled
    /// download host, as Graph's and Dropbox's content hosts answer under load.
    pub unavailable: AtomicU32,
    /// The next N API calls answer Google's 403 `userRateLimitExceeded`.
    pub rate_limited: AtomicU32,
    /// The next N API calls answer 500.
    pub server_error: AtomicU32,
    /// Milliseconds slept before each 64 KiB of a download body.
    pub slow_ms: AtomicU64,
    /// The next download body breaks off after this many bytes (0: off; one-shot).
    pub cut_after: AtomicU64,
}

impl Faults {
    /// Takes one unit of [`Faults::too_many`]: the `Retry-After` value to answer 429 with.
    pub fn take_too_many(&self) -> Option<HeaderValue> {
        Self::take(&self.too_many).then(|| self.retry_after_value())
    }

    /// The `Retry-After` value the rate-limit faults send.
    pub fn retry_after_value(&self) -> HeaderValue {
        let secs = self.retry_after.load(Ordering::SeqCst);
        let text = if self.retry_after_date.load(Ordering::SeqCst) {
            httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(secs))
        } else {
            secs.to_string()
        };
        HeaderValue::from_str(&text).unwrap_or(HeaderValue::from_static("1"))
    }

    /// Takes one unit of a counted fault.
    pub fn take(counter: &AtomicU32) -> bool {
        counter
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }
}

/// A random lowercase hex string of `n` bytes.
pub fn random_hex(n: usize) -> String {
    let mut raw = vec![0u8; n];
    rand::rng().fill_bytes(&mut raw);
    raw.iter().map(|b| format!("{b:02x}")).collect()
}

/// A `302 Found` to `location` (what OAuth servers answer).
pub fn found(location: &str) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, location.to_owned())]).into_response()
}

/// The start (and inclusive end) of a `Range: bytes=N-[M]` header.
fn range(headers: &HeaderMap) -> Option<(u64, Option<u64>)> {
    let raw = headers.get(header::RANGE)?.to_str().ok()?;
    let spec = raw.trim().strip_prefix("bytes=")?;
    let (start, end) = spec.split_once('-')?;
    let end = if end.is_empty() {
        None
    } else {
        Some(end.parse().ok()?)
    };
    Some((start.parse().ok()?, end))
}

/// A download answer for `content`, honouring `Range` and the unavailable / slow / cut faults.
pub fn download(content: Bytes, kind: &str, headers: &HeaderMap, faults: &Faults) -> Response {
    if Faults::take(&faults.unavailable) {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, faults.retry_after_value())],
            "Service Unavailable",
        )
            .into_response();
    }
    let total = content.len() as u64;
    let (status, body, content_range) = match range(headers) {
        Some((start, end)) if start < total => {
            let end = end.unwrap_or(total - 1).min(total - 1);
            let part = content.slice(start as usize..=end as usize);
            (
                StatusCode::PARTIAL_CONTENT,
                part,
                Some(format!("bytes {start}-{end}/{total}")),
            )
        }
        Some(_) if total > 0 => {
            return (
                StatusCode::RANGE_NOT_SATISFIABLE,
                [(header::CONTENT_RANGE, format!("bytes */{total}"))],
            )
                .into_response();
        }
        _ => (StatusCode::OK, content, None),
    };
    let len = body.len();
    let slow = Duration::from_millis(faults.slow_ms.load(Ordering::SeqCst));
    let cut = faults.cut_after.swap(0, Ordering::SeqCst);
    let stream = futures_util::stream::unfold(0usize, move |at| {
        let body = body.clone();
        async move {
            if at >= body.len() {
                return None;
            }
            if !slow.is_zero() {
                tokio::time::sleep(slow).await;
            }
            if cut > 0 && at as u64 >= cut {
                // Let the bytes before the cut (and the headers) leave first.
                tokio::time::sleep(Duration::from_millis(100)).await;
                return Some((
                    Err(std::io::Error::other("cut by fault switch")),
                    usize::MAX,
                ));
            }
            let mut next = (at + 64 * 1024).min(body.len());
            if cut > 0 && (at as u64) < cut && next as u64 > cut {
                next = cut as usize;
            }
            Some((Ok::<_, std::io::Error>(body.slice(at..next)), next))
        }
    });
    let mut resp = Body::from_stream(stream).into_response();
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(header::CONTENT_LENGTH, len.into());
    if let Ok(v) = kind.parse() {
        h.insert(header::CONTENT_TYPE, v);
    }
    h.insert(
        header::ACCEPT_RANGES,
        axum::http::HeaderValue::from_static("bytes"),
    );
    if let Some(cr) = content_range.and_then(|c| c.parse().ok()) {
        h.insert(header::CONTENT_RANGE, cr);
    }
    resp
}
