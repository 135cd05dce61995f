//! Drive's tokens over time: refresh (rotated refresh tokens, mid-transfer expiry), logout, and
//! Google's rate limits and failures (Retry-After waited out within the cap).

use super::*;

#[tokio::test]
async fn expired_access_answers_401_at_once_then_refresh_keeps_rotated_refresh_tokens() {
    let env = start().await;
    let id = env
        .google
        .state
        .add_file("root", "a.txt", "text/plain", b"hello".to_vec());
    let login = login(&env, "drive", APP, None).await;
    let first = session_of("drive", &login.token);
    env.google
        .state
        .expire(first["accessToken"].as_str().expect("access"));
    let (status, body) = get(&env, "/drive/list/root", Some(&login.token)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (
            401,
            Some("HTTP 401: invalid access token detected by Provider")
        )
    );
    let (status, _) = post(
        &env,
        &format!("/drive/get/{id}"),
        Some(&login.token),
        tus_body(&env, "a.txt", 5),
    )
    .await;
    assert_eq!(status, 401, "/get answers 401 before any transfer");

    env.google
        .state
        .faults
        .rotate_refresh
        .store(true, Ordering::SeqCst);
    let (status, body) = post(&env, "/drive/refresh-token", Some(&login.token), json!({})).await;
    assert_eq!(status, 200, "{body}");
    let refreshed = body["uppyAuthToken"].as_str().expect("token").to_owned();
    let second = session_of("drive", &refreshed);
    assert_ne!(
        second["refreshToken"], first["refreshToken"],
        "the rotated refresh token is kept"
    );
    assert!(
        env.google
            .state
            .refresh_token_live(second["refreshToken"].as_str().expect("refresh"))
    );
    assert_eq!(second["username"], "fake.user@example.com");
    let (status, _) = get(&env, "/drive/list/root", Some(&refreshed)).await;
    assert_eq!(status, 200);
    // The rotated token refreshes again; the retired one no longer does.
    let (status, _) = post(&env, "/drive/refresh-token", Some(&refreshed), json!({})).await;
    assert_eq!(status, 200);
    let (status, _) = post(&env, "/drive/refresh-token", Some(&login.token), json!({})).await;
    assert_eq!(status, 401);
    env.google
        .state
        .faults
        .revoke_refresh
        .store(true, Ordering::SeqCst);
    let (status, _) = post(&env, "/drive/refresh-token", Some(&refreshed), json!({})).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn logout_revokes_at_google_and_tolerates_bad_tokens() {
    let env = start().await;
    let login = login(&env, "drive", APP, None).await;
    let access = session_of("drive", &login.token)["accessToken"]
        .as_str()
        .expect("access")
        .to_owned();
    let (status, body) = get(&env, "/drive/logout", Some(&login.token)).await;
    assert_eq!((status, body), (200, json!({"ok": true, "revoked": true})));
    assert!(!env.google.state.access_token_live(&access));
    let (status, _) = get(&env, "/drive/list/root", Some(&login.token)).await;
    assert_eq!(status, 401);
    let (status, body) = get(&env, "/drive/logout", Some("garbage")).await;
    assert_eq!((status, body), (200, json!({"ok": true, "revoked": false})));
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_waited_out_within_the_cap_and_reported_beyond_it() {
    let env = start().await;
    let g = &env.google.state;
    let data = random_bytes(300_000);
    let id = g.add_file("root", "clip.mp4", "video/mp4", data.clone());
    let login = login(&env, "drive", APP, None).await;
    ratelimit::list_waits_out_retry_after(&env, "drive", "root", &login.token, &g.faults).await;
    let name = "Google Drive";
    ratelimit::list_over_the_cap_is_429(&env, "drive", name, "root", &login.token, &g.faults).await;
    ratelimit::import_waits_out_retry_after(
        &env,
        "drive",
        name,
        &id,
        &login.token,
        &g.faults,
        &data,
    )
    .await;

    // Retry-After as an HTTP-date (whole seconds, so a little less than asked is left when it
    // arrives): waited out within the cap, reported beyond it.
    let f = &g.faults;
    f.retry_after_date.store(true, Ordering::SeqCst);
    f.retry_after.store(3, Ordering::SeqCst);
    f.too_many.store(1, Ordering::SeqCst);
    let start = tokio::time::Instant::now();
    let (status, body) = get(&env, "/drive/list/root", Some(&login.token)).await;
    assert_eq!(status, 200, "{body}");
    assert!(start.elapsed() >= std::time::Duration::from_secs(1));
    f.retry_after.store(120, Ordering::SeqCst);
    f.too_many.store(1, Ordering::SeqCst);
    let (status, body) = get(&env, "/drive/list/root", Some(&login.token)).await;
    let n = body["retryAfter"].as_u64().unwrap_or(0);
    assert!(status == 429 && (118..=120).contains(&n), "{status} {body}");
    assert_eq!(
        body["message"],
        format!("Google Drive is limiting requests; retrying in {n} s")
    );
}

#[tokio::test]
async fn rate_limits_are_retried_and_provider_failures_mapped() {
    let env = start().await;
    env.google
        .state
        .add_file("root", "a.txt", "text/plain", b"a".to_vec());
    let login = login(&env, "drive", APP, None).await;
    let f = &env.google.state.faults;
    f.too_many.store(1, Ordering::SeqCst);
    f.rate_limited.store(1, Ordering::SeqCst);
    let (status, body) = get(&env, "/drive/list/root", Some(&login.token)).await;
    assert_eq!(status, 200, "{body}");
    f.too_many.store(10, Ordering::SeqCst);
    let (status, body) = get(&env, "/drive/list/root", Some(&login.token)).await;
    assert_eq!(
        (status, body),
        (
            429,
            json!({"message": "Google Drive is limiting requests; retrying in 1 s",
                "retryAfter": 1})
        )
    );
    f.too_many.store(0, Ordering::SeqCst);
    f.server_error.store(1, Ordering::SeqCst);
    let (status, body) = get(&env, "/drive/list/root", Some(&login.token)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (502, Some("HTTP 500: Internal Error"))
    );
    let (status, body) = get(&env, "/drive/list/doesnotexist", Some(&login.token)).await;
    assert_eq!(
        status, 200,
        "an unknown folder is empty, as on Google: {body}"
    );
}

#[tokio::test]
async fn an_access_token_expiring_mid_transfer_is_refreshed_server_side() {
    let env = start().await;
    let data = random_bytes(600_000);
    let id =
        env.google
            .state
            .add_file("root", "long.bin", "application/octet-stream", data.clone());
    let login = login(&env, "drive", APP, None).await;
    let access = session_of("drive", &login.token)["accessToken"]
        .as_str()
        .expect("access")
        .to_owned();
    env.google
        .state
        .faults
        .cut_after
        .store(200_000, Ordering::SeqCst);
    let (status, answer) = post(
        &env,
        &format!("/drive/get/{id}"),
        Some(&login.token),
        tus_body(&env, "long.bin", data.len()),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    // The hour runs out while the first response streams: the resumed read needs a new token.
    env.google.state.expire(&access);
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));
    assert!(!env.google.state.access_token_live(&access));
}
