//! Contract tests of the `box` provider against the testkit's fake Box over real HTTP: sign-in,
//! marker paging that stays in the folder, thumbnails through signed links, byte-exact imports
//! into tus and S3 (resumed with `Range` after a dropped download), server-side refresh with
//! one-use refresh tokens (shared by concurrent requests, remembered for the client's stale
//! token), logout of the newest tokens, rate limits and bad input.

mod common;

use std::sync::atomic::Ordering;

use common::providers::*;
use common::ratelimit;
use common::rotating;
use ferry_testkit::garage::Garage;
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::Value;

fn tokens(token: &str) -> (String, String) {
    rotating::tokens("box", token)
}

async fn import(env: &Env, id: &str, token: &str, size: usize) -> (u16, Value) {
    post(
        env,
        &format!("/box/get/{id}"),
        Some(token),
        tus_body(env, "file.bin", size),
    )
    .await
}

#[tokio::test]
async fn sign_in_lists_folders_first_and_pages_on_markers_inside_the_folder() {
    let env = start().await;
    let b = &env.boxed.state;
    b.add_file("0", "a-root.txt", b"root".to_vec());
    let docs = b.add_folder("0", "Docs");
    let mut expected = Vec::new();
    for i in 0..12 {
        expected.push(b.add_file(
            &docs,
            &format!("photo-{i:02}.jpg"),
            vec![i; 10 + i as usize],
        ));
    }
    let login = login(&env, "box", APP, None).await;
    assert_eq!(session_of("box", &login.token)["username"], b.login);

    let (root, pages) = list_all(&env, "box", "", &login.token).await;
    assert_eq!(pages, 1);
    let names: Vec<&str> = root
        .iter()
        .map(|i| i["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["Docs", "a-root.txt"], "folders first");
    assert_eq!(
        (
            root[0]["isFolder"].as_bool(),
            root[0]["icon"].as_str(),
            root[0]["requestPath"].as_str()
        ),
        (Some(true), Some("folder"), Some(docs.as_str()))
    );

    // 12 files in pages of 5: three pages, each of the folder (Companion's `?cursor=` alone
    // would page the root instead).
    let (items, pages) = list_all(&env, "box", &docs, &login.token).await;
    assert_eq!(pages, 3);
    let ids: Vec<&str> = items
        .iter()
        .map(|i| i["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, expected);
    let first = &items[0];
    assert_eq!(
        (
            first["icon"].as_str(),
            first["mimeType"].as_str(),
            first["size"].as_u64(),
            first["isFolder"].as_bool(),
        ),
        (Some("file"), Some("image/jpeg"), Some(10), Some(false))
    );
    assert!(
        first["modifiedDate"]
            .as_str()
            .is_some_and(|d| d.starts_with("2026-"))
    );
    let (_, page) = get(&env, &format!("/box/list/{docs}"), Some(&login.token)).await;
    let next = page["nextPagePath"].as_str().expect("next page");
    assert!(next.starts_with(&format!("{docs}?cursor=")), "{next}");
}

#[tokio::test]
async fn thumbnails_load_with_a_plain_request_and_placeholders_follow_box_redirects() {
    let env = start().await;
    let b = &env.boxed.state;
    let photo = b.add_file("0", "photo.png", b"png".to_vec());
    b.add_file("0", "notes.txt", b"text".to_vec());
    let login = login(&env, "box", APP, None).await;
    let (items, _) = list_all(&env, "box", "", &login.token).await;
    let thumb = |name: &str| {
        items
            .iter()
            .find(|i| i["name"] == name)
            .and_then(|i| i["thumbnail"].as_str())
            .expect("thumbnail")
            .to_owned()
    };
    let link = thumb("photo.png");
    assert!(link.starts_with(&env.companion.url(&format!("/box/thumbnail/{photo}?t="))));
    let r = reqwest::get(&link).await.expect("thumbnail");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/jpeg");
    assert_eq!(
        r.text().await.expect("body"),
        format!("thumbnail of {photo}")
    );

    // A type without thumbnails (302) and one still generating (202) show Box's placeholder.
    let r = reqwest::get(thumb("notes.txt")).await.expect("placeholder");
    assert_eq!(
        (r.status().as_u16(), r.text().await.expect("body")),
        (200, "placeholder".into())
    );
    b.thumbnail_pending.store(true, Ordering::SeqCst);
    let r = reqwest::get(&link).await.expect("pending");
    assert_eq!(
        (r.status().as_u16(), r.text().await.expect("body")),
        (200, "placeholder".into())
    );
}

#[tokio::test]
async fn imports_are_byte_exact_and_a_dropped_download_resumes() {
    let env = start().await;
    let data = random_bytes(700_000);
    let id = env.boxed.state.add_file("0", "video.mp4", data.clone());
    let login = login(&env, "box", APP, None).await;
    let (status, answer) = import(&env, &id, &login.token, data.len()).await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));

    env.boxed
        .state
        .faults
        .cut_after
        .store(250_000, Ordering::SeqCst);
    let (status, answer) = import(&env, &id, &login.token, data.len()).await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));
    assert_eq!(
        env.boxed.state.faults.cut_after.load(Ordering::SeqCst),
        0,
        "the cut happened"
    );
}

