//! `ferry serve`'s processing options (`--assembly-key`, `--assembly-secret`,
//! `--assembly-templates`, `--assembly-workers`, ...) and the wiring of ferry-process: the
//! Assembly API is served when a key is set, and the tus endpoint's hooks pass through its
//! bridge so uploads naming an `assembly_url` reach their Assembly (from the disk or, with
//! `--store s3`, from the bucket).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use ferry_companion::egress::{Egress, IpPolicy, SystemResolver};
use ferry_hooks::Hooks;
use ferry_process::{Clock, Credentials, ProcessConfig, Quotas, RobotEngines, Service, Urls};

/// Options of the processing service (Transloadit's Assembly API at `/assemblies`).
#[derive(Clone, Debug, Args)]
pub struct ProcessArgs {
    /// Auth Key clients name in `params.auth.key`; setting it turns the Assembly API on.
    #[arg(long, env = "FERRY_ASSEMBLY_KEY")]
    pub assembly_key: Option<String>,

    /// Auth Secret: with it, every Assembly request must be signed (HMAC of `params`) and
    /// unexpired, and notifications are signed. Never logged.
    #[arg(long, env = "FERRY_ASSEMBLY_SECRET", hide_env_values = true, value_parser = crate::config::secret)]
    pub assembly_secret: Option<ferry_auth::Secret>,

    /// Directory of templates, one `{template_id}.json` each (`{"steps": {...}}`).
    #[arg(long, env = "FERRY_ASSEMBLY_TEMPLATES")]
    pub assembly_templates: Option<PathBuf>,

    /// Assemblies executing at once; more wait in a queue.
    #[arg(long, env = "FERRY_ASSEMBLY_WORKERS", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub assembly_workers: u64,

    /// Seconds one step of an Assembly may run before it fails with INTERNAL_COMMAND_TIMEOUT.
    #[arg(long, env = "FERRY_ASSEMBLY_STEP_TIMEOUT", default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..))]
    pub assembly_step_timeout: u64,

    /// clamd's local socket, for `/file/virusscan` (off when unset or not answering).
    #[arg(long, env = "FERRY_CLAMD_SOCKET")]
    pub clamd_socket: Option<PathBuf>,

    /// Assemblies one client (Auth Key and address) may have uploading or executing at once;
    /// more are refused with RATE_LIMIT_REACHED (0: no cap).
    #[arg(long, env = "FERRY_ASSEMBLY_MAX_ACTIVE_PER_CLIENT", default_value_t = Quotas::DEFAULT.max_active_per_client)]
    pub assembly_max_active_per_client: usize,

    /// Assemblies one client may create per --assembly-rate-window; more are refused with
    /// RATE_LIMIT_REACHED and the seconds to wait (0: no cap).
    #[arg(long, env = "FERRY_ASSEMBLY_MAX_PER_CLIENT", default_value_t = Quotas::DEFAULT.max_per_window)]
    pub assembly_max_per_client: u32,

    /// Seconds of the window of --assembly-max-per-client.
    #[arg(long, env = "FERRY_ASSEMBLY_RATE_WINDOW", default_value_t = Quotas::DEFAULT.window.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    pub assembly_rate_window: u64,

    /// Bytes all Assemblies together may hold on disk (uploads and results); past it new
    /// Assemblies and uploads are refused until expired ones are deleted (no cap when unset).
    #[arg(long, env = "FERRY_ASSEMBLY_MAX_DISK")]
    pub assembly_max_disk: Option<u64>,

    /// Seconds an ended Assembly and its files are kept; then they are deleted and its status
    /// answers ASSEMBLY_EXPIRED.
    #[arg(long, env = "FERRY_ASSEMBLY_RETENTION", default_value_t = Quotas::DEFAULT.retention.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    pub assembly_retention: u64,

    /// Seconds an Assembly may wait for its uploads with none arriving; then it fails with
    /// ASSEMBLY_EXPIRED and what it received is deleted.
    #[arg(long, env = "FERRY_ASSEMBLY_UPLOAD_TIMEOUT", default_value_t = Quotas::DEFAULT.upload_timeout.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    pub assembly_upload_timeout: u64,
}

impl Default for ProcessArgs {
    fn default() -> Self {
        Self {
            assembly_key: None,
            assembly_secret: None,
            assembly_templates: None,
            assembly_workers: 2,
            assembly_step_timeout: 3600,
            clamd_socket: None,
            assembly_max_active_per_client: Quotas::DEFAULT.max_active_per_client,
            assembly_max_per_client: Quotas::DEFAULT.max_per_window,
            assembly_rate_window: Quotas::DEFAULT.window.as_secs(),
            assembly_max_disk: None,
            assembly_retention: Quotas::DEFAULT.retention.as_secs(),
            assembly_upload_timeout: Quotas::DEFAULT.upload_timeout.as_secs(),
        }
    }
}

