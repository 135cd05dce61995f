//! A real single-node Garage (S3-compatible store) on loopback for tests: a temporary data
//! directory, free ports, a key and a bucket, and a few signed calls tests need (CORS, reading an
//! object back, listing multipart uploads), and a kill -9 + restart on the same data
//! ([`Garage::restart`]). The binary is built once by
//! `scripts/ensure-garage.sh` into `~/.cache/ferry/garage-2.5.0`; `GARAGE_BIN` overrides it.

use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine;
use md5::{Digest, Md5};
use rand::RngCore;
use rusty_s3::{Bucket, Credentials, Method, S3Action, UrlStyle};
use tempfile::TempDir;
use url::Url;

/// How long signed test requests stay valid.
const SIGN_FOR: Duration = Duration::from_secs(600);

/// A running Garage node with one bucket and one key allowed on it; killed (by PID) on drop.
#[derive(Debug)]
pub struct Garage {
    /// `http://127.0.0.1:PORT` of the S3 API.
    pub endpoint: String,
    /// The S3 region the node signs with.
    pub region: String,
    /// Access key id (`GK` + 24 hex).
    pub access_key: String,
    /// Secret access key (64 hex).
    pub secret_key: String,
    /// The bucket created for the test.
    pub bucket: String,
    child: Child,
    config: PathBuf,
    bin: PathBuf,
    _dir: TempDir,
}

/// Where the Garage binary is: `GARAGE_BIN`, else the cache `scripts/ensure-garage.sh` fills.
pub fn garage_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("GARAGE_BIN") {
        return PathBuf::from(bin);
    }
    let home = std::env::var_os("HOME").unwrap_or_default();
    Path::new(&home).join(".cache/ferry/garage-2.5.0/bin/garage")
}

fn free_port() -> u16 {
    let listener = StdListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("local address").port()
}

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs `garage -c CONFIG server`, its log appended beside the config.
fn spawn(bin: &Path, config: &Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(config.with_file_name("garage.log"))
        .expect("log file");
    Command::new(bin)
        .arg("-c")
        .arg(config)
        .arg("server")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("spawn garage server")
}

