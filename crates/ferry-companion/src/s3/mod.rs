//! Signing routes for uploads straight from the browser to an S3-compatible bucket, with the
//! wire shapes of Companion's `/s3/*` routes (so Uppy's `@uppy/aws-s3` works unchanged).
//! `ferry` only signs and drives the multipart bookkeeping; bytes never pass through it.
//!
//! # Layout
//!
//! - [`params`]: `GET /s3/params`, a presigned single PUT or POST.
//! - [`multipart`]: create, list parts, sign parts, abort; [`complete`]: complete.
//! - [`post_policy`]: SigV4 POST policy signing; [`key`]: object keys (bound to the token's
//!   subject when access control is on). Errors are the crate's [`CompanionError`](crate::error::CompanionError);
//!   the S3 calls themselves are [`ferry_s3::S3Client`]'s.

pub mod complete;
pub mod key;
pub mod multipart;
pub mod params;
pub mod post_policy;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};
use ferry_auth::Gate;
use ferry_s3::{S3Bucket, S3Client};

use crate::error::CompanionError;

/// Longest validity of a presigned URL S3 accepts (7 days); `expires` is capped to it.
pub const MAX_EXPIRES: Duration = Duration::from_secs(604_800);

/// Where and how to sign. Built by the binary from `--s3-*` flags.
#[derive(Clone, Debug, Default)]
pub struct S3Settings {
    /// The bucket, its credentials and the prefix of every object key (e.g. `uploads/`).
    pub bucket: S3Bucket,
    /// Validity of presigned URLs (capped to [`MAX_EXPIRES`]).
    pub expires: Duration,
    /// When set, S3 routes require a bearer token this gate accepts, and object keys carry a
    /// tag of the token's subject (`--auth-secret`, or its alias `--s3-auth-secret`).
    pub auth: Option<Gate>,
}

/// Shared state of the S3 routes.
#[derive(Clone, Debug)]
pub struct S3State {
    pub settings: Arc<S3Settings>,
    pub client: S3Client,
}

impl S3State {
    /// Validates `settings` (endpoint URL, bucket name) into routes' state.
    pub fn new(mut settings: S3Settings) -> Result<Self, CompanionError> {
        let client = S3Client::new(settings.bucket.clone())?;
        settings.expires = settings.expires.clamp(Duration::from_secs(1), MAX_EXPIRES);
        Ok(Self {
            settings: Arc::new(settings),
            client,
        })
    }

    /// The validity of presigned URLs.
    pub fn expires(&self) -> Duration {
        self.settings.expires
    }

    /// The bucket's name, as answers report it.
    pub fn bucket_name(&self) -> &str {
        &self.settings.bucket.bucket
    }
}

/// The `/s3/*` routes, behind the bearer-token gate when access control is on.
pub fn router(state: S3State) -> Router {
    let routes = Router::new()
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
        .with_state(state.clone());
    match &state.settings.auth {
        // Every S3 route needs the token, whatever the gate guards elsewhere.
        Some(gate) => routes.layer(axum::middleware::from_fn_with_state(
            gate.protecting(|_, _| true),
            Gate::middleware,
        )),
        None => routes,
    }
}