#[tokio::test]
async fn box_import_into_s3_multipart_is_byte_exact() {
    let garage = Garage::start().await;
    let env = start_with(Opts {
        s3: Some(common::s3::state(&garage, "box/")),
        ..Opts::default()
    })
    .await;
    let data = random_bytes(6 * 1024 * 1024 + 7);
    let id = env.boxed.state.add_file("0", "big.bin", data.clone());
    let login = login(&env, "box", APP, None).await;
    common::s3::provider_import_exact(&env, &garage, "box", &id, &login.token, &data).await;
}

#[tokio::test]
async fn an_access_token_expiring_mid_list_is_refreshed_once_and_the_rotation_remembered() {
    let env = start().await;
    let b = &env.boxed.state;
    let folder = b.add_folder("0", "Many");
    let mut files = Vec::new();
    for i in 0..12u8 {
        files.push(b.add_file(&folder, &format!("f{i:02}.png"), vec![i; 100]));
    }
    let login = login(&env, "box", APP, None).await;
    let (a1, r1) = tokens(&login.token);
    let (status, page) = get(&env, &format!("/box/list/{folder}"), Some(&login.token)).await;
    assert_eq!(status, 200, "{page}");
    let thumb = page["items"][0]["thumbnail"]
        .as_str()
        .expect("thumb")
        .to_owned();
    let next = page["nextPagePath"].as_str().expect("next").to_owned();

    // The hour passes between two pages: the server refreshes, and the refresh token rotates.
    b.expire(&a1);
    let (status, page) = get(&env, &format!("/box/list/{next}"), Some(&login.token)).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["items"].as_array().map(Vec::len), Some(5));
    assert_eq!(b.refreshes.load(Ordering::SeqCst), 1);
    assert!(!b.refresh_token_live(&r1), "r1 is spent");

    // The client (like @uppy/box) keeps its original token: later pages, a thumbnail minted
    // before the refresh, and six imports at once all use the rotated tokens, with no second
    // refresh (which Box would refuse: r1 works once).
    let next = page["nextPagePath"].as_str().expect("next").to_owned();
    let (status, _) = get(&env, &format!("/box/list/{next}"), Some(&login.token)).await;
    assert_eq!(status, 200);
    assert_eq!(reqwest::get(&thumb).await.expect("thumb").status(), 200);
    let imports = files[..6]
        .iter()
        .map(|id| import(&env, id, &login.token, 100));
    for (status, answer) in futures_util::future::join_all(imports).await {
        assert_eq!(status, 200, "{answer}");
        transfer(&env, answer["token"].as_str().expect("token")).await;
    }
    assert_eq!(b.refreshes.load(Ordering::SeqCst), 1);

    // Ferry's own client may refresh through the route: its new token holds the live
    // refresh token, and the stale copy keeps following.
    rotating::the_refresh_route_hands_out_the_live_tokens(&env, "box", &**b, &login.token, 2).await;
    let (status, _) = get(&env, "/box/list/", Some(&login.token)).await;
    assert_eq!(status, 200);
    assert_eq!(b.refreshes.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_access_token_expiring_mid_import_batch_is_refreshed_once() {
    let env = start().await;
    let b = &env.boxed.state;
    let ids: Vec<String> = (0..5u8)
        .map(|i| b.add_file("0", &format!("{i}.bin"), vec![i; 50_000]))
        .collect();
    let login = login(&env, "box", APP, None).await;
    let (a1, _) = tokens(&login.token);
    b.expire(&a1);
    let imports = ids.iter().map(|id| import(&env, id, &login.token, 50_000));
    for (status, answer) in futures_util::future::join_all(imports).await {
        assert_eq!(status, 200, "{answer}");
        transfer(&env, answer["token"].as_str().expect("token")).await;
    }
    assert_eq!(b.refreshes.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_refused_refresh_is_authorization_required() {
    let env = start().await;
    rotating::a_refused_refresh_is_authorization_required(&env, "box", &*env.boxed.state).await;
}

#[tokio::test]
async fn logout_revokes_the_newest_tokens_of_a_rotated_session() {
    let env = start().await;
    let b = &*env.boxed.state;
    rotating::logout_revokes_the_newest_tokens_of_a_rotated_session(&env, "box", b).await;
}

#[tokio::test]
async fn rate_limits_back_off_then_answer_429() {
    let env = start().await;
    let f = &env.boxed.state.faults;
    rotating::rate_limits_back_off_then_answer_429(&env, "box", "Box", f).await;
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_waited_out_within_the_cap_and_reported_beyond_it() {
    let env = start().await;
    let b = &env.boxed.state;
    let data = random_bytes(300_000);
    let id = b.add_file("0", "clip.mp4", data.clone());
    let login = login(&env, "box", APP, None).await;
    ratelimit::list_waits_out_retry_after(&env, "box", "", &login.token, &b.faults).await;
    ratelimit::list_over_the_cap_is_429(&env, "box", "Box", "", &login.token, &b.faults).await;
    ratelimit::import_waits_out_retry_after(
        &env,
        "box",
        "Box",
        &id,
        &login.token,
        &b.faults,
        &data,
    )
    .await;
}

/// Box's download host (`dl.boxcloud.com`) answers the reopened download 503 with
/// `Retry-After` twice: the import waits both out, says so on its socket, and completes
/// byte-exact.
#[tokio::test(start_paused = true)]
async fn a_503_with_retry_after_from_the_download_host_is_waited_out() {
    let env = start().await;
    let b = &env.boxed.state;
    let data = random_bytes(300_000);
    let id = b.add_file("0", "clip.mp4", data.clone());
    let login = login(&env, "box", APP, None).await;
    ratelimit::import_waits_out_unavailable(
        &env,
        "box",
        "Box",
        &id,
        &login.token,
        &b.faults,
        &data,
    )
    .await;
}

#[tokio::test]
async fn bad_input_is_refused_with_a_message_before_box_is_asked() {
    let env = start().await;
    let b = &env.boxed.state;
    let folder = b.add_folder("0", "Folder");
    let login = login(&env, "box", APP, None).await;
    let calls = b.api_calls.load(Ordering::SeqCst);
    let (status, body) = get(&env, "/box/list/..%2F1", Some(&login.token)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (400, Some("Invalid folder id"))
    );
    let (status, body) = import(&env, "12ab", &login.token, 1).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (400, Some("Invalid file id"))
    );
    let (status, body) = get(&env, "/box/thumbnail/x1?t=bad", Some(&login.token)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (400, Some("Invalid file id"))
    );
    assert_eq!(
        b.api_calls.load(Ordering::SeqCst),
        calls,
        "nothing reached Box"
    );

    // Ids Box does not know (or a folder's, on /get): Box's own message.
    let (status, body) = import(&env, &folder, &login.token, 1).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (424, Some("HTTP 404: Not Found"))
    );
    let (status, body) = get(&env, "/box/list/987654321", Some(&login.token)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (424, Some("HTTP 404: Not Found"))
    );
    let (status, _) = get(&env, "/box/list/", None).await;
    assert_eq!(status, 401);
}
