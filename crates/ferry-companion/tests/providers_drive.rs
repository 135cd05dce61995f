//! Contract tests of the `drive` provider over real HTTP against the testkit's fake Google:
//! the OAuth login with both hand-offs, hostile inputs (forged and replayed state, foreign
//! origins, tokens for another provider, path tricks), the list shape and paging to the end,
//! imports byte-exact at every destination (tus, form, and `s3-multipart` into a real Garage
//! bucket), refresh, logout, rate limits.

mod common;

use std::sync::atomic::Ordering;

use futures_util::StreamExt;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use common::providers::*;
use common::ratelimit;
use ferry_testkit::garage::Garage;
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::{Value, json};

const DOCX: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

#[tokio::test]
async fn websocket_hand_off_reaches_an_early_socket_and_a_late_one() {
    let env = start().await;
    // Early: the socket waits before the login finishes.
    let (mut early, binding) = bound_socket(&env, "early-1", APP).await;
    assert!(
        binding.starts_with("ferry_cb_early-1="),
        "the upgrade binds this browser to the id: {binding}"
    );
    let login = login_bound(&env, "drive", APP, Some("early-1"), Some(&binding)).await;
    assert!(
        login.page.contains("Authentication successful"),
        "{}",
        login.page
    );
    assert_eq!(
        first_message(&mut early).await,
        json!({ "token": login.token })
    );
    // Late: the popup finishes before the socket connected, so its browser has no binding yet;
    // the page waits (posting to its opener meanwhile) and reloads itself.
    let late_login = common::providers::login(&env, "drive", APP, Some("late-1")).await;
    assert!(
        late_login.page.contains("Finishing sign-in"),
        "{}",
        late_login.page
    );
    assert!(
        late_login
            .page
            .contains("window.opener.postMessage(data, origin)")
    );
    let (mut late, binding) = bound_socket(&env, "late-1", APP).await;
    let (status, page) = send_token(&env, &next_attempt(&late_login.page), Some(&binding)).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Authentication successful"), "{page}");
    assert_eq!(
        first_message(&mut late).await,
        json!({ "token": late_login.token })
    );
    let (status, page) = get(&env, "/drive/list/root", Some(&late_login.token)).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["username"], "fake.user@example.com");
}

#[tokio::test]
async fn a_token_reaches_only_the_socket_of_the_browser_that_opened_it() {
    let env = start().await;
    // The attacker opens the socket with their own id from a non-browser client, forging the
    // Origin header of the allowed page, and keeps the binding cookie to themselves.
    let (mut thief, _attackers_cookie) = bound_socket(&env, "attacker-1", APP).await;
    // The victim follows the attacker's link and consents; the victim's browser holds no
    // binding for that id, whatever it retries.
    let victim = login(&env, "drive", APP, Some("attacker-1")).await;
    let mut page = victim.page.clone();
    let mut attempts = 0;
    let (status, last) = loop {
        let (status, next) = send_token(&env, &next_attempt(&page), None).await;
        attempts += 1;
        if status != 200 {
            break (status, next);
        }
        page = next;
    };
    assert_eq!(attempts, 10, "bounded retries");
    assert_eq!(status, 400);
    assert!(
        last.contains("this browser did not open that page&#39;s connection")
            || last.contains("this browser did not open that page's connection"),
        "{last}"
    );
    assert!(
        !last.contains(&victim.token),
        "the failure page carries no token"
    );
    // The attacker's socket got nothing: shut down, its first frame is the close.
    env.state.close(std::time::Duration::from_secs(5)).await;
    let frame = tokio::time::timeout(std::time::Duration::from_secs(10), thief.next())
        .await
        .expect("a frame in time")
        .expect("open")
        .expect("frame");
    assert!(
        matches!(&frame, Message::Close(Some(c)) if u16::from(c.code) == 1001),
        "{frame:?}"
    );
}