impl Garage {
    /// Starts a node with a fresh bucket; panics (it is a test helper) when Garage is missing or
    /// does not come up.
    pub async fn start() -> Self {
        let bin = garage_bin();
        assert!(
            bin.exists(),
            "Garage not found at {} (run scripts/ensure-garage.sh or set GARAGE_BIN)",
            bin.display()
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let (rpc, s3, admin) = (free_port(), free_port(), free_port());
        let region = "garage".to_owned();
        let config = dir.path().join("garage.toml");
        let toml = format!(
            "metadata_dir = \"{meta}\"\ndata_dir = \"{data}\"\ndb_engine = \"sqlite\"\n\
             replication_factor = 1\nrpc_bind_addr = \"127.0.0.1:{rpc}\"\n\
             rpc_public_addr = \"127.0.0.1:{rpc}\"\nrpc_secret = \"{secret}\"\n\n\
             [s3_api]\ns3_region = \"{region}\"\napi_bind_addr = \"127.0.0.1:{s3}\"\n\n\
             [admin]\napi_bind_addr = \"127.0.0.1:{admin}\"\nadmin_token = \"{token}\"\n",
            meta = dir.path().join("meta").display(),
            data = dir.path().join("data").display(),
            secret = random_hex(32),
            token = random_hex(16),
        );
        std::fs::write(&config, toml).expect("write garage.toml");
        let child = spawn(&bin, &config);
        let mut garage = Self {
            endpoint: format!("http://127.0.0.1:{s3}"),
            region,
            access_key: format!("GK{}", random_hex(12)),
            secret_key: random_hex(32),
            bucket: format!("ferry-{}", random_hex(4)),
            child,
            config,
            bin,
            _dir: dir,
        };
        garage.setup().await;
        garage
    }

    /// SIGKILL (by PID): every connection to the S3 API is cut, requests fail until
    /// [`Garage::restart`].
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Kills the node (if it runs) and starts it again on the same ports and data: the bucket,
    /// the key and every stored object are still there. Returns once the S3 API answers for
    /// the bucket.
    pub async fn restart(&mut self) {
        self.kill9();
        self.child = spawn(&self.bin, &self.config);
        self.wait_for_bucket().await;
    }

    /// Layout, key, bucket; then waits until the S3 API answers for the bucket.
    async fn setup(&mut self) {
        let node_id = self.wait_for_node_id().await;
        self.cli(&["layout", "assign", "-z", "dc1", "-c", "1G", &node_id]);
        self.cli(&["layout", "apply", "--version", "1"]);
        let (key, secret) = (self.access_key.clone(), self.secret_key.clone());
        self.cli(&["key", "import", "--yes", "-n", "ferry-test", &key, &secret]);
        let bucket = self.bucket.clone();
        self.cli(&["bucket", "create", &bucket]);
        self.cli(&[
            "bucket",
            "allow",
            "--read",
            "--write",
            "--owner",
            &bucket,
            "--key",
            "ferry-test",
        ]);
        self.wait_for_bucket().await;
    }

    /// Waits until the S3 API accepts a signed HEAD of the bucket.
    async fn wait_for_bucket(&mut self) {
        let client = reqwest::Client::new();
        for _ in 0..200 {
            let url = self
                .bucket_handle()
                .head_bucket(Some(&self.credentials()))
                .sign(SIGN_FOR);
            if let Ok(resp) = client.head(url).send().await
                && resp.status().is_success()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("Garage's S3 API did not accept the bucket in 10 s");
    }

    async fn wait_for_node_id(&mut self) -> String {
        for _ in 0..200 {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("garage server exited early: {status}");
            }
            let out = Command::new(&self.bin)
                .arg("-c")
                .arg(&self.config)
                .args(["node", "id", "-q"])
                .output()
                .expect("run garage node id");
            // `node id` can answer from the key on disk before RPC listens: wait for `status`.
            let rpc_up = out.status.success()
                && Command::new(&self.bin)
                    .arg("-c")
                    .arg(&self.config)
                    .arg("status")
                    .output()
                    .is_ok_and(|o| o.status.success());
            if rpc_up {
                let id = String::from_utf8_lossy(&out.stdout);
                // `<hex id>@127.0.0.1:port`: the layout wants the hex id.
                let hex = id.trim().split('@').next().unwrap_or_default().to_owned();
                if !hex.is_empty() {
                    return hex;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("garage server did not answer `node id` in 10 s");
    }

    /// Runs one `garage` admin command against this node; panics with its output on failure.
    pub fn cli(&self, args: &[&str]) -> String {
        let out = Command::new(&self.bin)
            .arg("-c")
            .arg(&self.config)
            .args(args)
            .output()
            .expect("run garage");
        assert!(
            out.status.success(),
            "garage {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `ferry serve` flags that point its S3 settings at this bucket (path style); add
    /// `--store s3` for the tus store.
    pub fn ferry_args(&self) -> Vec<String> {
        [
            "--s3-force-path-style",
            "--s3-endpoint",
            &self.endpoint,
            "--s3-bucket",
            &self.bucket,
            "--s3-region",
            &self.region,
            "--s3-access-key",
            &self.access_key,
            "--s3-secret-key",
            &self.secret_key,
        ]
        .map(str::to_owned)
        .to_vec()
    }

    /// The bucket as Ferry's S3 settings (path style, no key prefix).
    pub fn bucket(&self) -> ferry_s3::S3Bucket {
        ferry_s3::S3Bucket {
            endpoint: self.endpoint.clone(),
            bucket: self.bucket.clone(),
            region: self.region.clone(),
            access_key: self.access_key.clone(),
            secret_key: self.secret_key.clone().into(),
            force_path_style: true,
            key_prefix: String::new(),
        }
    }

    /// A client on [`Garage::bucket`].
    pub fn client(&self) -> ferry_s3::S3Client {
        ferry_s3::S3Client::new(self.bucket()).expect("valid Garage settings")
    }

    /// The key as rusty-s3 credentials.
    pub fn credentials(&self) -> Credentials {
        Credentials::new(self.access_key.clone(), self.secret_key.clone())
    }

    /// The bucket as a rusty-s3 handle (path style, as Garage on an IP address needs).
    pub fn bucket_handle(&self) -> Bucket {
        let endpoint = Url::parse(&self.endpoint).expect("endpoint url");
        Bucket::new(
            endpoint,
            UrlStyle::Path,
            self.bucket.clone(),
            self.region.clone(),
        )
        .expect("bucket handle")
    }

    /// Sets the bucket's CORS: every method from `origins`, every header, exposing `expose`
    /// (e.g. `["ETag"]`, or `[]` to hide ETag from browsers).
    pub async fn set_cors(&self, origins: &[&str], expose: &[&str]) {
        let mut rule = String::from("<CORSRule>");
        for origin in origins {
            rule.push_str(&format!("<AllowedOrigin>{origin}</AllowedOrigin>"));
        }
        for method in ["GET", "PUT", "POST", "DELETE", "HEAD"] {
            rule.push_str(&format!("<AllowedMethod>{method}</AllowedMethod>"));
        }
        rule.push_str("<AllowedHeader>*</AllowedHeader>");
        for header in expose {
            rule.push_str(&format!("<ExposeHeader>{header}</ExposeHeader>"));
        }
        rule.push_str("<MaxAgeSeconds>60</MaxAgeSeconds></CORSRule>");
        let body = format!("<CORSConfiguration>{rule}</CORSConfiguration>");
        let md5 = base64::engine::general_purpose::STANDARD.encode(Md5::digest(body.as_bytes()));
        let url = self.sign_bucket_request(Method::Put, &[("cors", "")], &[("content-md5", &md5)]);
        let resp = reqwest::Client::new()
            .put(url)
            .header("content-md5", md5)
            .body(body)
            .send()
            .await
            .expect("PutBucketCors");
        let status = resp.status();
        assert!(
            status.is_success(),
            "PutBucketCors: {status} {}",
            resp.text().await.unwrap_or_default()
        );
    }

    /// Presigns a bucket-level request (`?cors`, `?uploads`...) that rusty-s3 has no action for.
    /// `query` and `headers` must be sorted by name; header names lowercase.
    pub fn sign_bucket_request(
        &self,
        method: Method,
        query: &[(&str, &str)],
        headers: &[(&str, &str)],
    ) -> Url {
        let bucket = self.bucket_handle();
        rusty_s3::signing::sign(
            &jiff::Timestamp::now(),
            method,
            bucket.base_url().clone(),
            &self.access_key,
            &self.secret_key,
            None,
            &self.region,
            SIGN_FOR.as_secs(),
            query.iter().copied(),
            headers.iter().copied(),
        )
    }

    /// Stores `bytes` at `key` (a plain PutObject).
    pub async fn put_object(&self, key: &str, bytes: Vec<u8>) {
        let url = self
            .bucket_handle()
            .put_object(Some(&self.credentials()), key)
            .sign(SIGN_FOR);
        let resp = reqwest::Client::new()
            .put(url)
            .body(bytes)
            .send()
            .await
            .expect("PutObject");
        assert!(resp.status().is_success(), "PutObject: {}", resp.status());
    }

    /// The bytes stored at `key`, or `None` when there is no such object.
    pub async fn get_object(&self, key: &str) -> Option<Vec<u8>> {
        let url = self
            .bucket_handle()
            .get_object(Some(&self.credentials()), key)
            .sign(SIGN_FOR);
        let resp = reqwest::get(url).await.expect("GetObject");
        if resp.status() == reqwest::StatusCode::NOT_FOUND {
            return None;
        }
        assert!(resp.status().is_success(), "GetObject: {}", resp.status());
        Some(resp.bytes().await.expect("object body").to_vec())
    }

    /// The raw XML of ListMultipartUploads for the bucket (in-progress uploads show as
    /// `<UploadId>` elements).
    pub async fn list_multipart_uploads(&self) -> String {
        let url = self.sign_bucket_request(Method::Get, &[("uploads", "")], &[]);
        let resp = reqwest::get(url).await.expect("ListMultipartUploads");
        assert!(
            resp.status().is_success(),
            "ListMultipartUploads: {}",
            resp.status()
        );
        resp.text().await.expect("ListMultipartUploads body")
    }
}

impl Drop for Garage {
    fn drop(&mut self) {
        // Kills exactly the child this helper started (by its PID), then reaps it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
