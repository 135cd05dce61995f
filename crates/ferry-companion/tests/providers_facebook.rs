//! Contract tests of the `facebook` provider against the testkit's fake Facebook over real
//! HTTP: sign-in with `email,user_photos` and the swap to a long-lived token, albums then an
//! album's photos with cursor paging that stops where Graph says (not on the last page's
//! `after`), `appsecret_proof` on every Graph call (the fake refuses calls without it), imports
//! of the largest rendition byte-exact into tus and resumed with `Range` after a dropped
//! download, thumbnails, expired tokens, logout, Graph's throttling codes and bad input.

mod common;

use std::sync::atomic::Ordering;

use common::providers::*;
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::{Value, json};

const UNAUTHORIZED: &str = "HTTP 401: invalid access token detected by Provider";

async fn import(env: &Env, id: &str, token: &str, size: usize) -> (u16, Value) {
    post(
        env,
        &format!("/facebook/get/{id}"),
        Some(token),
        tus_body(env, "photo.jpg", size),
    )
    .await
}

#[tokio::test]
async fn sign_in_swaps_for_a_long_lived_token_and_lists_albums_then_photos_with_paging() {
    let env = start().await;
    let f = &env.facebook.state;
    let albums: Vec<String> = (0..7).map(|i| f.add_album(&format!("Album {i}"))).collect();
    let mut photos = Vec::new();
    for i in 0..12u8 {
        let caption = format!("Photo {i}");
        photos.push(f.add_photo(
            &albums[0],
            (i != 3).then_some(caption.as_str()),
            vec![i; 100],
        ));
    }
    let login = login(&env, "facebook", APP, None).await;
    assert_eq!(
        f.last_scope.lock().expect("scope").as_deref(),
        Some("email,user_photos")
    );
    assert_eq!(
        f.long_lived.load(Ordering::SeqCst),
        1,
        "the long-lived swap"
    );
    assert_eq!(session_of("facebook", &login.token)["username"], f.email);

    // Seven albums in pages of five: two pages, and no third one although Graph's last page
    // carries an `after` cursor too.
    let (root, pages) = list_all(&env, "facebook", "", &login.token).await;
    assert_eq!(pages, 2);
    let ids: Vec<&str> = root.iter().map(|a| a["id"].as_str().expect("id")).collect();
    assert_eq!(ids, albums);
    assert_eq!(
        (
            root[0]["isFolder"].as_bool(),
            root[0]["icon"].as_str(),
            root[0]["name"].as_str(),
            root[0]["requestPath"].as_str()
        ),
        (
            Some(true),
            Some("folder"),
            Some("Album 0"),
            Some(albums[0].as_str())
        )
    );
    let (_, first) = get(&env, "/facebook/list/", Some(&login.token)).await;
    let next = first["nextPagePath"].as_str().expect("next");
    assert!(next.starts_with("?cursor="), "{next}");

    let (items, pages) = list_all(&env, "facebook", &albums[0], &login.token).await;
    assert_eq!(pages, 3);
    let ids: Vec<&str> = items
        .iter()
        .map(|p| p["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, photos);
    let cdn_small = env
        .facebook
        .server
        .url(&format!("/cdn/{}/2.jpg", photos[0]));
    assert_eq!(
        (
            items[0]["isFolder"].as_bool(),
            items[0]["name"].as_str(),
            items[0]["mimeType"].as_str(),
            items[0]["thumbnail"].as_str(),
            items[0]["icon"].as_str(),
        ),
        (
            Some(false),
            Some("Photo 0"),
            Some("image/jpeg"),
            Some(cdn_small.as_str()),
            Some(cdn_small.as_str()),
        )
    );
    assert_eq!(
        items[3]["name"].as_str(),
        Some(format!("{} 2026-02-03T04:05:06+0000", photos[3]).as_str()),
        "no caption: Companion's id and date"
    );
    let (_, page) = get(
        &env,
        &format!("/facebook/list/{}", albums[0]),
        Some(&login.token),
    )
    .await;
    let next = page["nextPagePath"].as_str().expect("next");
    assert!(
        next.starts_with(&format!("{}?cursor=", albums[0])),
        "{next}"
    );
}

#[tokio::test]
async fn imports_store_the_largest_rendition_byte_exact_and_resume_after_a_drop() {
    let env = start().await;
    let f = &env.facebook.state;
    let album = f.add_album("Trip");
    let data = random_bytes(600_000);
    let id = f.add_photo(&album, Some("Beach"), data.clone());
    let login = login(&env, "facebook", APP, None).await;
    let (status, answer) = import(&env, &id, &login.token, data.len()).await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));

    f.faults.cut_after.store(200_000, Ordering::SeqCst);
    let (status, answer) = import(&env, &id, &login.token, data.len()).await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));
    assert_eq!(
        f.faults.cut_after.load(Ordering::SeqCst),
        0,
        "the cut happened"
    );

    // The thumbnail route serves the smallest rendition.
    let r = env
        .http
        .get(env.companion.url(&format!("/facebook/thumbnail/{id}")))
        .header("uppy-auth-token", &login.token)
        .send()
        .await
        .expect("thumbnail");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/jpeg");
    assert_eq!(
        r.text().await.expect("body"),
        format!("rendition 130 of {id}")
    );
}