#[tokio::test]
async fn closed_auth_sockets_leave_no_slot_no_task_and_a_cap_refuses_more() {
    let env = start_with(Opts {
        auth_sockets_per_client: 250,
        ..Opts::default()
    })
    .await;
    let mut sockets = Vec::new();
    for i in 0..200 {
        sockets.push(bound_socket(&env, &format!("gone-{i}"), APP).await.0);
    }
    assert_eq!(open_auth_sockets(&env), 200);
    assert_eq!(env.hub.len(), 200);
    for mut ws in sockets {
        ws.close(None).await.expect("close");
    }
    // The server notices each close on its own; nothing is left once it has.
    tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while open_auth_sockets(&env) != 0 || !env.hub.is_empty() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{} slots left", env.hub.len()));
    // A real login still goes through.
    let (mut ws, binding) = bound_socket(&env, "after-1", APP).await;
    let login = login_bound(&env, "drive", APP, Some("after-1"), Some(&binding)).await;
    assert_eq!(
        first_message(&mut ws).await,
        json!({ "token": login.token })
    );

    // One client's cap answers a clear refusal (all in-process clients are one).
    let env = start().await;
    let mut held = Vec::new();
    for i in 0..16 {
        held.push(bound_socket(&env, &format!("held-{i}"), APP).await.0);
    }
    let url = format!(
        "ws://{}/api2/auth-callback/token/one-more",
        env.companion.addr
    );
    let mut req = url.into_client_request().expect("request");
    req.headers_mut()
        .insert("origin", APP.parse().expect("origin"));
    match tokio_tungstenite::connect_async(req).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => {
            assert_eq!(resp.status(), 429);
            let body: Value =
                serde_json::from_slice(resp.body().as_deref().unwrap_or_default()).expect("json");
            assert_eq!(
                body["message"],
                "Too many sign-in sockets from this address (at most 16); close one and try again"
            );
        }
        other => panic!("expected 429, got {other:?}"),
    }
}

/// `ferry_companion_auth_sockets_open` as the server's `/metrics` shows it.
fn open_auth_sockets(env: &Env) -> u64 {
    let text = ferry_companion::metrics::render(&env.state);
    text.lines()
        .find_map(|l| l.strip_prefix("ferry_companion_auth_sockets_open "))
        .expect("gauge")
        .parse()
        .expect("number")
}

