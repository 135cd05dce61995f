//! `--auth-secret` and the quota flags: one bearer-token gate for every route that takes or
//! steers uploads, and the table of which routes those are.
//!
//! Protected: `/files/` (every tus verb but OPTIONS), `/upload`, `/url/*`, the progress socket
//! `/api/{token}` (browsers pass the token as `?access_token=`), the provider routes that act
//! with a provider session (`list`, `get`, `logout`, `thumbnail`, `refresh-token`) and `/s3/*`.
//! Open: CORS preflights, the page, `/health`, `/metrics`, `/providers`, `/openapi.json`, and
//! the provider login steps (`connect`, `redirect`, `callback`, `send-token`, the auth-callback
//! socket): they are browser navigations that cannot carry a header, and the sealed OAuth state
//! already binds them to the page that started them.

use std::time::Duration;

use axum::http::Method;
use clap::Args;
use ferry_auth::Secret;
use ferry_auth::{Gate, Quota};

use crate::config::secret;

/// Access control options.
#[derive(Clone, Debug, Default, Args)]
pub struct AuthArgs {
    /// Shared secret of the host application: when set, uploads, transfers, provider browsing and
    /// S3 signing need `Authorization: Bearer <token>`, an HS256 JWT signed with it carrying
    /// `sub` and `exp` (and optional `max_size`, `types`, `prefix`); see docs/security.md. Never logged.
    #[arg(
        long = "auth-secret",
        env = "FERRY_AUTH_SECRET",
        hide_env_values = true,
        value_parser = secret
    )]
    pub token_secret: Option<Secret>,

    /// Bytes each token subject may upload per --quota-window (no quota when unset). A file
    /// larger than the quota is refused with 413, one that does not fit what is left with 429.
    #[arg(
        long = "quota-bytes",
        env = "FERRY_QUOTA_BYTES",
        requires = "token_secret"
    )]
    pub quota_bytes: Option<u64>,

    /// The quota's sliding window, in seconds.
    #[arg(
        long = "quota-window",
        env = "FERRY_QUOTA_WINDOW",
        default_value_t = 86_400,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub quota_window: u64,
}

impl AuthArgs {
    /// The gate of `--auth-secret`, guarding the routes [`protected`] names; `None` when
    /// access control is off.
    pub fn gate(&self) -> Option<Gate> {
        let secret = self.token_secret.as_ref()?;
        let gate = Gate::new(secret.expose().as_bytes(), protected);
        Some(match self.quota_bytes {
            Some(bytes) => {
                gate.with_quota(Quota::new(bytes, Duration::from_secs(self.quota_window)))
            }
            None => gate,
        })
    }

    /// The gate of the `/s3/*` routes: `--auth-secret`'s, else the older `--s3-auth-secret`,
    /// which guards only those routes.
    pub fn s3_gate(&self, s3_secret: Option<&Secret>) -> Option<Gate> {
        self.gate()
            .or_else(|| s3_secret.map(|secret| Gate::new(secret.expose().as_bytes(), |_, _| true)))
    }
}

/// Provider route steps that act with a provider session (the second path segment).
const PROVIDER_ACTIONS: [&str; 6] = [
    "list",
    "get",
    "logout",
    "thumbnail",
    "refresh-token",
    "search",
];

/// Whether a request needs a token (see the module docs). `/s3/*` is guarded by its own
/// router, so that `--s3-auth-secret` alone still protects it.
pub fn protected(method: &Method, path: &str) -> bool {
    if method == Method::OPTIONS {
        return false;
    }
    let mut segments = path.trim_start_matches('/').split('/');
    let first = segments.next().unwrap_or_default();
    match first {
        "files" | "upload" | "url" | "api" => true,
        "" | "s3" | "api2" | "health" | "metrics" | "providers" | "openapi.json" | "assets" => {
            false
        }
        _ => segments
            .next()
            .is_some_and(|action| PROVIDER_ACTIONS.contains(&action)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_route_table() {
        for (method, path, want) in [
            (Method::POST, "/files/", true),
            (Method::HEAD, "/files/abc", true),
            (Method::OPTIONS, "/files/abc", false),
            (Method::POST, "/upload", true),
            (Method::PUT, "/upload/raw", true),
            (Method::GET, "/upload/abc", true),
            (Method::POST, "/url/meta", true),
            (Method::POST, "/url/get", true),
            (Method::GET, "/api/0123abcd", true),
            (Method::GET, "/drive/list/root", true),
            (Method::GET, "/dropbox/search", true),
            (Method::POST, "/drive/get/abc", true),
            (Method::GET, "/instagram/logout", true),
            (Method::GET, "/drive/thumbnail/x", true),
            (Method::GET, "/drive/refresh-token", true),
            (Method::GET, "/drive/connect", false),
            (Method::GET, "/drive/redirect", false),
            (Method::GET, "/drive/callback", false),
            (Method::GET, "/drive/send-token", false),
            (Method::GET, "/api2/auth-callback/token/x", false),
            (Method::GET, "/s3/params", false),
            (Method::GET, "/health", false),
            (Method::GET, "/metrics", false),
            (Method::GET, "/providers", false),
            (Method::GET, "/openapi.json", false),
            (Method::GET, "/", false),
            (Method::GET, "/assets/list", false),
            (Method::GET, "/index.html", false),
        ] {
            assert_eq!(protected(&method, path), want, "{method} {path}");
        }
    }

    /// The OpenAPI document marks exactly the routes the gate guards (the S3 routes are guarded
    /// by their own router, with the same secret or `--s3-auth-secret`).
    #[test]
    fn the_openapi_document_agrees_with_the_gate() {
        let doc = serde_json::to_value(crate::openapi::document()).expect("json");
        let paths = doc["paths"].as_object().expect("paths");
        let mut checked = 0;
        for (path, item) in paths {
            let concrete = path.replace("{provider}", "drive");
            let concrete: String = concrete
                .split('/')
                .map(|s| if s.starts_with('{') { "x" } else { s })
                .collect::<Vec<_>>()
                .join("/");
            for (name, op) in item.as_object().expect("item") {
                let Ok(method) = name.to_ascii_uppercase().parse::<Method>() else {
                    continue;
                };
                let Some(op) = op.as_object() else { continue };
                let documented = op
                    .get("security")
                    .and_then(|s| s.as_array())
                    .is_some_and(|s| s.iter().any(|r| r.get("bearerAuth").is_some()));
                let guarded = protected(&method, &concrete) || concrete.starts_with("/s3/");
                assert_eq!(documented, guarded, "{method} {path}");
                checked += 1;
            }
        }
        assert!(checked > 30, "{checked}");
    }
}
