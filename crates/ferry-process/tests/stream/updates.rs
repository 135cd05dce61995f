//! What a client hears: the whole state first when late, each change as it is saved when live,
//! exactly what it missed when it reconnects (also to a restarted server), `assembly_error` on
//! failure; listeners, lifetime and heartbeat bounded; a configured origin's page may listen.

use super::*;

#[tokio::test]
async fn a_late_client_gets_the_whole_state_first_and_the_stream_ends() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let p = params(json!({
        ":original": {"robot": "/upload/handle"},
        "kept": {"robot": "/file/filter", "use": ":original", "accepts": [["${file.name}", "regex", "a"]]},
    }));
    let (_, created) = create(&s.base, form(&p, &[("a.txt", b"aaa"), ("b.txt", b"bbb")])).await;
    let id = created["assembly_id"].as_str().expect("id").to_owned();
    let done = settle(&format!("{}/assemblies/{id}", s.base)).await;
    assert_eq!(done["ok"], "ASSEMBLY_COMPLETED");

    let (code, reader, _) = open(&s.base, &id, None).await;
    assert_eq!(code, 200);
    let events = reader.expect("reader").rest().await;
    let got = names(&events);
    let kinds: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "assembly_upload_finished",
            "assembly_upload_finished",
            "assembly_uploading_finished",
            "assembly_upload_meta_data_extracted",
            "assembly_result_finished",
            "assembly_finished",
        ]
    );
    // The payloads are the status's own file objects.
    assert_eq!(got[0].1, done["uploads"][0]);
    assert_eq!(got[1].1, done["uploads"][1]);
    assert_eq!(got[4].1, json!(["kept", done["results"]["kept"][0]]));
    assert_eq!(got[4].1[1]["name"], "a.txt");
    // Every update has an id; the first says how soon to reconnect.
    assert!(events.iter().all(|e| e.id.is_some()));
    // A client that saw the end is told there is nothing more (an EventSource stops on 204).
    let last = events.last().and_then(|e| e.id.clone()).expect("last id");
    let (code, _, _) = open(&s.base, &id, Some(&last)).await;
    assert_eq!(code, 204);
    let (code, _, body) = open(&s.base, "0123456789abcdef0123456789abcdef", None).await;
    assert_eq!(
        (code, body["error"].as_str()),
        (404, Some("ASSEMBLY_NOT_FOUND"))
    );
}

#[tokio::test]
async fn a_live_client_gets_each_change_as_it_is_saved() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    s.service.live().set_limits(poke_only());
    let id = waiting(&s.base, 2).await;
    let (code, reader, _) = open(&s.base, &id, None).await;
    assert_eq!(code, 200);
    let mut reader = reader.expect("reader");

    let first = upload(&s, dir.path(), &id, "one.txt", b"1").await;
    let e = reader.next_update().await.expect("an update");
    assert_eq!(e.event.as_deref(), Some("assembly_upload_finished"));
    let file: Value = serde_json::from_str(&e.data).expect("json");
    assert_eq!(
        (file["id"].as_str(), file["name"].as_str()),
        (Some(first.as_str()), Some("one.txt"))
    );

    upload(&s, dir.path(), &id, "two.txt", b"22").await;
    let kinds: Vec<String> = names(&reader.rest().await)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        kinds,
        [
            "assembly_upload_finished",
            "assembly_uploading_finished",
            "assembly_upload_meta_data_extracted",
            "assembly_result_finished",
            "assembly_result_finished",
            "assembly_finished",
        ]
    );
}