#[tokio::test]
async fn legacy_hand_off_posts_the_token_to_the_declared_origin_only() {
    let env = start().await;
    let login = login(&env, "drive", APP, None).await;
    let data = json!({ "token": login.token }).to_string();
    assert!(
        login.page.contains(&format!("var data = {data};")),
        "{}",
        login.page
    );
    assert!(
        login
            .page
            .contains(r#"var origin = "https://app.example";"#),
        "{}",
        login.page
    );
    assert!(
        login
            .page
            .contains("window.opener.postMessage(data, origin)")
    );
    let session = session_of("drive", &login.token);
    assert!(
        env.google
            .state
            .access_token_live(session["accessToken"].as_str().expect("access"))
    );
    assert!(
        env.google
            .state
            .refresh_token_live(session["refreshToken"].as_str().expect("refresh"))
    );
}

#[tokio::test]
async fn auth_socket_refuses_foreign_origins_and_delivers_only_to_the_sealed_one() {
    let env = start().await;
    assert_eq!(
        auth_socket(&env, "x-1", "https://evil.example").await.err(),
        Some(403)
    );
    // An allowed origin, but not the one the login sealed: it learns nothing.
    let (mut thief, binding) = bound_socket(&env, "x-2", OTHER_APP).await;
    let login = login_bound(&env, "drive", APP, Some("x-2"), Some(&binding)).await;
    assert_eq!(first_message(&mut thief).await, json!({ "error": true }));
    let mut owner = auth_socket(&env, "x-2", APP).await.expect("socket");
    assert_eq!(
        first_message(&mut owner).await,
        json!({ "token": login.token })
    );
}

#[tokio::test]
async fn forged_replayed_and_cookieless_states_are_refused() {
    let env = start().await;
    // An origin outside --cors-origins cannot start a login.
    let r = env
        .http
        .get(env.companion.url(&format!(
            "/drive/connect?state={}",
            uppy_state("https://evil.example")
        )))
        .send()
        .await
        .expect("connect");
    assert_eq!(r.status(), 400);
    assert_eq!(
        r.json::<Value>().await.expect("json")["message"],
        "Origin not allowed"
    );
    // A forged state.
    let r = env
        .http
        .get(
            env.companion
                .url("/drive/redirect?code=abc&state=000102030405060708090a0b0c0d0e0fAAAA"),
        )
        .send()
        .await
        .expect("redirect");
    assert_eq!(r.status(), 400);
    assert!(
        r.text()
            .await
            .expect("page")
            .contains("Invalid login state")
    );
    // A replay of a finished login, with and without its cookie.
    let login = login(&env, "drive", APP, None).await;
    let r = env
        .http
        .get(&login.redirect_url)
        .header("cookie", &login.cookie)
        .send()
        .await
        .expect("replay");
    assert_eq!(r.status(), 400);
    assert!(r.text().await.expect("page").contains("already used"));
    let r = env
        .http
        .get(&login.redirect_url)
        .send()
        .await
        .expect("replay");
    assert_eq!(r.status(), 400);
    // A drive state cannot finish an instagram login.
    let state = url::Url::parse(&login.redirect_url)
        .expect("url")
        .query_pairs()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned())
        .expect("state");
    let r = env
        .http
        .get(
            env.companion
                .url(&format!("/instagram/redirect?code=x&state={state}")),
        )
        .header("cookie", &login.cookie)
        .send()
        .await
        .expect("cross");
    assert_eq!(r.status(), 400);
    // The user denies access on the consent page.
    env.google
        .state
        .oauth
        .consent_page
        .store(true, Ordering::SeqCst);
    let r = env
        .http
        .get(
            env.companion
                .url(&format!("/drive/connect?state={}", uppy_state(APP))),
        )
        .send()
        .await
        .expect("connect");
    let cookie = r.headers()["set-cookie"]
        .to_str()
        .expect("cookie")
        .split(';')
        .next()
        .expect("c")
        .to_owned();
    let page = env
        .http
        .get(r.headers()["location"].to_str().expect("loc"))
        .send()
        .await
        .expect("consent")
        .text()
        .await
        .expect("page");
    assert!(page.contains("id=deny"), "{page}");
    let pending = page
        .split("name=pending value=")
        .nth(1)
        .and_then(|s| s.split('>').next())
        .expect("pending")
        .to_owned();
    let r = env
        .http
        .post(env.google.server.url("/consent"))
        .form(&[("pending", pending.as_str()), ("decision", "deny")])
        .send()
        .await
        .expect("deny");
    let back = r.headers()["location"].to_str().expect("loc").to_owned();
    let r = env
        .http
        .get(&back)
        .header("cookie", &cookie)
        .send()
        .await
        .expect("back");
    assert_eq!(r.status(), 400);
    assert!(r.text().await.expect("page").contains("access was denied"));
}

#[tokio::test]
async fn tokens_missing_forged_expired_or_for_another_provider_are_401() {
    let env = start().await;
    let ig = login(&env, "instagram", APP, None).await;
    let forged = ferry_companion::token::issue(
        b"another secret",
        "drive",
        json!({"accessToken": "x"}),
        0,
        i64::MAX / 2,
    );
    let expired = ferry_companion::token::issue(
        SECRET.as_bytes(),
        "drive",
        json!({"accessToken": "x"}),
        0,
        1,
    );
    for token in [
        None,
        Some(ig.token.as_str()),
        Some(forged.as_str()),
        Some(expired.as_str()),
        Some("garbage"),
    ] {
        let (status, _) = get(&env, "/drive/list/root", token).await;
        assert_eq!(status, 401, "{token:?}");
        let (status, _) = post(&env, "/drive/get/abc", token, tus_body(&env, "a", 1)).await;
        assert_eq!(status, 401, "{token:?}");
        let (status, _) = post(&env, "/drive/refresh-token", token, json!({})).await;
        assert_eq!(status, 401, "{token:?}");
    }
}

#[tokio::test]
async fn unknown_providers_and_path_tricks_are_refused() {
    let env = start().await;
    let login = login(&env, "drive", APP, None).await;
    for path in ["/nosuch/list/root", "/nosuch/connect", "/DRIVE/list/root"] {
        let (status, body) = get(&env, path, Some(&login.token)).await;
        assert_eq!(
            (status, body),
            (404, json!({"message": "Unknown provider"})),
            "{path}"
        );
    }
    for path in [
        "/drive/list/..%2F..",
        "/drive/list/a'%20or%20'1",
        "/drive/list/a/b",
        "/drive/list/%00",
    ] {
        let (status, body) = get(&env, path, Some(&login.token)).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body["message"], "Invalid folder id");
    }
    for id in ["..%2Fetc%2Fpasswd", "x'y", "root", "a/b"] {
        let (status, body) = post(
            &env,
            &format!("/drive/get/{id}"),
            Some(&login.token),
            tus_body(&env, "a", 1),
        )
        .await;
        assert_eq!(status, 400, "{id}: {body}");
    }
}

