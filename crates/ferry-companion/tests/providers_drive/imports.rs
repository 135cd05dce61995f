//! Drive imports byte-exact at every destination (tus, form, `s3-multipart` into a real Garage
//! bucket), resumed after a cut with Range, paused, resumed, canceled and stalled like link imports.

use super::*;

#[tokio::test]
async fn imports_are_byte_exact_at_tus_and_multipart_and_through_shortcuts() {
    let env = start().await;
    let data = random_bytes(3 * 1024 * 1024 + 17);
    let id = env
        .google
        .state
        .add_file("root", "big.bin", "application/octet-stream", data.clone());
    let link = env.google.state.add_shortcut("root", "big link", &id);
    let login = login(&env, "drive", APP, None).await;
    for target in [id.as_str(), link.as_str()] {
        let (status, answer) = post(
            &env,
            &format!("/drive/get/{target}"),
            Some(&login.token),
            tus_body(&env, "big.bin", data.len()),
        )
        .await;
        assert_eq!(status, 200, "{answer}");
        let url = transfer(&env, answer["token"].as_str().expect("token")).await;
        assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));
    }
    let body = json!({"fileId": id, "protocol": "multipart", "endpoint": env.form.server.url("/upload"),
        "size": data.len(), "fieldname": "file", "metadata": {"name": "big.bin"}});
    let (status, answer) = post(&env, &format!("/drive/get/{id}"), Some(&login.token), body).await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(
        sha256_hex(&common::download(&env.form.server.url(&url)).await),
        sha256_hex(&data)
    );
}

#[tokio::test]
async fn drive_import_into_s3_multipart_is_byte_exact() {
    let garage = Garage::start().await;
    let env = start_with(Opts {
        exempt_loopback: true,
        s3: Some(common::s3::state(&garage, "imports/")),
        ..Opts::default()
    })
    .await;
    let data = random_bytes(11 * 1024 * 1024 + 5);
    let id = env
        .google
        .state
        .add_file("root", "big.bin", "application/octet-stream", data.clone());
    let login = login(&env, "drive", APP, None).await;
    let body = json!({"fileId": id, "protocol": "s3-multipart", "size": data.len(),
        "metadata": {"name": "big.bin", "type": "application/octet-stream"}});
    let (status, answer) = post(&env, &format!("/drive/get/{id}"), Some(&login.token), body).await;
    assert_eq!(status, 200, "{answer}");
    let mut ws = common::socket(&env.companion, answer["token"].as_str().expect("token")).await;
    let (last, _) = common::finish(&mut ws).await;
    assert_eq!(last["action"], "success", "{last}");
    let text = last["payload"]["response"]["responseText"]
        .as_str()
        .expect("responseText");
    let key = serde_json::from_str::<serde_json::Value>(text).expect("json")["key"]
        .as_str()
        .expect("key")
        .to_owned();
    let stored = garage.get_object(&key).await.expect("object");
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));
}

#[tokio::test]
async fn a_download_cut_mid_stream_resumes_with_range_and_stays_byte_exact() {
    let env = start().await;
    let data = random_bytes(600_000);
    let id = env
        .google
        .state
        .add_file("root", "cut.bin", "application/octet-stream", data.clone());
    let login = login(&env, "drive", APP, None).await;
    env.google
        .state
        .faults
        .cut_after
        .store(200_000, Ordering::SeqCst);
    let (status, answer) = post(
        &env,
        &format!("/drive/get/{id}"),
        Some(&login.token),
        tus_body(&env, "cut.bin", data.len()),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));
    assert_eq!(
        env.google.state.faults.cut_after.load(Ordering::SeqCst),
        0,
        "the cut happened"
    );
}

#[tokio::test]
async fn provider_imports_pause_resume_cancel_and_stall_like_link_imports() {
    let env = start().await;
    let data = random_bytes(2 * 1024 * 1024);
    let id =
        env.google
            .state
            .add_file("root", "slow.bin", "application/octet-stream", data.clone());
    let login = login(&env, "drive", APP, None).await;
    env.google.state.faults.slow_ms.store(40, Ordering::SeqCst);
    // Pause, then resume: the tus upload goes on from its offset (a Range request to Drive).
    let (_, answer) = post(
        &env,
        &format!("/drive/get/{id}"),
        Some(&login.token),
        tus_body(&env, "slow.bin", data.len()),
    )
    .await;
    let mut ws = common::socket(&env.companion, answer["token"].as_str().expect("token")).await;
    common::progress_at_least(&mut ws, 1).await;
    common::send_action(&mut ws, "pause").await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    common::send_action(&mut ws, "resume").await;
    let (last, _) = common::finish(&mut ws).await;
    assert_eq!(last["action"], "success", "{last}");
    let url = last["payload"]["url"].as_str().expect("url");
    assert_eq!(sha256_hex(&common::download(url).await), sha256_hex(&data));
    // Cancel: no success frame, the tus upload is terminated.
    let (_, answer) = post(
        &env,
        &format!("/drive/get/{id}"),
        Some(&login.token),
        tus_body(&env, "slow.bin", data.len()),
    )
    .await;
    let mut ws = common::socket(&env.companion, answer["token"].as_str().expect("token")).await;
    common::progress_at_least(&mut ws, 1).await;
    common::send_action(&mut ws, "cancel").await;
    // The whole file takes about 1.3 s at this pace: watch 2.5 s for anything but progress.
    let watch = async {
        loop {
            let frame = common::next_frame(&mut ws).await;
            assert_eq!(
                frame["action"], "progress",
                "only progress may trail a cancel: {frame}"
            );
        }
    };
    let _ = tokio::time::timeout(std::time::Duration::from_millis(2500), watch).await;
    // Stall: a provider that stops sending fails the transfer after the stall timeout (5 s).
    env.google
        .state
        .faults
        .slow_ms
        .store(60_000, Ordering::SeqCst);
    let (_, answer) = post(
        &env,
        &format!("/drive/get/{id}"),
        Some(&login.token),
        tus_body(&env, "slow.bin", data.len()),
    )
    .await;
    let mut ws = common::socket(&env.companion, answer["token"].as_str().expect("token")).await;
    let (last, _) = common::finish(&mut ws).await;
    assert_eq!(last["action"], "error", "{last}");
    assert_eq!(
        last["payload"]["error"]["message"],
        "Upload stalled for 5 seconds, aborting."
    );
}
