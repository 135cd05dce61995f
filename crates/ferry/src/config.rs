//! Command line and environment: every option has a flag, a `FERRY_*` variable and a default
//! shown in `--help`. Flags win over the environment.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use ferry_auth::Secret;

#[derive(Debug, Parser)]
#[command(
    name = "ferry",
    version,
    about = "Ferry: resumable file uploads (companion + tus endpoint)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the upload page, the tus endpoint at /files/ and the companion routes.
    #[command(after_long_help = crate::openapi::route_table())]
    Serve(ServeConfig),
}

/// Options of `ferry serve`.
#[derive(Clone, Debug, Args)]
pub struct ServeConfig {
    /// Address to listen on.
    #[arg(long, env = "FERRY_LISTEN", default_value = "127.0.0.1:3020")]
    pub listen: SocketAddr,

    /// Directory where uploads are stored (created if missing).
    #[arg(long, env = "FERRY_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

    /// Directory of a built web page to serve at `/` [default: the page built into the binary].
    #[arg(long, env = "FERRY_UI_DIR")]
    pub ui_dir: Option<PathBuf>,

    /// Serve no web page: the API routes only (`/` answers 404).
    #[arg(long, env = "FERRY_NO_UI", conflicts_with = "ui_dir")]
    pub no_ui: bool,

    /// Largest upload accepted, in bytes (no limit when unset).
    #[arg(long, env = "FERRY_MAX_SIZE")]
    pub max_size: Option<u64>,

    /// Seconds a client may take to send a request's line and headers before its connection
    /// is closed (a client trickling headers, Slowloris).
    #[arg(
        long,
        env = "FERRY_HEADER_TIMEOUT",
        default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub header_timeout: u64,

    /// S3-compatible object storage, shared by the tus s3 store and the companion's S3 routes.
    #[command(flatten)]
    pub s3: S3Args,

    /// Options of the tus endpoint at /files/.
    #[command(flatten)]
    pub tus: TusArgs,

    /// Options of the companion routes (link import, transfers, progress socket).
    #[command(flatten)]
    pub companion: crate::companion::CompanionArgs,

    /// Upload lifecycle hooks (tusd's flags), sent for tus, form and companion uploads.
    #[command(flatten)]
    pub hooks: crate::hooks::HooksArgs,

    /// Access control: bearer tokens and per-subject quotas (`--auth-secret`, `--quota-*`).
    #[command(flatten)]
    pub auth: crate::auth::AuthArgs,

    /// Several instances on one Redis (`--redis-*`, `--transfer-takeover`).
    #[command(flatten)]
    pub cluster: crate::cluster::ClusterArgs,

    /// The processing service: Transloadit's Assembly API (`--assembly-*`).
    #[command(flatten)]
    pub process: crate::process::ProcessArgs,
}

/// Options of the tus endpoint.
#[derive(Clone, Debug, Args)]
pub struct TusArgs {
    /// Seconds an unfinished upload may sit untouched before it expires and its storage is
    /// reclaimed (0: never).
    #[arg(long, env = "FERRY_UPLOAD_EXPIRY", default_value_t = TusArgs::DEFAULT.upload_expiry)]
    pub upload_expiry: u64,

    /// Seconds a request body may go without delivering 1 KiB before it is cut off.
    #[arg(long, env = "FERRY_IDLE_TIMEOUT", default_value_t = TusArgs::DEFAULT.idle_timeout)]
    pub idle_timeout: u64,

    /// Uploads one client address may write at once (0: no cap).
    #[arg(long, env = "FERRY_MAX_UPLOADS_PER_CLIENT", default_value_t = TusArgs::DEFAULT.max_uploads_per_client)]
    pub max_uploads_per_client: usize,

    /// Reverse proxies (addresses or CIDR ranges, comma-separated) whose `X-Forwarded-For`
    /// names the client for --max-uploads-per-client; from anyone else the header is ignored.
    #[arg(
        long,
        env = "FERRY_TRUSTED_PROXIES",
        value_delimiter = ',',
        value_parser = parse_proxy
    )]
    pub trusted_proxies: Vec<ipnet::IpNet>,

    /// Where tus uploads are stored: `fs` (under --data-dir) or `s3` (the --s3-* bucket).
    #[arg(long, env = "FERRY_STORE", value_enum, default_value_t = StoreKind::Fs)]
    pub store: StoreKind,

    /// When the fs store syncs to disk: `always` (before acknowledging anything, so it survives
    /// power loss) or `never` (the kernel writes back in its own time: survives a crash of
    /// ferry but not of the machine, like tusd; writes no longer wait for the disk).
    #[arg(long, env = "FERRY_FSYNC", value_enum, default_value_t = FsyncPolicy::Always)]
    pub fsync: FsyncPolicy,

    /// Also speak the IETF "Resumable Uploads for HTTP" draft (interop version 8) on /files/,
    /// per request when `Upload-Draft-Interop-Version: 8` is sent.
    #[arg(long, env = "FERRY_IETF_DRAFT")]
    pub ietf_draft: bool,
}

