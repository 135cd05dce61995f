//! An Assembly's life over real HTTP: cancel stops a running step, the step time limit,
//! `/http/import` through the egress client, signed and retried notifications, and a restart of
//! the service resuming what it left.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn cancel_stops_the_running_step() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let (origin, mut events) = origin(b"").await;
    let p = params(json!({"i": {"robot": "/http/import", "url": format!("http://{origin}/hang")}}));
    let (code, created) = create(&s.base, form(&p, &[])).await;
    assert_eq!(
        (code, created["ok"].as_str()),
        (200, Some("ASSEMBLY_EXECUTING")),
        "{created}"
    );
    let url = created["assembly_ssl_url"]
        .as_str()
        .expect("url")
        .to_owned();
    // Cancel once the import is under way (the origin holds its request), as Uppy does: no body.
    let opened = tokio::time::timeout(Duration::from_secs(10), events.recv()).await;
    assert_eq!(
        opened,
        Ok(Some("opened")),
        "the import never reached the origin"
    );
    let res = reqwest::Client::new()
        .delete(&url)
        .send()
        .await
        .expect("delete");
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.json::<Value>().await.expect("json")["ok"],
        "ASSEMBLY_CANCELED"
    );
    // The running import was dropped: the origin sees its connection close.
    let closed = tokio::time::timeout(Duration::from_secs(10), events.recv()).await;
    assert_eq!(closed, Ok(Some("closed")), "the import was not stopped");
    let status: Value = reqwest::get(&url)
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(status["ok"], "ASSEMBLY_CANCELED");
    // Canceling again answers the same final status.
    let again: Value = reqwest::Client::new()
        .delete(&url)
        .send()
        .await
        .expect("delete")
        .json()
        .await
        .expect("json");
    assert_eq!(again["ok"], "ASSEMBLY_CANCELED");
}

#[tokio::test]
async fn independent_steps_run_at_the_same_time() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let (origin, mut events) = origin(b"").await;
    // Neither import ever ends: run one after the other, the second would never start.
    let hang = format!("http://{origin}/hang");
    let p = params(json!({
        "a": {"robot": "/http/import", "url": hang},
        "b": {"robot": "/http/import", "url": hang},
    }));
    let (_, created) = create(&s.base, form(&p, &[])).await;
    for n in 1..=2 {
        let opened = tokio::time::timeout(Duration::from_secs(10), events.recv()).await;
        assert_eq!(
            opened,
            Ok(Some("opened")),
            "import {n} of 2 never reached the origin"
        );
    }
    let url = created["assembly_ssl_url"].as_str().expect("url");
    let res = reqwest::Client::new()
        .delete(url)
        .send()
        .await
        .expect("delete");
    assert_eq!(res.status(), 200);
    // The cancel stops both.
    for _ in 0..2 {
        let closed = tokio::time::timeout(Duration::from_secs(10), events.recv()).await;
        assert_eq!(closed, Ok(Some("closed")));
    }
}

#[tokio::test]
async fn a_step_past_its_time_limit_fails_the_assembly() {
    let dir = tempfile::tempdir().expect("dir");
    let mut c = config(dir.path(), false);
    c.step_timeout = Duration::from_secs(1);
    let s = start(c).await;
    let (origin, _closed) = origin(b"").await;
    let p = params(json!({"i": {"robot": "/http/import", "url": format!("http://{origin}/hang")}}));
    let (_, created) = create(&s.base, form(&p, &[])).await;
    let done = settle(created["assembly_ssl_url"].as_str().expect("url")).await;
    assert_eq!(done["error"], "INTERNAL_COMMAND_TIMEOUT", "{done}");
    assert_eq!(done["step"], "i");
    assert!(done.get("ok").is_none());
}

#[tokio::test]
async fn imports_go_through_the_egress_rules() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let (origin, _closed) = origin(b"imported bytes").await;
    let url = format!("http://{origin}/file");
    let p = params(json!({"i": {"robot": "/http/import", "url": url, "force_name": "x.txt"}}));
    let (_, created) = create(&s.base, form(&p, &[])).await;
    let done = settle(created["assembly_ssl_url"].as_str().expect("url")).await;
    assert_eq!(done["ok"], "ASSEMBLY_COMPLETED", "{done}");
    let file = &done["results"]["i"][0];
    assert_eq!(
        (
            file["name"].as_str(),
            file["import_url"].as_str(),
            file["size"].as_u64()
        ),
        (Some("x.txt"), Some(url.as_str()), Some(14))
    );
    let bytes = reqwest::get(file["url"].as_str().expect("url"))
        .await
        .expect("get")
        .bytes()
        .await
        .expect("bytes");
    assert_eq!(&bytes[..], b"imported bytes");

    // With public addresses only, a name resolving to loopback is refused when the step runs.
    let public = start(config(&dir.path().join("p"), true)).await;
    let p = params(
        json!({"i": {"robot": "/http/import", "url": format!("http://localhost:{}/file", origin.port())}}),
    );
    let (_, created) = create(&public.base, form(&p, &[])).await;
    let done = settle(created["assembly_ssl_url"].as_str().expect("url")).await;
    assert_eq!(done["error"], "HTTP_IMPORT_ACCESS_DENIED", "{done}");
}

