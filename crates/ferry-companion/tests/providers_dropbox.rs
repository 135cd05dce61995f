//! Contract tests of the `dropbox` provider over real HTTP against the testkit's fake Dropbox:
//! sign-in (code flow with PKCE and `token_access_type=offline`), Companion's list shape with
//! `?cursor=` paging, thumbnails by the signed link, byte-exact imports into tus (non-ASCII
//! names through `Dropbox-API-Arg`, a cut body resumed with `Range`, an expired token renewed
//! mid-import), refresh mid-list, team spaces, logout, rate limits and bad input.

mod common;

use std::sync::atomic::Ordering;

use common::providers::*;
use common::ratelimit;
use ferry_testkit::fake::dropbox::{TEAM_NS, thumbnail_of};
use ferry_testkit::garage::Garage;
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::{Value, json};

fn access_of(token: &str) -> String {
    session_of("dropbox", token)["accessToken"]
        .as_str()
        .expect("access")
        .to_owned()
}

fn by_name<'a>(items: &'a [Value], name: &str) -> &'a Value {
    items
        .iter()
        .find(|i| i["name"] == name)
        .unwrap_or_else(|| panic!("{name} listed: {items:?}"))
}

#[tokio::test]
async fn sign_in_then_list_in_companions_shape_paging_to_the_end() {
    let env = start().await;
    let d = &env.dropbox.state;
    for n in 0..7 {
        d.add(&format!("/Photos/IMG_{n}.JPG"), vec![n as u8; 10 + n]);
    }
    d.add("/Docs/Report.pdf", b"%PDF".to_vec());
    d.add("/readme.txt", b"hello".to_vec());
    let login = login(&env, "dropbox", APP, None).await;
    let session = session_of("dropbox", &login.token);
    assert_eq!(session["username"], "fake.user@example.com");
    assert!(
        session["refreshToken"]
            .as_str()
            .is_some_and(|r| r.starts_with("rt."))
    );

    let (status, providers) = get(&env, "/providers", None).await;
    assert_eq!(status, 200);
    assert!(
        providers["providers"]
            .as_array()
            .expect("list")
            .iter()
            .any(|p| p == &json!({"id": "dropbox", "name": "Dropbox", "rootFolder": "", "supportsRefreshToken": true})),
        "{providers}"
    );

    let (status, root) = get(&env, "/dropbox/list/", Some(&login.token)).await;
    assert_eq!(status, 200, "{root}");
    assert_eq!(root["username"], "fake.user@example.com");
    let names: Vec<&str> = root["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["Docs", "Photos", "readme.txt"], "folders first");
    let readme = &root["items"][2];
    assert_eq!(readme["requestPath"], "%2Freadme%2Etxt");
    assert_eq!(readme["icon"], "file");
    assert_eq!(readme["mimeType"], "text/plain");
    assert_eq!(readme["size"], 5);
    assert_eq!(readme["modifiedDate"], "2026-01-02T03:04:05Z");
    assert!(readme["id"].as_str().is_some_and(|i| i.starts_with("id:")));
    assert!(readme["thumbnail"].is_null(), "no thumbnail for text");
    assert_eq!(root["items"][1]["icon"], "folder");
    assert!(root["nextPagePath"].is_null());

    let photos = root["items"][1]["requestPath"].as_str().expect("path");
    assert_eq!(photos, "%2Fphotos");
    let (items, pages) = list_all(&env, "dropbox", photos, &login.token).await;
    assert_eq!((items.len(), pages), (7, 2), "page size 5: {items:?}");
    let (_, first) = get(&env, &format!("/dropbox/list/{photos}"), Some(&login.token)).await;
    assert!(
        first["nextPagePath"]
            .as_str()
            .is_some_and(|p| p.starts_with("?cursor=")),
        "{first}"
    );
    let img = by_name(&items, "IMG_3.JPG");
    assert_eq!(
        (img["mimeType"].as_str(), img["size"].as_u64()),
        (Some("image/jpeg"), Some(13))
    );
    assert!(
        img["thumbnail"]
            .as_str()
            .is_some_and(|t| t.contains("/dropbox/thumbnail/%2Fphotos%2Fimg_3.jpg?t=")),
        "{img}"
    );
}

#[tokio::test]
async fn thumbnails_load_by_the_signed_link_for_that_file_only() {
    let env = start().await;
    let content = random_bytes(2000);
    env.dropbox.state.add("/a.png", content.clone());
    env.dropbox.state.add("/b.png", b"other".to_vec());
    let login = login(&env, "dropbox", APP, None).await;
    let (_, root) = get(&env, "/dropbox/list/", Some(&login.token)).await;
    let link = root["items"][0]["thumbnail"]
        .as_str()
        .expect("thumbnail")
        .to_owned();
    // A plain <img>: no token header, no cookie.
    let resp = env.http.get(&link).send().await.expect("thumbnail");
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "image/jpeg");
    assert_eq!(
        resp.bytes().await.expect("body").to_vec(),
        thumbnail_of(&content)
    );
    let other = link.replace("%2Fa.png", "%2Fb.png");
    let resp = env.http.get(&other).send().await.expect("thumbnail");
    assert_eq!(resp.status(), 401, "the grant is for a.png alone");
}

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
async fn an_access_token_expiring_mid_list_is_refreshed_and_paging_continues() {
    let env = start().await;
    let d = &env.dropbox.state;
    for n in 0..8 {
        d.add(&format!("/f{n}.txt"), vec![b'x'; n + 1]);
    }
    let login = login(&env, "dropbox", APP, None).await;
    let (status, first) = get(&env, "/dropbox/list/", Some(&login.token)).await;
    assert_eq!(status, 200);
    let next = first["nextPagePath"].as_str().expect("more").to_owned();
    d.expire(&access_of(&login.token));
    let (status, body) = get(&env, &format!("/dropbox/list/{next}"), Some(&login.token)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (
            401,
            Some("HTTP 401: invalid access token detected by Provider")
        ),
        "what makes @uppy/dropbox refresh"
    );
    let (status, body) = post(
        &env,
        "/dropbox/refresh-token",
        Some(&login.token),
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let fresh = body["uppyAuthToken"].as_str().expect("token").to_owned();
    let (old, new) = (
        session_of("dropbox", &login.token),
        session_of("dropbox", &fresh),
    );
    assert_ne!(old["accessToken"], new["accessToken"]);
    assert_eq!(
        old["refreshToken"], new["refreshToken"],
        "Dropbox keeps its refresh token"
    );
    assert_eq!(new["username"], "fake.user@example.com");
    let (status, second) = get(&env, &format!("/dropbox/list/{next}"), Some(&fresh)).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(
        first["items"].as_array().expect("items").len()
            + second["items"].as_array().expect("items").len(),
        8
    );
    assert!(second["nextPagePath"].is_null());
    d.faults.revoke_refresh.store(true, Ordering::SeqCst);
    let (status, _) = post(&env, "/dropbox/refresh-token", Some(&fresh), json!({})).await;
    assert_eq!(
        status, 401,
        "a revoked refresh token asks for sign-in again"
    );
}

#[tokio::test]
async fn team_spaces_are_listed_and_imported_from_the_root_namespace() {
    let env = start().await;
    let d = &env.dropbox.state;
    d.team.store(true, Ordering::SeqCst);
    let data = random_bytes(70_000);
    d.add_in(TEAM_NS, "/Team Folder/plan.bin", data.clone());
    d.add("/private.txt", b"home only".to_vec());
    let login = login(&env, "dropbox", APP, None).await;
    let (status, root) = get(&env, "/dropbox/list/", Some(&login.token)).await;
    assert_eq!(status, 200, "{root}");
    assert_eq!(root["items"][0]["name"], "Team Folder", "{root}");
    // A token Companion issued (no cached account) finds the team root itself.
    let bare = ferry_companion::token::issue(
        SECRET.as_bytes(),
        "dropbox",
        json!({"accessToken": access_of(&login.token)}),
        ferry_companion::token::now(),
        3600,
    );
    let (status, files) = get(&env, "/dropbox/list/%2Fteam%20folder", Some(&bare)).await;
    assert_eq!(status, 200, "{files}");
    let path = files["items"][0]["requestPath"]
        .as_str()
        .expect("path")
        .to_owned();
    let (status, answer) = post(
        &env,
        &format!("/dropbox/get/{path}"),
        Some(&login.token),
        tus_body(&env, "plan.bin", data.len()),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));
}

