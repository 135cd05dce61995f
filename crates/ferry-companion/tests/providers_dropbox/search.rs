//! Dropbox search: matches under a folder, paged with `continue`, imported; bad input refused
//! before Dropbox is asked; rate limits reported.

use super::*;

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