#[tokio::test]
async fn notifications_are_signed_and_retried() {
    use axum::routing::post;
    let got: Arc<Mutex<Vec<std::collections::HashMap<String, String>>>> = Arc::default();
    let tries = Arc::new(Mutex::new(0u32));
    let (g, t) = (got.clone(), tries.clone());
    let app = axum::Router::new().route(
        "/hook",
        post(
            move |axum::extract::Form(f): axum::extract::Form<
                std::collections::HashMap<String, String>,
            >| {
                let (g, t) = (g.clone(), t.clone());
                async move {
                    let mut n = t.lock().expect("lock");
                    *n += 1;
                    // The first delivery fails; the retry is taken.
                    if *n == 1 {
                        return axum::http::StatusCode::INTERNAL_SERVER_ERROR;
                    }
                    g.lock().expect("lock").push(f);
                    axum::http::StatusCode::OK
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let hook = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("hook") });

    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let expires = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1)).to_string();
    let p = json!({"auth": {"key": KEY, "expires": expires}, "notify_url": hook, "steps": {"f": {"robot": "/file/filter", "use": ":original"}}}).to_string();
    let (_, created) = create(&s.base, form(&p, &[("a.txt", b"x")])).await;
    let url = created["assembly_ssl_url"]
        .as_str()
        .expect("url")
        .to_owned();
    let done = settle(&url).await;
    assert_eq!(done["ok"], "ASSEMBLY_COMPLETED");
    let mut notified = Value::Null;
    for _ in 0..500 {
        notified = reqwest::get(&url)
            .await
            .expect("get")
            .json::<Value>()
            .await
            .expect("json");
        if !notified["notify_status"].is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(notified["notify_status"], "successful");
    assert_eq!(*tries.lock().expect("lock"), 2);
    let got = got.lock().expect("lock").clone();
    let body = &got[0]["transloadit"];
    assert_eq!(
        got[0]["signature"],
        ferry_process::auth::sign_sha384(SECRET.as_bytes(), body.as_bytes())
    );
    let sent: Value = serde_json::from_str(body).expect("json");
    assert_eq!(sent["ok"], "ASSEMBLY_COMPLETED");
    assert_eq!(sent["assembly_id"], created["assembly_id"]);
}

#[tokio::test]
async fn assemblies_survive_a_restart() {
    let dir = tempfile::tempdir().expect("dir");
    let first = start(config(dir.path(), false)).await;
    // One waits for an upload; one has finished.
    let p = params(json!({"f": {"robot": "/file/filter", "use": ":original"}}));
    let (_, waiting) = create(
        &first.base,
        form(&p, &[]).text("num_expected_upload_files", "1"),
    )
    .await;
    assert_eq!(waiting["ok"], "ASSEMBLY_UPLOADING");
    let (_, done) = create(&first.base, form(&p, &[("a.txt", b"kept")])).await;
    let done = settle(done["assembly_ssl_url"].as_str().expect("url")).await;
    drop(first);

    let second = start(config(dir.path(), false)).await;
    for before in [&waiting, &done] {
        let id = before["assembly_id"].as_str().expect("id");
        let after: Value = reqwest::get(format!("{}/assemblies/{id}", second.base))
            .await
            .expect("get")
            .json()
            .await
            .expect("json");
        // The same Assembly, files and all; only the server's address in its URLs changed.
        let same = |v: &Value| {
            (
                v["ok"].clone(),
                no_urls(&v["uploads"]),
                no_urls(&v["results"]),
            )
        };
        assert_eq!(same(&after), same(before));
    }

    // One that was executing when the server stopped runs again when it comes back.
    let store = ferry_process::assembly::store::Store::open(dir.path().join("assemblies"))
        .await
        .expect("store");
    let id = done["assembly_id"]
        .as_str()
        .and_then(ferry_process::id::Id::parse)
        .expect("id");
    let mut record = store.load(&id).await.expect("load").expect("record");
    record.state = ferry_process::assembly::record::State::Executing;
    record.results.clear();
    store.save(&record).await.expect("save");
    drop(second);
    let third = start(config(dir.path(), false)).await;
    let again = settle(&format!("{}/assemblies/{id}", third.base)).await;
    assert_eq!(again["ok"], "ASSEMBLY_COMPLETED", "{again}");
    assert_eq!(no_urls(&again["results"]), no_urls(&done["results"]));
    assert_eq!(again["warnings"].as_array().map(Vec::len), Some(1));
}

/// `v` without its `url` and `ssl_url` keys (they carry the server's address).
fn no_urls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "url" | "ssl_url"))
                .map(|(k, v)| (k.clone(), no_urls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(no_urls).collect()),
        other => other.clone(),
    }
}