#[tokio::test]
async fn root_lists_shared_with_me_every_shared_drive_then_my_drive_in_pages() {
    let env = start().await;
    let g = &env.google.state;
    let drives: Vec<String> = (0..105)
        .map(|i| g.add_drive(&format!("Team {i:03}")))
        .collect();
    for name in ["zeta.txt", "Alpha.txt", "beta.bin"] {
        g.add_file("root", name, "text/plain", name.as_bytes().to_vec());
    }
    let folder = g.add_folder("root", "Photos");
    g.add_folder("root", "Archive");
    g.add_file(&folder, "inside.txt", "text/plain", b"in".to_vec());
    g.add_shortcut("root", "Link to Photos", &folder);
    for i in 0..7 {
        g.add_file(
            "root",
            &format!("n{i}.dat"),
            "application/octet-stream",
            vec![i; 10],
        );
    }
    g.add_shared_with_me("from-a-friend.pdf", "application/pdf", b"%PDF".to_vec());
    let login = login(&env, "drive", APP, None).await;
    let (items, pages) = list_all(&env, "drive", "root", &login.token).await;
    // 1 virtual folder + 105 drives + 13 entries of My Drive in pages of 5.
    assert_eq!(items.len(), 1 + 105 + 13);
    assert_eq!(pages, 3);
    assert_eq!(items[0]["id"], "shared-with-me");
    assert_eq!(items[0]["isFolder"], true);
    assert_eq!(items[0]["name"], "Shared with me");
    for (i, d) in drives.iter().enumerate() {
        assert_eq!(items[1 + i]["requestPath"], d.as_str());
        assert_eq!(items[1 + i]["custom"]["isSharedDrive"], true);
    }
    let mine: Vec<(&str, bool)> = items[106..]
        .iter()
        .map(|i| {
            (
                i["name"].as_str().expect("name"),
                i["isFolder"].as_bool().expect("bool"),
            )
        })
        .collect();
    let folders: Vec<&str> = mine.iter().filter(|(_, f)| *f).map(|(n, _)| *n).collect();
    assert_eq!(
        mine.iter().take_while(|(_, f)| *f).count(),
        folders.len(),
        "folders first on each page: {mine:?}"
    );
    assert!(folders.contains(&"Photos") && folders.contains(&"Archive"));
    // The shortcut browses as its target folder.
    let shortcut = items
        .iter()
        .find(|i| i["name"] == "Link to Photos")
        .expect("shortcut");
    assert_eq!(
        (
            shortcut["isFolder"].as_bool(),
            shortcut["requestPath"].as_str()
        ),
        (Some(true), Some(folder.as_str()))
    );
    let (inside, _) = list_all(&env, "drive", &folder, &login.token).await;
    assert_eq!(
        inside.iter().map(|i| i["name"].clone()).collect::<Vec<_>>(),
        vec![json!("inside.txt")]
    );
    // A file's shape.
    let file = items
        .iter()
        .find(|i| i["name"] == "Alpha.txt")
        .expect("file");
    for key in [
        "isFolder",
        "icon",
        "id",
        "name",
        "requestPath",
        "modifiedDate",
        "mimeType",
        "size",
        "thumbnail",
    ] {
        assert!(file.get(key).is_some(), "{key} missing in {file}");
    }
    assert_eq!(
        (file["size"].as_u64(), file["mimeType"].as_str()),
        (Some(9), Some("text/plain"))
    );
    // Uppy lists the root as `list/` (no id) too.
    let (status, first) = get(&env, "/drive/list/", Some(&login.token)).await;
    assert_eq!(
        (status, first["items"][0]["id"].as_str()),
        (200, Some("shared-with-me"))
    );
    let (shared, _) = list_all(&env, "drive", "shared-with-me", &login.token).await;
    assert_eq!(shared.len(), 1);
    assert_eq!(shared[0]["name"], "from-a-friend.pdf");
}