#[tokio::test]
async fn an_expired_token_is_authorization_required_and_cannot_be_refreshed() {
    let env = start().await;
    let login = login(&env, "facebook", APP, None).await;
    env.facebook.state.expire_all();
    let (status, body) = get(&env, "/facebook/list/", Some(&login.token)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (401, Some(UNAUTHORIZED))
    );
    let (status, _) = post(
        &env,
        "/facebook/refresh-token",
        Some(&login.token),
        json!({}),
    )
    .await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn logout_deletes_the_apps_permissions() {
    let env = start().await;
    let f = &env.facebook.state;
    let login = login(&env, "facebook", APP, None).await;
    let (status, body) = get(&env, "/facebook/logout", Some(&login.token)).await;
    assert_eq!((status, body), (200, json!({"ok": true, "revoked": true})));
    assert!(f.permissions_deleted.load(Ordering::SeqCst));
    let (status, body) = get(&env, "/facebook/list/", Some(&login.token)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (401, Some(UNAUTHORIZED))
    );
}

#[tokio::test]
async fn graph_throttling_backs_off_then_answers_429() {
    let env = start().await;
    let f = &env.facebook.state;
    let login = login(&env, "facebook", APP, None).await;
    f.faults.too_many.store(2, Ordering::SeqCst);
    let (status, body) = get(&env, "/facebook/list/", Some(&login.token)).await;
    assert_eq!(status, 200, "{body}");
    f.faults.too_many.store(100, Ordering::SeqCst);
    let (status, body) = get(&env, "/facebook/list/", Some(&login.token)).await;
    // Graph sends no Retry-After: the configured backoff, then 429 with its last step.
    assert_eq!(
        (status, body),
        (
            429,
            json!({"message": "Facebook is limiting requests; retrying in 1 s", "retryAfter": 1})
        )
    );
}

#[tokio::test]
async fn bad_input_is_refused_with_a_message_before_facebook_is_asked() {
    let env = start().await;
    let f = &env.facebook.state;
    let login = login(&env, "facebook", APP, None).await;
    let calls = f.api_calls.load(Ordering::SeqCst);
    for (path, message) in [
        ("/facebook/list/..%2F1", "Invalid album id"),
        ("/facebook/list/12ab", "Invalid album id"),
        ("/facebook/list/123?cursor=a%20b", "Invalid cursor"),
        ("/facebook/thumbnail/x1", "Invalid photo id"),
    ] {
        let (status, body) = get(&env, path, Some(&login.token)).await;
        assert_eq!(
            (status, body["message"].as_str()),
            (400, Some(message)),
            "{path}"
        );
    }
    let (status, body) = import(&env, "me%2Fpermissions", &login.token, 1).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (400, Some("Invalid photo id"))
    );
    assert_eq!(
        f.api_calls.load(Ordering::SeqCst),
        calls,
        "nothing reached Graph"
    );

    let (status, body) = get(&env, "/facebook/list/999", Some(&login.token)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (
            400,
            Some("HTTP 400: Unsupported get request. Object does not exist.")
        )
    );
    let (status, _) = get(&env, "/facebook/list/", None).await;
    assert_eq!(status, 401);
}
