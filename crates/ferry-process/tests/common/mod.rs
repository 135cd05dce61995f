//! What the Assembly API tests share: the service on 127.0.0.1:0 with a chosen config, signed
//! params, multipart forms, polling a status to its end, and small origin servers.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ferry_companion::egress::{Egress, IpPolicy, SystemResolver};
use ferry_process::{Credentials, ProcessConfig, RobotEngines, Service, Urls};
use serde_json::{Value, json};
use tokio::net::TcpListener;

pub const KEY: &str = "test-key";
pub const SECRET: &str = "test-secret";

/// A running service; stopped when dropped.
pub struct Running {
    pub base: String,
    pub service: Service,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A config for `dir`, signatures required, local imports allowed (the tests' origins are on
/// loopback) unless `public_only`.
pub fn config(dir: &Path, public_only: bool) -> ProcessConfig {
    let policy = IpPolicy {
        allow_local: !public_only,
        exempt: Vec::new(),
    };
    let egress = Egress::new(
        Arc::new(SystemResolver),
        policy,
        true,
        Duration::from_secs(30),
    )
    .expect("egress");
    ProcessConfig {
        dir: dir.join("assemblies"),
        credentials: Credentials {
            key: KEY.to_owned(),
            secret: Some(SECRET.to_owned()),
        },
        templates: None,
        workers: 2,
        step_timeout: Duration::from_secs(60),
        urls: Urls {
            base: String::new(),
            tus: String::new(),
        },
        max_size: None,
        engines: RobotEngines::default(),
        egress: Some(Arc::new(egress)),
        cors_origins: vec!["https://app.example".to_owned()],
        notify: ferry_process::notify::Retry {
            attempts: 3,
            first_wait: Duration::from_millis(10),
            timeout: Duration::from_secs(5),
        },
        quotas: ferry_process::Quotas::default(),
        clock: ferry_process::Clock::system(),
    }
}

/// Serves `config` on a free port.
pub async fn start(mut config: ProcessConfig) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let base = format!("http://{addr}");
    config.urls = Urls {
        base: base.clone(),
        tus: format!("{base}/files/"),
    };
    let service = Service::open(config).await.expect("open");
    let app = ferry_process::router(service.clone());
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve");
    });
    Running {
        base,
        service,
        task,
    }
}

/// Serves `config` on a free port with each request's peer address known, as the binary does
/// (the per-client caps read it).
pub async fn start_with_peers(mut config: ProcessConfig) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let base = format!("http://{addr}");
    config.urls = Urls {
        base: base.clone(),
        tus: format!("{base}/files/"),
    };
    let service = Service::open(config).await.expect("open");
    let app =
        ferry_process::router(service.clone()).into_make_service_with_connect_info::<SocketAddr>();
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve");
    });
    Running {
        base,
        service,
        task,
    }
}

/// Params with `steps`, the test key and an expiry one hour ahead, as a JSON string.
pub fn params(steps: Value) -> String {
    let expires = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1);
    json!({"auth": {"key": KEY, "expires": expires.to_string()}, "steps": steps}).to_string()
}

/// `sha384:` signature of `params`.
pub fn sign(params: &str) -> String {
    ferry_process::auth::sign_sha384(SECRET.as_bytes(), params.as_bytes())
}

/// A signed form for `params`, with `files` (name, bytes).
pub fn form(params: &str, files: &[(&str, &[u8])]) -> reqwest::multipart::Form {
    let mut form = reqwest::multipart::Form::new()
        .text("params", params.to_owned())
        .text("signature", sign(params));
    for (name, bytes) in files {
        form = form.part(
            "file",
            reqwest::multipart::Part::bytes(bytes.to_vec()).file_name(name.to_string()),
        );
    }
    form
}

/// POSTs `form` to `/assemblies`; the status code and JSON.
pub async fn create(base: &str, form: reqwest::multipart::Form) -> (u16, Value) {
    let res = reqwest::Client::new()
        .post(format!("{base}/assemblies"))
        .multipart(form)
        .send()
        .await
        .expect("post");
    let status = res.status().as_u16();
    (status, res.json().await.expect("json"))
}

/// GETs `url` until its `ok` is no longer uploading or executing (at most 30 s).
pub async fn settle(url: &str) -> Value {
    for _ in 0..1500 {
        let status: Value = reqwest::get(url)
            .await
            .expect("get")
            .json()
            .await
            .expect("json");
        if !matches!(
            status["ok"].as_str(),
            Some("ASSEMBLY_UPLOADING" | "ASSEMBLY_EXECUTING")
        ) {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the assembly at {url} did not end");
}

/// An origin for `/http/import`: `/file` answers `body`; `/hang` sends headers and then never a
/// byte. The receiver hears `"opened"` when a `/hang` request reaches the handler and `"closed"`
/// when its body is dropped (the importer hung up), so a test can wait for the import to be
/// under way before it cancels.
pub async fn origin(
    body: &'static [u8],
) -> (
    SocketAddr,
    tokio::sync::mpsc::UnboundedReceiver<&'static str>,
) {
    use axum::routing::get;
    let (events_tx, events_rx) = tokio::sync::mpsc::unbounded_channel::<&'static str>();
    let hang = move || {
        let events = events_tx.clone();
        async move {
            struct OnDrop(tokio::sync::mpsc::UnboundedSender<&'static str>);
            impl Drop for OnDrop {
                fn drop(&mut self) {
                    let _ = self.0.send("closed");
                }
            }
            let _ = events.send("opened");
            let guard = OnDrop(events);
            let stream = futures_util::stream::once(async move {
                let _guard = guard;
                std::future::pending::<Result<bytes::Bytes, std::io::Error>>().await
            });
            axum::body::Body::from_stream(stream)
        }
    };
    let app = axum::Router::new()
        .route("/file", get(move || async move { body }))
        .route("/hang", get(hang));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("origin") });
    (addr, events_rx)
}
