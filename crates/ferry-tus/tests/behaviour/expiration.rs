//! Expiration: `Upload-Expires`, 410 once expired, and the sweeper reclaiming storage.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ferry_tus::TusConfig;

use crate::common::{Endpoint, V};

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs()
}

#[tokio::test]
async fn sweeper_reclaims_unfinished_uploads_only() {
    let ep = Endpoint::with(TusConfig {
        expiry: Some(Duration::from_secs(3600)),
        ..TusConfig::default()
    })
    .await;
    let unfinished = ep.create(Some(10), &[]).await;
    let res = ep.patch(&unfinished, 0, b"abc").await;
    let expires = res
        .header("upload-expires")
        .expect("Upload-Expires on PATCH");
    let at = httpdate::parse_http_date(expires).expect("HTTP date");
    let in_secs = at
        .duration_since(SystemTime::now())
        .expect("future")
        .as_secs();
    assert!((3590..=3600).contains(&in_secs), "expires in {in_secs}s");
    let finished = ep.create(Some(2), &[]).await;
    let res = ep.patch(&finished, 0, b"ok").await;
    assert_eq!(res.header("upload-expires"), None);

    assert_eq!(ep.state.sweep(now()).await, 0, "nothing is stale yet");
    assert_eq!(ep.state.sweep(now() + 3601).await, 1);
    assert_eq!(
        ep.send("HEAD", &unfinished, &[V], Vec::new()).await.status,
        404
    );
    assert!(
        !ep.dir
            .path()
            .join(unfinished.trim_start_matches("/files/"))
            .exists()
    );
    assert_eq!(
        ep.send("HEAD", &finished, &[V], Vec::new()).await.status,
        200
    );
}

#[tokio::test]
async fn a_damaged_info_file_does_not_stop_the_sweep() {
    let ep = Endpoint::with(TusConfig {
        expiry: Some(Duration::from_secs(60)),
        ..TusConfig::default()
    })
    .await;
    let damaged = ep.create(Some(10), &[]).await;
    let damaged_id = damaged.trim_start_matches("/files/");
    std::fs::write(
        ep.dir.path().join(format!("{damaged_id}.info")),
        b"{\"id\":",
    )
    .expect("damage the info");
    let stale = ep.create(Some(10), &[]).await;

    assert_eq!(
        ep.state.sweep(now() + 61).await,
        1,
        "the readable one is reclaimed"
    );
    assert_eq!(ep.send("HEAD", &stale, &[V], Vec::new()).await.status, 404);
    // The damaged one is left for a person to look at, not deleted blindly.
    assert!(ep.dir.path().join(format!("{damaged_id}.info")).exists());
    assert_eq!(
        ep.send("HEAD", &damaged, &[V], Vec::new()).await.status,
        500
    );
}

#[tokio::test]
async fn expired_uploads_answer_410_before_the_sweep() {
    let ep = Endpoint::with(TusConfig {
        expiry: Some(Duration::ZERO),
        ..TusConfig::default()
    })
    .await;
    let upload = ep.create(Some(10), &[]).await;
    assert_eq!(ep.send("HEAD", &upload, &[V], Vec::new()).await.status, 410);
    assert_eq!(ep.patch(&upload, 0, b"a").await.status, 410);
}

#[tokio::test(start_paused = true)]
async fn the_sweeper_task_runs_on_its_own() {
    let ep = Endpoint::with(TusConfig {
        expiry: Some(Duration::ZERO),
        ..TusConfig::default()
    })
    .await;
    let upload = ep.create(Some(10), &[]).await;
    let sweeper = ep.state.spawn_sweeper().expect("expiry is on");
    let data = ep.dir.path().join(upload.trim_start_matches("/files/"));
    // The paused clock jumps to each tick; real file I/O completes in between.
    for _ in 0..50 {
        if !data.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    sweeper.abort();
    assert!(!data.exists(), "the sweeper did not reclaim the upload");
}

#[tokio::test]
async fn no_expiration_without_expiry() {
    let ep = Endpoint::with(TusConfig {
        expiry: None,
        ..TusConfig::default()
    })
    .await;
    let res = ep.send("OPTIONS", "/files/", &[], Vec::new()).await;
    let extensions = res.header("tus-extension").expect("extensions");
    assert!(!extensions.contains("expiration"), "{extensions}");
    let upload = ep.create(Some(10), &[]).await;
    assert_eq!(
        ep.patch(&upload, 0, b"a").await.header("upload-expires"),
        None
    );
    assert!(ep.state.spawn_sweeper().is_none());
}