#[tokio::test]
async fn a_client_reconnecting_to_a_restarted_server_gets_exactly_what_it_missed() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    s.service.live().set_limits(poke_only());
    let id = waiting(&s.base, 2).await;
    let (_, reader, _) = open(&s.base, &id, None).await;
    let mut reader = reader.expect("reader");
    upload(&s, dir.path(), &id, "one.txt", b"1").await;
    let seen = reader.next_update().await.expect("first upload");
    let last = seen.id.clone().expect("id");
    drop(reader);
    drop(s);

    // A new server on the same data: the second upload arrives while the client is away.
    let s = start(config(dir.path(), false)).await;
    upload(&s, dir.path(), &id, "two.txt", b"22").await;
    settle(&format!("{}/assemblies/{id}", s.base)).await;
    let (code, reader, _) = open(&s.base, &id, Some(&last)).await;
    assert_eq!(code, 200);
    let got = names(&reader.expect("reader").rest().await);
    let kinds: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "assembly_upload_finished",
            "assembly_uploading_finished",
            "assembly_upload_meta_data_extracted",
            "assembly_result_finished",
            "assembly_result_finished",
            "assembly_finished",
        ],
        "the first upload is not sent twice"
    );
    assert_eq!(got[0].1["name"], "two.txt");
}

#[tokio::test]
async fn a_failed_assembly_ends_its_stream_with_assembly_error() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let p = params(json!({
        "strict": {"robot": "/file/filter", "use": ":original", "accepts": [["${file.size}", ">", "100"]],
                   "error_on_decline": true, "error_msg": "Too small."},
    }));
    let (_, created) = create(&s.base, form(&p, &[("a.txt", b"aaa")])).await;
    let id = created["assembly_id"].as_str().expect("id").to_owned();
    let (_, reader, _) = open(&s.base, &id, None).await;
    let got = names(&reader.expect("reader").rest().await);
    let (name, data) = got.last().expect("an end");
    assert_eq!(name, "assembly_error");
    assert_eq!(
        (data["error"].as_str(), data["message"].as_str()),
        (Some("FILE_FILTER_DECLINED_FILE"), Some("Too small."))
    );
    assert!(got.iter().all(|(n, _)| n != "assembly_finished"));
}

#[tokio::test]
async fn listeners_lifetime_and_heartbeat_are_bounded() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    s.service.live().set_limits(StreamLimits {
        listeners: 1,
        lifetime: Duration::from_millis(300),
        heartbeat: Duration::from_millis(50),
        refresh: Duration::from_secs(3600),
        ..Default::default()
    });
    let id = waiting(&s.base, 1).await;
    let (code, reader, _) = open(&s.base, &id, None).await;
    assert_eq!(code, 200);
    let mut reader = reader.expect("reader");
    let (code, _, body) = open(&s.base, &id, None).await;
    assert_eq!(
        (code, body["error"].as_str()),
        (429, Some("RATE_LIMIT_REACHED"))
    );

    // Nothing happens: heartbeats, then the server ends the stream at its lifetime.
    let mut heartbeats = 0;
    while let Some(e) = reader.next().await {
        assert!(e.comment && e.event.is_none() && e.data.is_empty(), "{e:?}");
        heartbeats += 1;
    }
    assert!(heartbeats >= 1, "no heartbeat before the end");
    // The slot was released with the stream: the client reconnects and carries on.
    let (code, reader, _) = open(&s.base, &id, None).await;
    assert_eq!(code, 200);
    let mut reader = reader.expect("reader");
    upload(&s, dir.path(), &id, "one.txt", b"1").await;
    let e = reader.next_update().await.expect("an update");
    assert_eq!(e.event.as_deref(), Some("assembly_upload_finished"));
}

#[tokio::test]
async fn a_page_of_a_configured_origin_may_listen_and_resume() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let id = waiting(&s.base, 1).await;
    let url = format!("{}/assemblies/{id}/stream", s.base);
    // An EventSource resuming sends Last-Event-ID, which a cross-origin page may have to preflight.
    let preflight = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, &url)
        .header("Origin", "https://app.example")
        .header("Access-Control-Request-Method", "GET")
        .header("Access-Control-Request-Headers", "last-event-id")
        .send()
        .await
        .expect("options");
    let allowed = preflight.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap_or_default()
        .to_owned();
    assert!(allowed.contains("last-event-id"), "{allowed}");
    let res = reqwest::Client::new()
        .get(&url)
        .header("Origin", "https://app.example")
        .header("accept", "text/event-stream")
        .send()
        .await
        .expect("get");
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.headers()["access-control-allow-origin"].to_str().ok(),
        Some("https://app.example")
    );
}