#[tokio::test]
async fn workspace_files_export_with_extension_or_are_listed_unsupported() {
    let env = start().await;
    let g = &env.google.state;
    let doc_bytes = random_bytes(70_000);
    let doc = g.add_file(
        "root",
        "Quarterly report",
        "application/vnd.google-apps.document",
        doc_bytes.clone(),
    );
    let big = g.add_file(
        "root",
        "Huge sheet",
        "application/vnd.google-apps.spreadsheet",
        random_bytes(200_000),
    );
    let form = g.add_file(
        "root",
        "Survey",
        "application/vnd.google-apps.form",
        Vec::new(),
    );
    g.add_file(
        "root",
        "Deck",
        "application/vnd.google-apps.presentation",
        b"pptx".to_vec(),
    );
    g.add_file(
        "root",
        "Sketch",
        "application/vnd.google-apps.drawing",
        b"%PDF".to_vec(),
    );
    g.export_limit.store(100_000, Ordering::SeqCst);
    let login = login(&env, "drive", APP, None).await;
    let (items, _) = list_all(&env, "drive", "root", &login.token).await;
    let by_id = |id: &str| items.iter().find(|i| i["id"] == id).cloned().expect("item");
    let d = by_id(&doc);
    assert_eq!(
        (d["name"].as_str(), d["mimeType"].as_str()),
        (Some("Quarterly report.docx"), Some(DOCX))
    );
    let names: Vec<&str> = items.iter().filter_map(|i| i["name"].as_str()).collect();
    assert!(
        names.contains(&"Deck.pptx")
            && names.contains(&"Sketch.pdf")
            && names.contains(&"Huge sheet.xlsx"),
        "{names:?}"
    );
    let f = by_id(&form);
    assert_eq!(
        (f["custom"]["unsupported"].as_bool(), f["name"].as_str()),
        (Some(true), Some("Survey"))
    );

    let (status, answer) = post(
        &env,
        &format!("/drive/get/{doc}"),
        Some(&login.token),
        tus_body(&env, "Quarterly report.docx", 0),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(
        sha256_hex(&common::download(&url).await),
        sha256_hex(&doc_bytes)
    );

    let (status, answer) = post(
        &env,
        &format!("/drive/get/{big}"),
        Some(&login.token),
        tus_body(&env, "x", 0),
    )
    .await;
    assert_eq!(status, 424, "{answer}");
    assert_eq!(
        answer["message"],
        "This Google document is too large to be exported (Google exports at most 10 MB)"
    );
    let (status, answer) = post(
        &env,
        &format!("/drive/get/{form}"),
        Some(&login.token),
        tus_body(&env, "x", 0),
    )
    .await;
    assert_eq!(
        (status, answer["message"].as_str()),
        (
            400,
            Some("Google Forms cannot be downloaded from Google Drive")
        )
    );
}

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
async fn thumbnails_load_through_ferry_with_a_plain_img_request() {
    let env = start().await;
    let id = env
        .google
        .state
        .add_file("root", "cat.png", "image/png", b"\x89PNG...".to_vec());
    let login = login(&env, "drive", APP, None).await;
    let (_, page) = get(&env, "/drive/list/root", Some(&login.token)).await;
    let item = page["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["id"] == id.as_str())
        .cloned()
        .expect("item");
    let thumb = item["thumbnail"].as_str().expect("thumbnail");
    assert!(
        thumb.starts_with(&env.companion.url(&format!("/drive/thumbnail/{id}?t="))),
        "{thumb}"
    );
    let r = reqwest::get(thumb).await.expect("thumbnail");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");
    assert_eq!(
        r.text().await.expect("body"),
        format!("PNG thumbnail of {id}")
    );
    let tampered = thumb.replace("?t=", "?t=00");
    assert_eq!(
        reqwest::get(tampered).await.expect("thumbnail").status(),
        401
    );
    // A grant loads its own file's thumbnail only.
    let other = env
        .google
        .state
        .add_file("root", "dog.png", "image/png", b"\x89PNG...".to_vec());
    let borrowed = thumb.replace(
        &format!("/thumbnail/{id}?"),
        &format!("/thumbnail/{other}?"),
    );
    assert_ne!(borrowed, thumb);
    let r = reqwest::get(borrowed).await.expect("thumbnail");
    assert_eq!(r.status(), 401);
    assert_eq!(
        r.json::<Value>().await.expect("json")["message"],
        "Unauthorized"
    );
}

#[tokio::test]
async fn an_expired_login_state_hands_no_token_at_send_token() {
    use ferry_companion::oauth::sealed::{self, LoginState};
    let env = start().await;
    let login = login(&env, "drive", APP, None).await;
    let expired = sealed::seal(
        SECRET.as_bytes(),
        &LoginState {
            k: "state".into(),
            p: "drive".into(),
            n: "00".into(),
            o: APP.into(),
            t: None,
            e: ferry_companion::token::now() - 1,
        },
    );
    let url = format!(
        "/drive/send-token?uppyAuthToken={}&state={expired}",
        login.token
    );
    let (status, page) = send_token(&env, &env.companion.url(&url), None).await;
    assert_eq!(status, 400);
    assert!(
        page.contains("Authentication failed: The login took too long; start it again"),
        "{page}"
    );
    assert!(!page.contains(&login.token), "no token on the page");
}

#[tokio::test]
async fn enabled_providers_are_listed_for_the_widget() {
    let env = start().await;
    let (status, body) = get(&env, "/providers", None).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"providers": [
            {"id": "box", "name": "Box", "rootFolder": "0", "supportsRefreshToken": true},
            {"id": "drive", "name": "Google Drive", "rootFolder": "root", "supportsRefreshToken": true},
            {"id": "dropbox", "name": "Dropbox", "rootFolder": "", "supportsRefreshToken": true},
            {"id": "facebook", "name": "Facebook", "rootFolder": "", "supportsRefreshToken": false},
            {"id": "instagram", "name": "Instagram", "rootFolder": "recent", "supportsRefreshToken": true},
            {"id": "onedrive", "name": "OneDrive", "rootFolder": "root", "supportsRefreshToken": true},
            {"id": "unsplash", "name": "Unsplash", "rootFolder": "", "supportsRefreshToken": false, "search": true},
            {"id": "zoom", "name": "Zoom", "rootFolder": "", "supportsRefreshToken": true},
        ]})
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

#[tokio::test]
async fn cors_star_hands_tokens_to_no_page_it_does_not_name() {
    let env = start_with(Opts {
        cors_origins: vec!["*".into()],
        ..Opts::default()
    })
    .await;
    let r = env
        .http
        .get(env.companion.url(&format!(
            "/drive/connect?state={}&authCallbackToken=star-1",
            uppy_state("https://evil.example")
        )))
        .send()
        .await
        .expect("connect");
    assert_eq!(r.status(), 400);
    assert_eq!(
        r.json::<Value>().await.expect("json")["message"],
        "Origin not allowed"
    );
    assert_eq!(
        auth_socket(&env, "star-1", "https://evil.example")
            .await
            .err(),
        Some(403)
    );
    // CORS itself still answers any page: `*` opens reads, not the token hand-off.
    let r = env
        .http
        .get(env.companion.url("/providers"))
        .header("origin", "https://evil.example")
        .send()
        .await
        .expect("providers");
    assert_eq!(r.status(), 200);
    assert!(r.headers().contains_key("access-control-allow-origin"));
}

#[tokio::test]
async fn without_a_public_url_a_forged_host_builds_no_link() {
    let env = start().await;
    let login = login(&env, "drive", APP, None).await;
    let unknown = "Unknown host: set --public-url (FERRY_PUBLIC_URL) to this server's public URL for cloud-provider logins";
    // The provider would send its code to the forged host.
    let r = env
        .http
        .get(
            env.companion
                .url(&format!("/drive/connect?state={}", uppy_state(APP))),
        )
        .header("host", "evil.example")
        .send()
        .await
        .expect("connect");
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<Value>().await.expect("json")["message"], unknown);
    // Thumbnail links would point at it.
    let r = env
        .http
        .get(env.companion.url("/drive/list/root"))
        .header("host", "evil.example:80")
        .header("uppy-auth-token", &login.token)
        .send()
        .await
        .expect("list");
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<Value>().await.expect("json")["message"], unknown);
    // This server's own host still works.
    let (status, page) = get(&env, "/drive/list/root", Some(&login.token)).await;
    assert_eq!(status, 200, "{page}");
}
