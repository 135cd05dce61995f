//! Contract tests of the `onedrive` provider against the testkit's fake Microsoft over real
//! HTTP: sign-in with PKCE, the top level (virtual folders, then the person's OneDrive paged by
//! `$skiptoken`), shared items, SharePoint sites and their document libraries, byte-exact
//! imports through Graph's content redirect (resumed after a dropped download), an access token
//! expiring in the middle of a batch (refreshed once for all), logout, rate limits, bad input.

mod common;

use std::sync::atomic::Ordering;

use common::providers::*;
use common::ratelimit;
use ferry_testkit::garage::Garage;
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::{Value, json};

async fn import(env: &Env, path: &str, token: &str, size: usize) -> (u16, Value) {
    post(
        env,
        &format!("/onedrive/get/{path}"),
        Some(token),
        tus_body(env, "file.bin", size),
    )
    .await
}

async fn import_exact(env: &Env, path: &str, token: &str, data: &[u8]) {
    let (status, answer) = import(env, path, token, data.len()).await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(data));
}

#[tokio::test]
async fn the_top_level_shows_shared_items_sites_then_my_drive_in_pages() {
    let env = start().await;
    let g = &env.ms.state;
    let docs = g.add_folder(&g.my_drive, "root", "Documents");
    for i in 0..7u8 {
        g.add_file(
            &g.my_drive,
            "root",
            &format!("p{i}.jpg"),
            "image/jpeg",
            vec![i; 9],
        );
    }
    g.add_file(&g.my_drive, &docs, "inner.txt", "text/plain", b"x".to_vec());
    let login = login(&env, "onedrive", APP, None).await;
    assert_eq!(session_of("onedrive", &login.token)["username"], g.mail);

    let (items, pages) = list_all(&env, "onedrive", "", &login.token).await;
    assert_eq!(pages, 2, "8 items in pages of 5");
    let listed = names(&items);
    assert_eq!(
        &listed[..3],
        ["Shared with me", "SharePoint sites", "Documents"]
    );
    assert_eq!(listed.len(), 2 + 8);
    let photo = items.iter().find(|i| i["name"] == "p0.jpg").expect("photo");
    assert_eq!(
        (
            photo["mimeType"].as_str(),
            photo["size"].as_u64(),
            photo["isFolder"].as_bool()
        ),
        (Some("image/jpeg"), Some(9), Some(false))
    );
    assert!(
        photo["thumbnail"]
            .as_str()
            .is_some_and(|t| t.contains("/thumbs/"))
    );
    let folder = items
        .iter()
        .find(|i| i["name"] == "Documents")
        .expect("folder");
    let path = folder["requestPath"].as_str().expect("path");
    assert_eq!(path, format!("{}~{docs}", g.my_drive));
    let (inner, _) = list_all(&env, "onedrive", path, &login.token).await;
    assert_eq!(names(&inner), ["inner.txt"]);
}

#[tokio::test]
async fn sharepoint_libraries_and_shared_items_import_byte_exact() {
    let env = start().await;
    let g = &env.ms.state;
    let (_, library) = g.add_site_library("Marketing", "Campaign assets");
    let report = random_bytes(300_000);
    let id = g.add_file(&library, "root", "launch.mp4", "video/mp4", report.clone());
    let shared = random_bytes(20_000);
    let shared_id = g.add_shared_with_me("budget.xlsx", "application/vnd.ms-excel", shared.clone());
    let login = login(&env, "onedrive", APP, None).await;

    let (sites, _) = list_all(&env, "onedrive", "sites", &login.token).await;
    assert_eq!(names(&sites), ["Marketing"]);
    let site = sites[0]["requestPath"].as_str().expect("site");
    let (libraries, _) = list_all(&env, "onedrive", site, &login.token).await;
    assert_eq!(names(&libraries), ["Campaign assets"]);
    let lib = libraries[0]["requestPath"].as_str().expect("library");
    assert_eq!(lib, format!("{library}~root"));
    let (files, _) = list_all(&env, "onedrive", lib, &login.token).await;
    let file = files[0]["requestPath"].as_str().expect("file");
    assert_eq!(file, format!("{library}~{id}"));
    import_exact(&env, file, &login.token, &report).await;

    let (items, _) = list_all(&env, "onedrive", "shared", &login.token).await;
    assert_eq!(names(&items), ["budget.xlsx"]);
    let path = items[0]["requestPath"].as_str().expect("path");
    assert!(path.ends_with(&format!("~{shared_id}")), "{path}");
    import_exact(&env, path, &login.token, &shared).await;

    // A download cut in the middle resumes with Range.
    g.faults.cut_after.store(100_000, Ordering::SeqCst);
    import_exact(&env, file, &login.token, &report).await;
    assert_eq!(
        g.faults.cut_after.load(Ordering::SeqCst),
        0,
        "the cut happened"
    );
}

