//! Signing routes for uploads straight from the browser to an S3-compatible bucket, with the
//! wire shapes of Companion's `/s3/*` routes (so Uppy's `@uppy/aws-s3` works unchanged).
//! `ferry` only signs and drives the multipart bookkeeping; bytes never pass through it.
//!
//! # Layout
//!
//! - [`params`]: `GET /s3/params`, a presigned single PUT or POST.
//! - [`multipart`]: create, list parts, sign parts, abort; [`complete`]: complete.
//! - [`store`]: the few server-side S3 calls (create, ListParts paging, complete, abort).
//! - [`post_policy`]: SigV4 POST policy signing; [`key`]: object keys; [`auth`]: the optional
//!   bearer-token hook; [`error`]: the routes' error type.

pub mod auth;
pub mod complete;
pub mod error;
pub mod key;
pub mod multipart;
pub mod params;
pub mod post_policy;
pub mod store;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};
use rusty_s3::{Bucket, Credentials, UrlStyle};
use url::Url;

pub use error::S3Error;

/// Longest validity of a presigned URL S3 accepts (7 days); `expires` is capped to it.
pub const MAX_EXPIRES: Duration = Duration::from_secs(604_800);

/// Where and how to sign. Built by the binary from `--s3-*` flags.
#[derive(Clone, Default)]
pub struct S3Settings {
    /// `http(s)://host[:port]` of the S3 API.
    pub endpoint: String,
    pub bucket: String,
    pub region: String,
    pub access_key: String,
    /// Never logged (see the `Debug` impl).
    pub secret_key: String,
    /// Path-style addressing (`endpoint/bucket/key`), needed by Garage, MinIO and IP endpoints.
    pub force_path_style: bool,
    /// Prepended to every object key (e.g. `uploads/`).
    pub key_prefix: String,
    /// Validity of presigned URLs (capped to [`MAX_EXPIRES`]).
    pub expires: Duration,
    /// When set, S3 routes require a bearer token signed with this secret (see [`auth`]).
    pub auth_secret: Option<String>,
}

impl std::fmt::Debug for S3Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Settings")
            .field("endpoint", &self.endpoint)
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("access_key", &self.access_key)
            .field("secret_key", &"<redacted>")
            .field("force_path_style", &self.force_path_style)
            .field("key_prefix", &self.key_prefix)
            .field("expires", &self.expires)
            .field(
                "auth_secret",
                &self.auth_secret.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// Shared state of the S3 routes.
#[derive(Clone, Debug)]
pub struct S3State {
    pub settings: Arc<S3Settings>,
    pub bucket: Arc<Bucket>,
    pub credentials: Arc<Credentials>,
    pub http: reqwest::Client,
}

impl S3State {
    /// Validates `settings` (endpoint URL, bucket name) into routes' state.
    pub fn new(mut settings: S3Settings) -> Result<Self, String> {
        let endpoint = Url::parse(&settings.endpoint).map_err(|e| format!("--s3-endpoint: {e}"))?;
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
        .map_err(|e| format!("--s3-bucket/--s3-endpoint: {e}"))?;
        settings.expires = settings.expires.clamp(Duration::from_secs(1), MAX_EXPIRES);
        let credentials =
            Credentials::new(settings.access_key.clone(), settings.secret_key.clone());
        Ok(Self {
            settings: Arc::new(settings),
            bucket: Arc::new(bucket),
            credentials: Arc::new(credentials),
            http: reqwest::Client::new(),
        })
    }

    /// The validity of presigned URLs.
    pub fn expires(&self) -> Duration {
        self.settings.expires
    }
}

/// The `/s3/*` routes, behind the bearer-token check when a secret is configured.
pub fn router(state: S3State) -> Router {
    Router::new()
        .route("/s3/params", get(params::get_params))
        .route("/s3/multipart", post(multipart::create))
        .route(
            "/s3/multipart/{upload_id}",
            get(multipart::list_parts).delete(multipart::abort),
        )
        .route(
            "/s3/multipart/{upload_id}/batch",
            get(multipart::sign_batch),
        )
        .route(
            "/s3/multipart/{upload_id}/complete",
            post(complete::complete),
        )
        .route(
            "/s3/multipart/{upload_id}/{part_number}",
            get(multipart::sign_part),
        )
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_token,
        ))
        .with_state(state)
}
