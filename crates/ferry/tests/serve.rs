//! The wired application over real HTTP: health, the page, and a tus upload stored on disk.

mod common;

use ferry_testkit::{random_bytes, sha256_hex};

#[tokio::test]
async fn health_answers_ok() {
    let server = common::serve(&[]).await;
    let res = reqwest::get(format!("{}/health", server.base))
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn page_is_served_from_the_ui_dir_with_index_fallback() {
    let ui = tempfile::tempdir().expect("temp dir");
    std::fs::write(ui.path().join("index.html"), "<title>ferry page</title>").expect("write");
    let ui_dir = ui.path().display().to_string();
    let server = common::configure(&["--ui-dir", &ui_dir]).await.start();
    for path in ["/", "/some/client/route"] {
        let res = reqwest::get(format!("{}{path}", server.base))
            .await
            .expect("request");
        assert_eq!(res.status(), 200, "{path}");
        assert_eq!(res.text().await.expect("body"), "<title>ferry page</title>");
    }
}

/// The page built into the binary: `build.rs` rebuilds `ferry` whenever apps/demo/dist changes,
/// so the embedded files are the ones on disk now (or the placeholder when there are none).
#[tokio::test]
async fn embedded_page_is_the_built_demo_page() {
    let dist = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps/demo/dist");
    let server = common::configure(&[]).await.start();
    let get = |path: &str| reqwest::get(format!("{}{path}", server.base));
    let Ok(index) = std::fs::read_to_string(dist.join("index.html")) else {
        let res = get("/").await.expect("request");
        assert_eq!(res.status(), 200);
        assert!(
            res.text()
                .await
                .expect("body")
                .contains("The upload page is not built")
        );
        return;
    };
    for path in ["/", "/index.html", "/some/client/route"] {
        let res = get(path).await.expect("request");
        assert_eq!(res.status(), 200, "{path}");
        assert_eq!(res.headers()["content-type"], "text/html", "{path}");
        assert_eq!(res.text().await.expect("body"), index, "{path}");
    }
    // The script the page loads, byte for byte, cacheable forever (its name is its hash).
    let script = index
        .split('"')
        .find(|s| s.starts_with("/assets/") && s.ends_with(".js"))
        .expect("index.html names its script");
    let res = get(script).await.expect("request");
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "text/javascript");
    assert_eq!(
        res.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    let etag = res.headers()["etag"].clone();
    let on_disk = std::fs::read(dist.join(script.trim_start_matches('/'))).expect("asset");
    assert_eq!(
        res.bytes().await.expect("body").as_ref(),
        on_disk.as_slice()
    );
    let again = reqwest::Client::new()
        .get(format!("{}{script}", server.base))
        .header("if-none-match", etag)
        .send()
        .await
        .expect("request");
    assert_eq!(again.status(), 304);
    // Source maps stay out of the binary; a missing asset is a 404, not the page.
    let map = get(&format!("{script}.map")).await.expect("request");
    assert_eq!(map.status(), 404);
    let post = reqwest::Client::new()
        .post(format!("{}/", server.base))
        .send()
        .await
        .expect("request");
    assert_eq!(post.status(), 405);
}

#[tokio::test]
async fn no_ui_serves_the_api_only() {
    let server = common::serve(&[]).await;
    let page = reqwest::get(format!("{}/", server.base))
        .await
        .expect("request");
    assert_eq!(page.status(), 404);
    let health = reqwest::get(format!("{}/health", server.base))
        .await
        .expect("request");
    assert_eq!(health.status(), 200);
}

#[test]
fn version_flag_prints_the_crate_version() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"))
        .arg("--version")
        .output()
        .expect("run ferry");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("ferry {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn ui_dir_and_no_ui_conflict() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--no-ui", "--ui-dir", "/tmp"])
        .output()
        .expect("run ferry");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot be used with"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn tus_upload_lands_in_the_data_dir() {
    let server = common::serve(&[]).await;
    let client = reqwest::Client::new();
    let bytes = random_bytes(300_000);
    let location = common::create(&client, &server.base, bytes.len()).await;
    let patched = client
        .patch(format!("{}{location}", server.base))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .body(bytes.clone())
        .send()
        .await
        .expect("patch");
    assert_eq!(patched.status(), 204);
    assert_eq!(patched.headers()["upload-offset"], "300000");

    let id = location.trim_start_matches("/files/");
    let stored = std::fs::read(server.data.path().join("tus").join(id)).expect("stored file");
    assert_eq!(sha256_hex(&stored), sha256_hex(&bytes));
}

#[tokio::test]
async fn shutdown_closes_a_stalled_upload_after_the_grace_period() {
    use tokio::io::AsyncWriteExt;

    let common::Configured {
        config,
        listener,
        data: _data,
    } = common::configure(&[]).await;
    let addr = listener.local_addr().expect("addr");
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let grace = std::time::Duration::from_millis(300);
    let server = tokio::spawn(async move {
        ferry::serve_with_grace(
            &config,
            listener,
            async move {
                let _ = stop_rx.await;
            },
            grace,
        )
        .await
    });

    // A client that creates an upload, then starts a PATCH and never sends its body.
    let client = reqwest::Client::new();
    let location = common::create(&client, &format!("http://{addr}"), 1_000_000).await;
    let mut stalled = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "PATCH {location} HTTP/1.1\r\nHost: {addr}\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\n\
         Content-Type: application/offset+octet-stream\r\nContent-Length: 1000000\r\n\r\nabc"
    );
    stalled.write_all(head.as_bytes()).await.expect("write");

    let _ = stop_tx.send(());
    let finished = tokio::time::timeout(std::time::Duration::from_secs(5), server)
        .await
        .expect("serve returned within the grace period")
        .expect("task");
    assert!(finished.is_ok(), "{finished:?}");
}
