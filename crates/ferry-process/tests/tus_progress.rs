//! Uploads arriving through tus count in the Assembly Status while they arrive: the tus
//! endpoint's post-create and post-receive hooks, through the bridge, fill `tus_uploads[]`,
//! `started_tus_uploads` and the byte counters; a finished upload counts once.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use ferry_hooks::{HookEvent, HookType, Hooks, HttpRequestInfo, NoHooks, StopSignal, Upload};
use ferry_process::assembly::record::FileRecord;
use ferry_process::id::Id;
use ferry_process::tus::TusBridge;
use serde_json::{Value, json};

fn event(hook: HookType, assembly_url: &str, tus_id: &str, offset: u64) -> HookEvent {
    let metadata = BTreeMap::from([
        ("assembly_url".to_owned(), assembly_url.to_owned()),
        ("fieldname".to_owned(), "file".to_owned()),
        ("filename".to_owned(), "clip.mp4".to_owned()),
    ]);
    let upload = Upload {
        id: tus_id.to_owned(),
        size: Some(1000),
        offset,
        metadata,
        ..Default::default()
    };
    HookEvent::new(hook, upload, HttpRequestInfo::default())
}

/// The status once `ok(status)` holds (the bridge records in the background; at most 10 s).
async fn status_when(url: &str, ok: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..500 {
        let status: Value = reqwest::get(url)
            .await
            .expect("get")
            .json()
            .await
            .expect("json");
        if ok(&status) {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the status at {url} never got there");
}

#[tokio::test]
async fn tus_uploads_count_in_the_status_while_they_arrive() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let p = params(json!({"kept": {"robot": "/file/filter", "use": ":original"}}));
    let f = form(&p, &[]).text("num_expected_upload_files", "2");
    let (_, created) = create(&s.base, f).await;
    let url = created["assembly_ssl_url"]
        .as_str()
        .expect("url")
        .to_owned();
    let id = created["assembly_id"].as_str().expect("id").to_owned();
    assert_eq!(
        (
            created["bytes_received"].as_u64(),
            created["started_tus_uploads"].as_u64()
        ),
        (Some(0), Some(0))
    );
    let bridge = TusBridge::new(Arc::new(NoHooks), s.service.clone());
    assert!(bridge.enabled(HookType::PostCreate) && bridge.enabled(HookType::PostReceive));

    bridge.notify(event(HookType::PostCreate, &url, "t1", 0));
    bridge.notify_progress(
        event(HookType::PostReceive, &url, "t1", 400),
        &StopSignal::new(),
    );
    let status = status_when(&url, |s| s["bytes_received"] == 400).await;
    assert_eq!(status["bytes_expected"], 1000);
    assert_eq!(
        (
            status["started_tus_uploads"].as_u64(),
            status["finished_tus_uploads"].as_u64()
        ),
        (Some(1), Some(0))
    );
    let tus_url = format!("{}/files/t1", s.base);
    assert_eq!(
        status["tus_uploads"],
        json!([{"filename": "clip.mp4", "fieldname": "file", "size": 1000, "offset": 400,
                "finished": false, "upload_url": tus_url}])
    );
    // A late report of a lower offset does not take the count back.
    bridge.notify_progress(
        event(HookType::PostReceive, &url, "t1", 100),
        &StopSignal::new(),
    );
    bridge.notify(event(HookType::PostCreate, &url, "t2", 0));
    let status = status_when(&url, |s| s["started_tus_uploads"] == 2).await;
    assert_eq!(status["bytes_received"], 400);
    assert_eq!(status["bytes_expected"], 2000);

    // The first finishes (as the bridge's post-finish records it): counted once.
    let file_id = Id::random();
    let path = dir
        .path()
        .join("assemblies")
        .join(&id)
        .join("uploads")
        .join(file_id.as_str());
    tokio::fs::write(&path, vec![7u8; 1000])
        .await
        .expect("write");
    let mut rec = FileRecord::upload(
        file_id,
        "clip.mp4".into(),
        1000,
        "video/mp4".into(),
        "file".into(),
    );
    rec.tus_upload_url = Some(tus_url);
    assert!(
        s.service
            .add_upload(&Id::parse(&id).expect("id"), rec)
            .await
            .expect("add")
    );
    let status = status_when(&url, |s| s["finished_tus_uploads"] == 1).await;
    assert_eq!(
        (
            status["bytes_received"].as_u64(),
            status["bytes_expected"].as_u64()
        ),
        (Some(1000), Some(2000))
    );
    assert_eq!(status["tus_uploads"][0]["finished"], true);
    assert_eq!(status["tus_uploads"][0]["offset"], 1000);

    // Uploads naming no Assembly are none of its business.
    let mut other = event(HookType::PostCreate, &url, "t3", 0);
    other.event.upload.metadata.remove("assembly_url");
    bridge.notify(other);
    bridge.notify_progress(
        event(HookType::PostReceive, &url, "t2", 10),
        &StopSignal::new(),
    );
    let status = status_when(&url, |s| s["bytes_received"] == 1010).await;
    assert_eq!(status["started_tus_uploads"], 2);

    // A deferred length (the Node SDK streams so): `size` is still a number, the bytes so far.
    let mut deferred = event(HookType::PostReceive, &url, "t4", 50);
    deferred.event.upload.size = None;
    bridge.notify_progress(deferred, &StopSignal::new());
    let status = status_when(&url, |s| s["started_tus_uploads"] == 3).await;
    assert_eq!(status["tus_uploads"][2]["size"], 50);
    assert_eq!(
        (
            status["bytes_received"].as_u64(),
            status["bytes_expected"].as_u64()
        ),
        (Some(1060), Some(2050))
    );
}
