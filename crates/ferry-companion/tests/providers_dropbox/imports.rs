//! Dropbox imports byte-exact into tus and `s3-multipart` (a real Garage bucket): non-ASCII names,
//! cut bodies resumed with `Range`, a token expiring mid-import; and Dropbox's rate limits.

use super::*;

#[tokio::test]
async fn imports_are_byte_exact_with_non_ascii_names_cut_bodies_and_a_token_expiring_mid_import() {
    let env = start().await;
    let d = &env.dropbox.state;
    let data = random_bytes(3 * 1024 * 1024 + 17);
    d.add("/Docs/Résumé ünïcode.bin", data.clone());
    let login = login(&env, "dropbox", APP, None).await;
    let (_, docs) = get(&env, "/dropbox/list/%2Fdocs", Some(&login.token)).await;
    let path = docs["items"][0]["requestPath"]
        .as_str()
        .expect("path")
        .to_owned();

    // Plain import.
    let (status, answer) = post(
        &env,
        &format!("/dropbox/get/{path}"),
        Some(&login.token),
        tus_body(&env, "r.bin", data.len()),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));

    // The body breaks off after 1 MiB and the access token expires meanwhile: the reopen is
    // refused, refreshed once, and continues from the break with Range.
    d.faults.cut_after.store(1024 * 1024, Ordering::SeqCst);
    let (status, answer) = post(
        &env,
        &format!("/dropbox/get/{path}"),
        Some(&login.token),
        tus_body(&env, "r.bin", data.len()),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    d.expire(&access_of(&login.token));
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));
    assert_eq!(
        d.faults.cut_after.load(Ordering::SeqCst),
        0,
        "the cut happened"
    );
    assert_eq!(d.refreshes.load(Ordering::SeqCst), 1, "refreshed once");
}

#[tokio::test]
async fn rate_limits_are_retried_then_reported() {
    let env = start().await;
    env.dropbox.state.add("/a.txt", b"a".to_vec());
    let login = login(&env, "dropbox", APP, None).await;
    let f = &env.dropbox.state.faults;
    f.too_many.store(2, Ordering::SeqCst);
    let (status, body) = get(&env, "/dropbox/list/", Some(&login.token)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(f.too_many.load(Ordering::SeqCst), 0, "both 429s were met");
    f.too_many.store(10, Ordering::SeqCst);
    let (status, body) = get(&env, "/dropbox/list/", Some(&login.token)).await;
    assert_eq!(
        (status, body),
        (
            429,
            json!({"message": "Dropbox is limiting requests; retrying in 1 s", "retryAfter": 1})
        )
    );
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_waited_out_within_the_cap_and_reported_beyond_it() {
    let env = start().await;
    let d = &env.dropbox.state;
    let data = random_bytes(300_000);
    d.add("/clip.bin", data.clone());
    let login = login(&env, "dropbox", APP, None).await;
    let (_, root) = get(&env, "/dropbox/list/", Some(&login.token)).await;
    let path = root["items"][0]["requestPath"]
        .as_str()
        .expect("path")
        .to_owned();
    ratelimit::list_waits_out_retry_after(&env, "dropbox", "", &login.token, &d.faults).await;
    ratelimit::list_over_the_cap_is_429(&env, "dropbox", "Dropbox", "", &login.token, &d.faults)
        .await;
    ratelimit::import_waits_out_retry_after(
        &env,
        "dropbox",
        "Dropbox",
        &path,
        &login.token,
        &d.faults,
        &data,
    )
    .await;
}

/// The content host answers the reopened download 503 with `Retry-After` twice: the import
/// waits both out, says so on its socket, and completes byte-exact.
#[tokio::test(start_paused = true)]
async fn a_503_with_retry_after_from_the_content_host_is_waited_out() {
    let env = start().await;
    let d = &env.dropbox.state;
    let data = random_bytes(300_000);
    d.add("/clip.bin", data.clone());
    let login = login(&env, "dropbox", APP, None).await;
    ratelimit::import_waits_out_unavailable(
        &env,
        "dropbox",
        "Dropbox",
        "%2Fclip.bin",
        &login.token,
        &d.faults,
        &data,
    )
    .await;
}

#[tokio::test]
async fn dropbox_import_into_s3_multipart_is_byte_exact() {
    let garage = Garage::start().await;
    let env = start_with(Opts {
        s3: Some(common::s3::state(&garage, "dropbox/")),
        ..Opts::default()
    })
    .await;
    let data = random_bytes(6 * 1024 * 1024 + 7);
    env.dropbox.state.add("/Big Files/big.bin", data.clone());
    let login = login(&env, "dropbox", APP, None).await;
    let id = {
        let (_, page) = get(&env, "/dropbox/list/%2Fbig%20files", Some(&login.token)).await;
        page["items"][0]["requestPath"]
            .as_str()
            .expect("path")
            .to_owned()
    };
    let body = json!({"fileId": "x", "protocol": "s3-multipart", "size": data.len(),
        "metadata": {"name": "big.bin", "type": "application/octet-stream"}});
    let (status, answer) = post(
        &env,
        &format!("/dropbox/get/{id}"),
        Some(&login.token),
        body,
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let mut ws = common::socket(&env.companion, answer["token"].as_str().expect("token")).await;
    let (last, _) = common::finish(&mut ws).await;
    assert_eq!(last["action"], "success", "{last}");
    let text = last["payload"]["response"]["responseText"]
        .as_str()
        .expect("responseText");
    let key = serde_json::from_str::<Value>(text).expect("json")["key"]
        .as_str()
        .expect("key")
        .to_owned();
    assert!(key.starts_with("dropbox/"), "{key}");
    let stored = garage.get_object(&key).await.expect("object");
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));
}
