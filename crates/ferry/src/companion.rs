//! `ferry serve`'s companion options (`--allow-local-urls`, `--upload-urls`, ...) and their
//! translation into the companion library's settings, and the application handed to the
//! companion so imports into this server's own tus endpoint skip the loopback round trip.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, Response};
use clap::Args;
use ferry_companion::CompanionConfig;
use ferry_companion::s3::S3State;
use ferry_companion::transfer::{LocalApp, LocalEndpoint};
use tower::ServiceExt;

/// Options of the companion routes (link import, remote transfers, progress socket).
#[derive(Clone, Debug, Default, Args)]
pub struct CompanionArgs {
    /// Let link imports reach loopback, private, link-local and other non-public addresses.
    #[arg(long, env = "FERRY_ALLOW_LOCAL_URLS")]
    pub allow_local_urls: bool,

    /// Allowed transfer destinations, comma-separated origins or origin + path prefixes
    /// (e.g. `https://up.example.com/files/`) [default: this server's /files/ and /upload].
    #[arg(long, env = "FERRY_UPLOAD_URLS", value_delimiter = ',')]
    pub upload_urls: Vec<String>,

    /// Browser origins allowed to call the companion routes, comma-separated (`*`: any).
    #[arg(long, env = "FERRY_CORS_ORIGINS", value_delimiter = ',')]
    pub cors_origins: Vec<String>,

    /// Secret shared by all instances (also Companion's `COMPANION_SECRET`): seals cloud-provider
    /// tokens and login state in Companion's format; required when a provider is enabled.
    /// Never logged.
    #[arg(long, env = "FERRY_SECRET", hide_env_values = true, value_parser = crate::config::secret)]
    pub secret: Option<ferry_auth::Secret>,

    /// Largest file a link import may transfer, in bytes (no limit when unset).
    #[arg(long, env = "FERRY_MAX_FILE_SIZE")]
    pub max_file_size: Option<u64>,

    /// Seconds a transfer waits for its progress socket before it is dropped.
    #[arg(long, env = "FERRY_SOCKET_WAIT", default_value_t = 60)]
    pub socket_wait: u64,

    /// Seconds without progress after which a transfer fails as stalled.
    #[arg(long, env = "FERRY_STALL_TIMEOUT", default_value_t = 30)]
    pub stall_timeout: u64,

    /// This server's public URL (e.g. `https://files.example.com`), whose /files/ and /upload
    /// are allowed destinations by default [default: the listen address].
    #[arg(long, env = "FERRY_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Cloud providers (Google Drive, Instagram).
    #[command(flatten)]
    pub providers: crate::providers::ProviderArgs,

    /// Google Drive Picker and Google Photos Picker imports.
    #[command(flatten)]
    pub google_picker: crate::google_picker::GooglePickerArgs,

    /// Send imports into this server's own tus endpoint over loopback HTTP, as to any other
    /// destination, instead of handing them to it in process. Hidden: it exists to measure the
    /// hand-off against the HTTP path with one build, and to rule it out when diagnosing.
    #[arg(long, env = "FERRY_NO_LOCAL_HANDOFF", hide = true)]
    pub no_local_handoff: bool,
}

impl CompanionArgs {
    /// The library settings, for a server listening on `listen`, with the bucket of
    /// `s3-multipart` transfers when one is configured. Fails on half-configured providers.
    pub fn to_config(
        &self,
        listen: SocketAddr,
        s3: Option<S3State>,
    ) -> std::io::Result<CompanionConfig> {
        let providers = self
            .providers
            .to_config(self.public_url.as_deref())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        if let Some(warning) = star_warning(&self.cors_origins, providers.any_enabled()) {
            tracing::warn!("{warning}");
        }
        Ok(CompanionConfig {
            allow_local_urls: self.allow_local_urls,
            upload_urls: self.upload_urls.clone(),
            own_origins: own_origins(self.public_url.as_deref(), listen),
            cors_origins: self.cors_origins.clone(),
            max_file_size: self.max_file_size,
            socket_wait: Duration::from_secs(self.socket_wait),
            stall_timeout: Duration::from_secs(self.stall_timeout.max(1)),
            secret: self.secret.clone(),
            s3,
            providers,
            google_picker: self.google_picker.to_config(&self.providers.google_api_url),
            ..CompanionConfig::default()
        })
    }
}

/// Attaches `app` (the whole application, with its auth gate, hooks, limits and logging) to
/// `endpoint`, so the companion's requests to this server's own origins are served in process.
/// Skipped with `--no-local-handoff`.
pub fn hand_off(args: &CompanionArgs, endpoint: &LocalEndpoint, app: &Router) {
    if !args.no_local_handoff {
        endpoint.attach(Arc::new(InProcess(app.clone())));
    }
}

/// The application as the companion reaches it without a socket.
#[derive(Debug)]
struct InProcess(Router);

/// The peer an in-process request comes from: this host, as a loopback connection from the
/// companion would (per-client caps and hooks' `RemoteAddr` see the same address).
const SELF_PEER: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

impl LocalApp for InProcess {
    fn call(
        &self,
        mut request: Request<Body>,
    ) -> std::pin::Pin<Box<dyn Future<Output = Response<Body>> + Send>> {
        request.extensions_mut().insert(ConnectInfo(SELF_PEER));
        let app = self.0.clone();
        Box::pin(async move {
            match app.oneshot(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            }
        })
    }
}

/// What to say at start when `--cors-origins` allows any page and a provider is enabled: such
/// pages may call the routes, but provider tokens go only to origins named (or this server's).
fn star_warning(cors_origins: &[String], providers: bool) -> Option<&'static str> {
    let star = cors_origins
        .iter()
        .any(|o| matches!(o.trim(), "*" | "true"));
    (star && providers).then_some(
        "--cors-origins '*' lets any page call the companion, but provider logins hand their \
         token only to origins named in --cors-origins (and this server's own): name your \
         page's origin there, or its logins fail with \"Origin not allowed\"",
    )
}

/// The origins under which this server reaches itself: the public URL, and the listen address
/// (with `localhost` beside a loopback address, and loopback for a wildcard address).
fn own_origins(public_url: Option<&str>, listen: SocketAddr) -> Vec<String> {
    let mut out: Vec<String> = public_url
        .map(|u| u.trim_end_matches('/').to_owned())
        .into_iter()
        .collect();
    let port = listen.port();
    let ip = listen.ip();
    if ip.is_unspecified() || ip.is_loopback() {
        out.push(format!("http://localhost:{port}"));
        out.push(format!("http://127.0.0.1:{port}"));
        out.push(format!("http://[::1]:{port}"));
    }
    if !ip.is_unspecified() && !ip.is_loopback() {
        out.push(match ip {
            IpAddr::V4(v4) => format!("http://{v4}:{port}"),
            IpAddr::V6(v6) => format!("http://[{v6}]:{port}"),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::star_warning;

    #[test]
    fn cors_star_with_a_provider_warns_at_start() {
        let star = vec!["*".to_owned()];
        let named = vec!["https://app.example".to_owned()];
        let warning = star_warning(&star, true).expect("a warning");
        assert!(warning.contains("only to origins named"), "{warning}");
        assert!(star_warning(&[" true ".to_owned()], true).is_some());
        assert_eq!(star_warning(&star, false), None);
        assert_eq!(star_warning(&named, true), None);
    }
}