impl ProcessArgs {
    /// Opens the service when a key is set (resuming interrupted Assemblies).
    pub async fn open(&self, config: &crate::ServeConfig) -> std::io::Result<Option<Service>> {
        let Some(key) = self.assembly_key.clone().filter(|k| !k.is_empty()) else {
            return Ok(None);
        };
        let base = config
            .companion
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", config.listen))
            .trim_end_matches('/')
            .to_owned();
        let policy = IpPolicy {
            allow_local: config.companion.allow_local_urls,
            exempt: Vec::new(),
        };
        let egress = Egress::new(
            Arc::new(SystemResolver),
            policy,
            true,
            Duration::from_secs(30),
        )
        .map_err(std::io::Error::other)?;
        let engines = self.engines().await;
        for robot in ferry_process::robots::Robot::ALL {
            if !engines.runs(robot) {
                tracing::warn!(
                    robot = robot.name(),
                    why = ferry_process::robots::missing_engine(robot),
                    "assembly robot disabled"
                );
            }
        }
        let fleet = fleet(config).await?;
        let service = Service::open_in(
            ProcessConfig {
                dir: config.data_dir.join("assemblies"),
                credentials: Credentials {
                    key,
                    secret: self.assembly_secret.as_ref().map(|s| s.expose().to_owned()),
                },
                templates: self.assembly_templates.clone(),
                workers: usize::try_from(self.assembly_workers).unwrap_or(1),
                step_timeout: Duration::from_secs(self.assembly_step_timeout),
                urls: Urls {
                    tus: format!("{base}/files/"),
                    base,
                },
                max_size: config.max_size,
                engines,
                egress: Some(Arc::new(egress)),
                cors_origins: config.companion.cors_origins.clone(),
                notify: ferry_process::notify::Retry::default(),
                quotas: Quotas {
                    max_active_per_client: self.assembly_max_active_per_client,
                    max_per_window: self.assembly_max_per_client,
                    window: Duration::from_secs(self.assembly_rate_window),
                    max_disk: self.assembly_max_disk,
                    retention: Duration::from_secs(self.assembly_retention),
                    upload_timeout: Duration::from_secs(self.assembly_upload_timeout),
                    // Callers are told apart as the tus endpoint tells them apart.
                    trusted_proxies: config.tus.trusted_proxies.clone(),
                },
                clock: Clock::system(),
            },
            fleet,
        )
        .await?;
        if self.assembly_secret.is_none() && self.assembly_max_disk.is_none() {
            tracing::warn!(
                "the Assembly API runs without --assembly-secret or --assembly-max-disk: anyone with the key can create Assemblies until the per-client caps; set a secret or a disk cap"
            );
        }
        Ok(Some(service))
    }
}

impl ProcessArgs {
    /// The engines on `PATH` (ffmpeg, ffprobe, vips) and clamd when it answers a ping; each
    /// child process is bounded by the step time limit.
    async fn engines(&self) -> RobotEngines {
        let limits = ferry_process::engines::Limits {
            time_limit: Duration::from_secs(self.assembly_step_timeout),
            ..Default::default()
        };
        let programs = ferry_process::engines::Engines::detect(&limits).await;
        let clamd = match &self.clamd_socket {
            Some(socket) => {
                let config = ferry_process::engines::clamd::ClamdConfig::new(socket.clone());
                match ferry_process::engines::clamd::ping(&config).await {
                    Ok(()) => Some(config),
                    Err(e) => {
                        tracing::warn!(error = %e, "clamd does not answer; /file/virusscan is off");
                        None
                    }
                }
            }
            None => None,
        };
        RobotEngines {
            programs: Arc::new(programs),
            clamd,
            limits,
        }
    }
}

/// With `--redis-url`, the instances' shared runs of Assemblies: a cluster handle of its own
/// prefix (`{prefix}asm:`), so the companion's transfer reaper never meets an Assembly.
async fn fleet(
    config: &crate::ServeConfig,
) -> std::io::Result<Option<Arc<dyn ferry_process::fleet::Fleet>>> {
    let Some(mut cluster) = config.cluster.to_config() else {
        return Ok(None);
    };
    cluster.prefix = format!("{}asm:", cluster.prefix);
    let cluster = ferry_cluster::Cluster::connect(cluster)
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(Some(Arc::new(ferry_cluster::RedisAssemblies::new(
        &cluster,
    ))))
}

/// The tus endpoint's hooks: `hooks`, plus Assembly uploads when the service is on. With
/// `--store s3`, `bucket` is the tus store's, which the bridge reads uploads back from.
pub fn tus_hooks(
    hooks: Arc<dyn Hooks>,
    service: Option<&Service>,
    config: &crate::ServeConfig,
    bucket: Option<&ferry_s3::S3Bucket>,
) -> Arc<dyn Hooks> {
    let Some(service) = service else {
        return hooks;
    };
    let bridge = ferry_process::tus::TusBridge::new(hooks, service.clone());
    let objects = (config.tus.store == crate::config::StoreKind::S3)
        .then_some(bucket)
        .flatten()
        .and_then(|b| {
            ferry_s3::S3Client::new(b.clone())
                .and_then(|c| c.with_timeouts(crate::s3::timeouts(&config.s3)))
                .ok()
        });
    match objects {
        Some(client) => Arc::new(bridge.with_s3(client)),
        None => Arc::new(bridge),
    }
}