/// `10.0.0.0/8` or a single address (`127.0.0.1`, `::1`).
fn parse_proxy(raw: &str) -> Result<ipnet::IpNet, String> {
    let raw = raw.trim();
    raw.parse::<ipnet::IpNet>()
        .or_else(|_| raw.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("{raw:?} is not an IP address or CIDR range"))
}

/// The tus store kinds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum StoreKind {
    #[default]
    Fs,
    S3,
}

/// The `--fsync` policies (ferry_tus::store::fs::Fsync).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum FsyncPolicy {
    #[default]
    Always,
    Never,
}

impl TusArgs {
    /// The defaults, written once: clap's `default_value_t`s and [`Default`] both read them.
    const DEFAULT: Self = Self {
        upload_expiry: 86_400,
        idle_timeout: 30,
        max_uploads_per_client: 32,
        trusted_proxies: Vec::new(),
        store: StoreKind::Fs,
        fsync: FsyncPolicy::Always,
        ietf_draft: false,
    };
}

impl Default for TusArgs {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Connection to an S3-compatible bucket. Unset means "no S3 configured".
#[derive(Clone, Debug, Default, Args)]
pub struct S3Args {
    /// S3 endpoint URL, e.g. `https://s3.eu-west-1.amazonaws.com` or `http://127.0.0.1:3900`.
    #[arg(long = "s3-endpoint", env = "FERRY_S3_ENDPOINT")]
    pub endpoint: Option<String>,

    /// Bucket name.
    #[arg(long = "s3-bucket", env = "FERRY_S3_BUCKET")]
    pub bucket: Option<String>,

    /// Region used for signing.
    #[arg(
        long = "s3-region",
        env = "FERRY_S3_REGION",
        default_value = "us-east-1"
    )]
    pub region: String,

    /// Access key id.
    #[arg(long = "s3-access-key", env = "FERRY_S3_ACCESS_KEY")]
    pub access_key: Option<String>,

    /// Secret access key (never logged).
    #[arg(
        long = "s3-secret-key",
        env = "FERRY_S3_SECRET_KEY",
        hide_env_values = true,
        value_parser = secret
    )]
    pub secret_key: Option<Secret>,

    /// Address buckets by path (`endpoint/bucket/key`) instead of by host name.
    #[arg(long = "s3-force-path-style", env = "FERRY_S3_FORCE_PATH_STYLE")]
    pub force_path_style: bool,

    /// Prefix of the object keys the S3 signing routes choose (e.g. `uploads/`).
    #[arg(
        long = "s3-key-prefix",
        env = "FERRY_S3_KEY_PREFIX",
        default_value = ""
    )]
    pub key_prefix: String,

    /// Validity of presigned S3 URLs, in seconds (capped to 604800, S3's maximum).
    #[arg(
        long = "s3-expires",
        env = "FERRY_S3_EXPIRES",
        default_value_t = 300,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub expires: u64,

    /// Seconds an S3 connection may take to open (default 10).
    #[arg(
        id = "s3_connect_timeout",
        long = "s3-connect-timeout",
        value_name = "SECS",
        env = "FERRY_S3_CONNECT_TIMEOUT",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub connect_timeout: Option<u64>,

    /// Seconds an S3 call may go without progress (no request byte taken, no answer byte
    /// received) before it fails and the request behind it answers 503 (default 30).
    #[arg(
        id = "s3_idle_timeout",
        long = "s3-idle-timeout",
        value_name = "SECS",
        env = "FERRY_S3_IDLE_TIMEOUT",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub idle_timeout: Option<u64>,

    /// Older name of --auth-secret, for the `/s3/*` routes only: when set without
    /// --auth-secret, they require `Authorization: Bearer <token>` signed with it. Never logged.
    #[arg(
        long = "s3-auth-secret",
        env = "FERRY_S3_AUTH_SECRET",
        hide_env_values = true,
        value_parser = secret
    )]
    pub auth_secret: Option<Secret>,
}

/// A secret option's value, kept out of `Debug` output.
pub fn secret(raw: &str) -> Result<Secret, String> {
    Ok(Secret::new(raw))
}

#[cfg(test)]
mod tests {
    use super::parse_proxy;

    #[test]
    fn trusted_proxies_are_addresses_or_ranges() {
        for (raw, want) in [
            ("10.0.0.0/8", "10.0.0.0/8"),
            (" 127.0.0.1", "127.0.0.1/32"),
            ("::1", "::1/128"),
            ("2001:db8::/32", "2001:db8::/32"),
        ] {
            assert_eq!(parse_proxy(raw).map(|n| n.to_string()), Ok(want.to_owned()));
        }
        for raw in ["nope", "10.0.0.0/33", "", "10.0.0"] {
            assert!(parse_proxy(raw).is_err(), "{raw:?}");
        }
    }
}