#[tokio::test]
async fn logout_revokes_the_token_at_dropbox() {
    let env = start().await;
    let login = login(&env, "dropbox", APP, None).await;
    let access = access_of(&login.token);
    let (status, body) = get(&env, "/dropbox/logout", Some(&login.token)).await;
    assert_eq!((status, body), (200, json!({"ok": true, "revoked": true})));
    assert!(env.dropbox.state.was_revoked(&access));
    let (status, _) = get(&env, "/dropbox/list/", Some(&login.token)).await;
    assert_eq!(status, 401);
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
async fn bad_paths_are_refused_with_a_message_and_nothing_is_fetched() {
    let env = start().await;
    env.dropbox.state.add("/dir/a.txt", b"a".to_vec());
    let login = login(&env, "dropbox", APP, None).await;
    let calls = || env.dropbox.state.api_calls.load(Ordering::SeqCst);
    let before = calls();
    for path in [
        "%2Fdir%2F..%2Fsecret",
        "relative",
        "%2Fdir%2F",
        "%2F%2Fdir",
        "id%3A..%2Fx",
        "%2Fa%0Ab",
    ] {
        let (status, body) = get(&env, &format!("/dropbox/list/{path}"), Some(&login.token)).await;
        assert_eq!(
            (status, &body),
            (400, &json!({"message": "Invalid folder path"})),
            "{path}"
        );
        let (status, body) = post(
            &env,
            &format!("/dropbox/get/{path}"),
            Some(&login.token),
            tus_body(&env, "x", 1),
        )
        .await;
        assert_eq!(
            (status, &body),
            (400, &json!({"message": "Invalid file path"})),
            "{path}"
        );
    }
    assert_eq!(calls(), before, "nothing reached Dropbox");
    let (status, body) = post(
        &env,
        "/dropbox/get/%2Fdir",
        Some(&login.token),
        tus_body(&env, "x", 1),
    )
    .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (
            400,
            Some("A folder cannot be downloaded; open it and pick its files")
        )
    );
    let (status, body) = post(
        &env,
        "/dropbox/get/%2Fnope.txt",
        Some(&login.token),
        tus_body(&env, "x", 1),
    )
    .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (424, Some("HTTP 404: path/not_found/."))
    );
}

