//! Contract tests of the `instagram` provider against the testkit's fake Instagram: login with
//! the long-lived token exchange, the `recent` list (carousels flattened, cursor paging to the
//! end), imports from CDN URLs (byte-exact, under the egress policy), refresh and logout.

mod common;

use std::sync::atomic::Ordering;

use bytes::Bytes;
use common::providers::*;
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::json;

#[tokio::test]
async fn login_swaps_for_the_long_lived_token_in_both_answer_shapes() {
    let env = start().await;
    for flat in [false, true] {
        env.ig.state.flat_token_answer.store(flat, Ordering::SeqCst);
        let login = login(&env, "instagram", APP, None).await;
        let session = session_of("instagram", &login.token);
        let access = session["accessToken"].as_str().expect("access");
        assert!(
            access.starts_with("IGQlong") && env.ig.state.long_token_live(access),
            "{session}"
        );
        assert_eq!(session["username"], "fake_creator");
    }
}

#[tokio::test]
async fn recent_flattens_albums_and_pages_on_cursors_to_the_end() {
    let env = start().await;
    let ig = &env.ig.state;
    let mut expected = Vec::new();
    for i in 0..6u8 {
        expected.push(ig.add("IMAGE", vec![i; 100]));
    }
    let video = ig.add("VIDEO", random_bytes(5000));
    let album = ig.add_album(vec![
        ("IMAGE", Bytes::from_static(b"one")),
        ("VIDEO", Bytes::from_static(b"two")),
    ]);
    let login = login(&env, "instagram", APP, None).await;
    let (items, pages) = list_all(&env, "instagram", "recent", &login.token).await;
    // 8 posts in pages of 5: two pages, and no empty third page.
    assert_eq!(pages, 2);
    assert_eq!(items.len(), 6 + 1 + 2);
    let ids: Vec<&str> = items
        .iter()
        .map(|i| i["id"].as_str().expect("id"))
        .collect();
    assert_eq!(
        &ids[..2],
        &[album[0].as_str(), album[1].as_str()],
        "newest first, album children flattened"
    );
    assert_eq!(ids[2], video);
    let v = &items[2];
    assert_eq!(
        (
            v["mimeType"].as_str(),
            v["isFolder"].as_bool(),
            v["size"].is_null()
        ),
        (Some("video/mp4"), Some(false), true)
    );
    assert!(
        v["name"]
            .as_str()
            .expect("name")
            .starts_with("Instagram 2026-")
            && v["name"].as_str().expect("name").ends_with(".mp4")
    );
    assert_eq!(v["requestPath"], v["id"]);
    assert!(
        v["thumbnail"]
            .as_str()
            .expect("thumbnail")
            .contains("/cdn/")
    );
    assert!(
        items[0]["name"].as_str().expect("name").ends_with("0.jpeg"),
        "{}",
        items[0]
    );
    let (status, body) = get(&env, "/instagram/list/somewhere-else", Some(&login.token)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (400, Some("Invalid folder id"))
    );
}

#[tokio::test]
async fn media_import_from_the_cdn_is_byte_exact_and_expired_tokens_refresh() {
    let env = start().await;
    let data = random_bytes(400_000);
    let id = env.ig.state.add("VIDEO", data.clone());
    let login = login(&env, "instagram", APP, None).await;
    let (status, answer) = post(
        &env,
        &format!("/instagram/get/{id}"),
        Some(&login.token),
        tus_body(&env, "clip.mp4", data.len()),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));

    env.ig
        .state
        .faults
        .expire_access
        .store(true, Ordering::SeqCst);
    let (status, _) = post(
        &env,
        &format!("/instagram/get/{id}"),
        Some(&login.token),
        tus_body(&env, "clip.mp4", data.len()),
    )
    .await;
    assert_eq!(status, 401, "error 190 is a 401 at once");
    env.ig
        .state
        .faults
        .expire_access
        .store(false, Ordering::SeqCst);
    let (status, body) = post(
        &env,
        "/instagram/refresh-token",
        Some(&login.token),
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let fresh = body["uppyAuthToken"].as_str().expect("token");
    let access = session_of("instagram", fresh)["accessToken"]
        .as_str()
        .expect("access")
        .to_owned();
    assert_ne!(
        access,
        session_of("instagram", &login.token)["accessToken"]
            .as_str()
            .expect("old")
    );
    assert!(env.ig.state.long_token_live(&access));
    let (status, _) = get(&env, "/instagram/list/recent", Some(fresh)).await;
    assert_eq!(status, 200);
    let (status, body) = get(&env, "/instagram/logout", Some(fresh)).await;
    assert_eq!(
        (status, body),
        (
            200,
            json!({"ok": true, "revoked": false,
        "manual_revoke_url": "https://www.instagram.com/accounts/manage_access/"})
        )
    );
    let (status, _) = get(
        &env,
        "/instagram/list/recent",
        Some(&env_drive_token(&env).await),
    )
    .await;
    assert_eq!(status, 401, "a drive token does not open instagram");
}

async fn env_drive_token(env: &Env) -> String {
    login(env, "drive", APP, None).await.token
}

#[tokio::test]
async fn cdn_urls_are_held_to_the_egress_policy() {
    // Without the loopback exemption, the CDN URL the API returns (on loopback) is refused,
    // while the configured API endpoints still work.
    let env = start_with(Opts {
        exempt_loopback: false,
        ..Opts::default()
    })
    .await;
    let id = env.ig.state.add("IMAGE", b"jpeg".to_vec());
    let login = login(&env, "instagram", APP, None).await;
    let (status, _) = get(&env, "/instagram/list/recent", Some(&login.token)).await;
    assert_eq!(status, 200);
    let (status, body) = post(
        &env,
        &format!("/instagram/get/{id}"),
        Some(&login.token),
        tus_body(&env, "a.jpeg", 4),
    )
    .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (400, Some("URL not allowed"))
    );
}
