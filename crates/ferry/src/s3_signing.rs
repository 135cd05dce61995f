//! Turns the `--s3-*` options into the companion's S3 signing settings and its `/s3/*` router.
//! `compat` maps most of Companion's `COMPANION_AWS_*` names onto `FERRY_S3_*`; the two it
//! does not (`COMPANION_AWS_PREFIX`, `COMPANION_AWS_EXPIRES`) are read here when the Ferry
//! options are left at their defaults.

use std::time::Duration;

use ferry_companion::s3::{S3Settings, S3State};

use crate::config::S3Args;

/// Presigned URL validity when nothing else is configured, in seconds.
const DEFAULT_EXPIRES: u64 = 300;

fn companion_env(name: &str) -> Option<String> {
    std::env::var(format!("COMPANION_AWS_{name}"))
        .ok()
        .filter(|v| !v.is_empty())
}

/// The signing settings, or `None` when no bucket is configured (the `/s3/*` routes are then
/// not mounted).
pub fn settings(args: &S3Args) -> Option<S3Settings> {
    let bucket = args.bucket.clone()?;
    let endpoint = args
        .endpoint
        .clone()
        .unwrap_or_else(|| format!("https://s3.{}.amazonaws.com", args.region));
    let key_prefix = if args.key_prefix.is_empty() {
        companion_env("PREFIX").unwrap_or_default()
    } else {
        args.key_prefix.clone()
    };
    let expires = match args.expires {
        0 | DEFAULT_EXPIRES => companion_env("EXPIRES")
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_EXPIRES),
        other => other,
    };
    Some(S3Settings {
        endpoint,
        bucket,
        region: args.region.clone(),
        access_key: args.access_key.clone().unwrap_or_default(),
        secret_key: args.secret_key.clone().unwrap_or_default(),
        force_path_style: args.force_path_style,
        key_prefix,
        expires: Duration::from_secs(expires),
        auth_secret: args.auth_secret.clone(),
    })
}

/// The `/s3/*` routes when a bucket is configured, else an empty router.
pub fn router(args: &S3Args) -> std::io::Result<axum::Router> {
    let Some(settings) = settings(args) else {
        return Ok(axum::Router::new());
    };
    let state = S3State::new(settings)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    tracing::info!(bucket = %state.settings.bucket, "S3 signing routes at /s3/");
    Ok(ferry_companion::s3::router(state))
}

/// [`router`] behind the companion's CORS layer (`--cors-origins`), so pages on other origins
/// can call the `/s3/*` routes, `Authorization` included.
pub fn router_with_cors(args: &S3Args, cors_origins: &[String]) -> std::io::Result<axum::Router> {
    Ok(router(args)?.layer(ferry_companion::cors::layer(cors_origins)))
}