#[tokio::test]
async fn search_finds_files_under_a_folder_pages_with_continue_and_imports_a_match() {
    let env = start().await;
    let d = &env.dropbox.state;
    let report = random_bytes(50_000);
    d.add("/Reports/Q1 report.pdf", report.clone());
    d.add("/Reports/2025/Annual REPORT.pdf", b"annual".to_vec());
    d.add("/Photos/report-cover.jpg", b"jpeg".to_vec());
    d.add("/notes.txt", b"notes".to_vec());
    for i in 0..4 {
        d.add(&format!("/Old/report-{i}.txt"), vec![b'r'; i + 1]);
    }
    let login = login(&env, "dropbox", APP, None).await;

    // Everywhere (folders too): 8 matches in pages of 5, the next through search/continue_v2.
    let (status, first) = get(&env, "/dropbox/search?q=report", Some(&login.token)).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["username"], d.email);
    let next = first["nextPagePath"].as_str().expect("a next page");
    assert!(next.starts_with("?cursor="), "{next}");
    let (status, second) = get(&env, &format!("/dropbox/search{next}"), Some(&login.token)).await;
    assert_eq!(status, 200, "{second}");
    assert!(second["nextPagePath"].is_null(), "{second}");
    let mut names: Vec<String> = [&first, &second]
        .iter()
        .flat_map(|p| p["items"].as_array().expect("items").iter())
        .map(|i| i["name"].as_str().expect("name").to_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "Annual REPORT.pdf",
            "Q1 report.pdf",
            "Reports",
            "report-0.txt",
            "report-1.txt",
            "report-2.txt",
            "report-3.txt",
            "report-cover.jpg"
        ]
    );
    let cover = first["items"]
        .as_array()
        .into_iter()
        .chain(second["items"].as_array())
        .flatten()
        .find(|i| i["name"] == "report-cover.jpg")
        .expect("cover");
    assert!(
        cover["thumbnail"]
            .as_str()
            .is_some_and(|t| t.contains("/dropbox/thumbnail/"))
    );

    // Under a folder, by the requestPath the client lists it with (URL-encoded again in the
    // query, as @uppy/companion-client sends it).
    let (_, root) = get(&env, "/dropbox/list/", Some(&login.token)).await;
    let reports = root["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["name"] == "Reports")
        .and_then(|i| i["requestPath"].as_str())
        .expect("Reports")
        .to_owned();
    let scoped = format!(
        "/dropbox/search?q=report&path={}",
        url::form_urlencoded::byte_serialize(reports.as_bytes()).collect::<String>()
    );
    let (status, page) = get(&env, &scoped, Some(&login.token)).await;
    assert_eq!(status, 200, "{page}");
    let found: Vec<&str> = page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["name"].as_str().expect("name"))
        .collect();
    assert_eq!(found, ["Annual REPORT.pdf", "Q1 report.pdf"]);

    // A match imports byte-exact like a listed file.
    let q1 = page["items"][1]["requestPath"].as_str().expect("path");
    let (status, answer) = post(
        &env,
        &format!("/dropbox/get/{q1}"),
        Some(&login.token),
        tus_body(&env, "q1.pdf", report.len()),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(
        sha256_hex(&common::download(&url).await),
        sha256_hex(&report)
    );
}