#[tokio::test]
async fn an_access_token_expiring_mid_batch_is_refreshed_once_for_every_import() {
    let env = start().await;
    let g = &env.ms.state;
    g.one_use_refresh.store(true, Ordering::SeqCst);
    let paths: Vec<String> = (0..6u8)
        .map(|i| {
            let id = g.add_file(
                &g.my_drive,
                "root",
                &format!("{i}.bin"),
                "application/octet-stream",
                vec![i; 40_000],
            );
            format!("{}~{id}", g.my_drive)
        })
        .collect();
    let login = login(&env, "onedrive", APP, None).await;
    import_exact(&env, &paths[0], &login.token, &[0u8; 40_000]).await;
    let access = session_of("onedrive", &login.token)["accessToken"]
        .as_str()
        .expect("access")
        .to_owned();
    g.expire(&access);
    let batch = paths[1..]
        .iter()
        .map(|p| import(&env, p, &login.token, 40_000));
    for (status, answer) in futures_util::future::join_all(batch).await {
        assert_eq!(status, 200, "{answer}");
        transfer(&env, answer["token"].as_str().expect("token")).await;
    }
    assert_eq!(g.refreshes.load(Ordering::SeqCst), 1);
    let (status, body) = post(
        &env,
        "/onedrive/refresh-token",
        Some(&login.token),
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let fresh = session_of("onedrive", body["uppyAuthToken"].as_str().expect("token"));
    assert!(g.refresh_token_live(fresh["refreshToken"].as_str().expect("refresh")));
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_waited_out_within_the_cap_and_reported_beyond_it() {
    let env = start().await;
    let g = &env.ms.state;
    let data = random_bytes(300_000);
    let id = g.add_file(&g.my_drive, "root", "clip.mp4", "video/mp4", data.clone());
    let file = format!("{}~{id}", g.my_drive);
    let login = login(&env, "onedrive", APP, None).await;
    ratelimit::list_waits_out_retry_after(&env, "onedrive", "", &login.token, &g.faults).await;
    let name = "OneDrive";
    ratelimit::list_over_the_cap_is_429(&env, "onedrive", name, "", &login.token, &g.faults).await;
    ratelimit::import_waits_out_retry_after(
        &env,
        "onedrive",
        name,
        &file,
        &login.token,
        &g.faults,
        &data,
    )
    .await;
}

/// The pre-authenticated download host Graph redirects to answers the reopened download 503
/// with `Retry-After` twice (SharePoint's throttling): the import waits both out, says so on
/// its socket, and completes byte-exact.
#[tokio::test(start_paused = true)]
async fn a_503_with_retry_after_from_the_download_host_is_waited_out() {
    let env = start().await;
    let g = &env.ms.state;
    let data = random_bytes(300_000);
    let id = g.add_file(&g.my_drive, "root", "clip.mp4", "video/mp4", data.clone());
    let file = format!("{}~{id}", g.my_drive);
    let login = login(&env, "onedrive", APP, None).await;
    ratelimit::import_waits_out_unavailable(
        &env,
        "onedrive",
        "OneDrive",
        &file,
        &login.token,
        &g.faults,
        &data,
    )
    .await;
}

#[tokio::test]
async fn logout_rate_limits_and_bad_input() {
    let env = start().await;
    let g = &env.ms.state;
    let folder = g.add_folder(&g.my_drive, "root", "F");
    let login = login(&env, "onedrive", APP, None).await;
    g.faults.too_many.store(2, Ordering::SeqCst);
    let (status, body) = get(&env, "/onedrive/list/", Some(&login.token)).await;
    assert_eq!(status, 200, "{body}");

    let calls = g.api_calls.load(Ordering::SeqCst);
    for bad in [
        "/onedrive/list/a%2Fb~c",
        "/onedrive/list/site~a%2Fb",
        "/onedrive/list/x",
    ] {
        let (status, body) = get(&env, bad, Some(&login.token)).await;
        assert_eq!(
            (status, body["message"].as_str()),
            (400, Some("Invalid folder id")),
            "{bad}"
        );
    }
    let (status, body) = import(&env, "nodrive", &login.token, 1).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (400, Some("Invalid file id"))
    );
    assert_eq!(
        g.api_calls.load(Ordering::SeqCst),
        calls,
        "nothing reached Graph"
    );
    let (status, body) = import(&env, &format!("{}~{folder}", g.my_drive), &login.token, 1).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (
            400,
            Some("A folder cannot be downloaded; open it and pick its files")
        )
    );

    let (status, body) = get(&env, "/onedrive/logout", Some(&login.token)).await;
    assert_eq!(
        (status, body),
        (
            200,
            json!({"ok": true, "revoked": false,
            "manual_revoke_url": "https://account.live.com/consent/Manage"})
        )
    );
}

#[tokio::test]
async fn onedrive_import_into_s3_multipart_is_byte_exact() {
    let garage = Garage::start().await;
    let env = start_with(Opts {
        s3: Some(common::s3::state(&garage, "onedrive/")),
        ..Opts::default()
    })
    .await;
    let data = random_bytes(6 * 1024 * 1024 + 7);
    let g = &env.ms.state;
    let file = g.add_file(
        &g.my_drive,
        "root",
        "big.bin",
        "application/octet-stream",
        data.clone(),
    );
    let login = login(&env, "onedrive", APP, None).await;
    let id = format!("{}~{file}", g.my_drive);
    let key =
        common::s3::provider_import_exact(&env, &garage, "onedrive", &id, &login.token, &data)
            .await;
    assert!(key.starts_with("onedrive/"), "{key}");
}
