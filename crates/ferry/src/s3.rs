//! The `--s3-*` options turned, in one place, into the one bucket both S3 users share: the tus
//! store (`--store s3`) and the companion's signing routes and `s3-multipart` transfers.
//! Companion's `COMPANION_AWS_*` names reach these options through `compat`.

use std::time::Duration;

use ferry_companion::s3::{S3Settings, S3State};
use ferry_s3::S3Bucket;

use crate::config::S3Args;

/// The bucket, or `None` when no bucket is configured. Without `--s3-endpoint`, AWS's endpoint
/// for the region.
pub fn bucket(args: &S3Args) -> Option<S3Bucket> {
    Some(S3Bucket {
        endpoint: args
            .endpoint
            .clone()
            .unwrap_or_else(|| S3Bucket::aws_endpoint(&args.region)),
        bucket: args.bucket.clone()?,
        region: args.region.clone(),
        access_key: args.access_key.clone().unwrap_or_default(),
        secret_key: args.secret_key.clone().unwrap_or_default(),
        force_path_style: args.force_path_style,
        key_prefix: args.key_prefix.clone(),
    })
}

/// The bounds on S3 calls: `--s3-connect-timeout` and `--s3-idle-timeout`, else the defaults.
pub fn timeouts(args: &S3Args) -> ferry_s3::S3Timeouts {
    let default = ferry_s3::S3Timeouts::default();
    ferry_s3::S3Timeouts {
        connect: args
            .connect_timeout
            .map_or(default.connect, Duration::from_secs),
        idle: args.idle_timeout.map_or(default.idle, Duration::from_secs),
    }
}

/// The signing routes' state on `bucket` (also the bucket of `s3-multipart` transfers).
pub fn signing(
    args: &S3Args,
    auth: Option<ferry_auth::Gate>,
    bucket: Option<S3Bucket>,
) -> std::io::Result<Option<S3State>> {
    let Some(bucket) = bucket else {
        return Ok(None);
    };
    let state = S3State::new(S3Settings {
        bucket,
        expires: Duration::from_secs(args.expires),
        auth,
    })
    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    tracing::info!(bucket = %state.bucket_name(), "S3 signing routes at /s3/");
    Ok(Some(state))
}

/// The `/s3/*` routes when a bucket is configured (else a 404 `S3 is not configured` for every
/// path under `/s3/`), behind the companion's CORS
/// layer (`--cors-origins`), so pages on other origins can call them, `Authorization` included.
pub fn router(state: Option<S3State>, cors_origins: &[String]) -> axum::Router {
    let routes = match state {
        Some(state) => ferry_companion::s3::router(state),
        None => {
            let unconfigured = axum::routing::any(|| async {
                crate::surface::message(axum::http::StatusCode::NOT_FOUND, "S3 is not configured")
            });
            axum::Router::new()
                .route("/s3", unconfigured.clone())
                .route("/s3/{*rest}", unconfigured)
        }
    };
    routes.layer(ferry_companion::cors::layer(cors_origins))
}