#[tokio::test]
async fn search_refuses_bad_input_before_dropbox_is_asked_and_reports_rate_limits() {
    let env = start().await;
    let d = &env.dropbox.state;
    d.add("/a.txt", b"a".to_vec());
    let google = login(&env, "drive", APP, None).await;
    let login = login(&env, "dropbox", APP, None).await;
    let calls = d.api_calls.load(Ordering::SeqCst);
    for (path, message) in [
        ("/dropbox/search", "Search query missing"),
        ("/dropbox/search?q=%20%20", "Search query missing"),
        (
            "/dropbox/search?q=a&path=%252Fa%252F..%252Fb",
            "Invalid folder path",
        ),
        ("/dropbox/search?q=a&path=a", "Invalid folder path"),
    ] {
        let (status, body) = get(&env, path, Some(&login.token)).await;
        assert_eq!(
            (status, body["message"].as_str()),
            (400, Some(message)),
            "{path}"
        );
    }
    let long = "x".repeat(201);
    let (status, body) = get(
        &env,
        &format!("/dropbox/search?q={long}"),
        Some(&login.token),
    )
    .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (400, Some("Search query too long (at most 200 characters)"))
    );
    assert_eq!(
        d.api_calls.load(Ordering::SeqCst),
        calls,
        "nothing reached Dropbox"
    );
    let (status, _) = get(&env, "/dropbox/search?q=a", None).await;
    assert_eq!(status, 401);
    let (status, body) = get(&env, "/drive/search?q=a", Some(&google.token)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (400, Some("This provider has no search"))
    );

    d.faults.retry_after.store(120, Ordering::SeqCst);
    d.faults.too_many.store(1, Ordering::SeqCst);
    let r = env
        .http
        .get(env.companion.url("/dropbox/search?q=a"))
        .header("uppy-auth-token", &login.token)
        .send()
        .await
        .expect("search");
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "120");
    let body: Value = r.json().await.expect("json");
    assert_eq!(
        body,
        json!({"message": "Dropbox is limiting requests; retrying in 120 s", "retryAfter": 120})
    );
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
