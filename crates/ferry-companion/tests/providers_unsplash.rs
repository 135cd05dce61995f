//! Contract tests of the `unsplash` search provider against the testkit's fake Unsplash, on the
//! paths `@uppy/unsplash` calls: search with paging (`nextPageQuery` followed to the end),
//! attribution on every result, byte-exact imports into tus with exactly one download-tracking
//! call each, bad queries refused before any API call, rate limits backed off, and the OAuth
//! routes refusing a provider nobody signs in to.

mod common;

use std::sync::atomic::Ordering;

use common::providers::*;
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::Value;

/// Adds `n` photos with descriptions; returns their ids.
fn photos(env: &Env, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            env.unsplash.state.add(
                Some(&format!("Lake {i}")),
                "Ada Lovelace",
                random_bytes(1000 + i),
            )
        })
        .collect()
}

#[tokio::test]
async fn search_pages_to_the_end_with_attribution_on_every_result() {
    let env = start().await;
    let ids = photos(&env, 12);
    let (mut seen, mut next, mut pages) = (Vec::new(), Some(String::new()), 0);
    while let Some(extra) = next {
        let path = format!("/search/unsplash/list?q=mountain%20lake&{extra}");
        let (status, page) = get(&env, &path, None).await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["searchedFor"], "mountain lake");
        assert_eq!(page["username"], Value::Null);
        for item in page["items"].as_array().expect("items") {
            assert_eq!(item["isFolder"], false);
            assert_eq!(item["mimeType"], "image/jpeg");
            assert_eq!(item["author"]["name"], "Ada Lovelace");
            assert_eq!(item["author"]["url"], "https://unsplash.com/@adalovelace");
            assert!(
                item["thumbnail"]
                    .as_str()
                    .is_some_and(|t| t.contains("w=200")),
                "{item}"
            );
            assert_eq!(item["id"], item["requestPath"]);
            seen.push(item["id"].as_str().expect("id").to_owned());
        }
        next = page["nextPageQuery"].as_str().map(str::to_owned);
        pages += 1;
        assert!(pages < 10, "paging never ends");
    }
    // page_size 5 in the test setup: 5 + 5 + 2.
    assert_eq!((&seen, pages), (&ids, 3));
    assert_eq!(
        env.unsplash
            .state
            .last_query
            .lock()
            .expect("lock")
            .as_deref(),
        Some("mountain lake")
    );
    assert!(
        ids.iter().all(|id| env.unsplash.state.tracked(id) == 0),
        "a search tracks no download"
    );
}

#[tokio::test]
async fn an_import_is_byte_exact_and_tracked_exactly_once() {
    let env = start().await;
    let data = random_bytes(300_000);
    let id = env
        .unsplash
        .state
        .add(Some("A red fox in the snow"), "Grace Hopper", data.clone());
    let other = env
        .unsplash
        .state
        .add(None, "Grace Hopper", random_bytes(10));
    let (status, answer) = post(
        &env,
        &format!("/search/unsplash/get/{id}"),
        None,
        tus_body(&env, "fox.jpg", data.len()),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));
    assert_eq!(env.unsplash.state.tracked(&id), 1);
    assert_eq!(env.unsplash.state.tracked(&other), 0);
}

#[tokio::test]
async fn a_broken_download_resumes_with_range_and_is_still_tracked_once() {
    let env = start().await;
    let data = random_bytes(400_000);
    let id = env.unsplash.state.add(None, "Grace Hopper", data.clone());
    env.unsplash
        .state
        .faults
        .cut_after
        .store(150_000, Ordering::SeqCst);
    let (status, answer) = post(
        &env,
        &format!("/search/unsplash/get/{id}"),
        None,
        tus_body(&env, "cut.jpg", data.len()),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));
    assert_eq!(
        env.unsplash.state.tracked(&id),
        1,
        "a resume is the same import"
    );
    assert_eq!(
        env.unsplash.state.ranged.load(Ordering::SeqCst),
        1,
        "the rest was asked with Range"
    );
}

#[tokio::test]
async fn empty_and_oversized_queries_and_bad_cursors_are_refused_before_any_call() {
    let env = start().await;
    photos(&env, 1);
    let long = "a".repeat(201);
    for (path, message) in [
        ("/search/unsplash/list".to_owned(), "Search query missing"),
        (
            "/search/unsplash/list?q=%20%20".to_owned(),
            "Search query missing",
        ),
        (
            format!("/search/unsplash/list?q={long}"),
            "Search query too long (at most 200 characters)",
        ),
        (
            "/search/unsplash/list?q=cat&cursor=0".to_owned(),
            "Invalid cursor",
        ),
        (
            "/search/unsplash/list?q=cat&cursor=x".to_owned(),
            "Invalid cursor",
        ),
    ] {
        let (status, body) = get(&env, &path, None).await;
        assert_eq!(
            (status, body["message"].as_str()),
            (400, Some(message)),
            "{path}"
        );
    }
    assert_eq!(env.unsplash.state.api_calls.load(Ordering::SeqCst), 0);
    let (status, body) = get(
        &env,
        &format!("/search/unsplash/list?q={}", &long[1..]),
        None,
    )
    .await;
    assert_eq!(status, 200, "200 characters are accepted: {body}");

    let (status, body) = post(
        &env,
        "/search/unsplash/get/..%2Fetc",
        None,
        tus_body(&env, "x.jpg", 1),
    )
    .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (400, Some("Invalid photo id"))
    );
}

#[tokio::test]
async fn rate_limits_are_backed_off_then_reported() {
    let env = start().await;
    photos(&env, 2);
    // Fewer 429s than backoff steps (three in the test setup): the search succeeds.
    env.unsplash
        .state
        .faults
        .too_many
        .store(2, Ordering::SeqCst);
    let (status, page) = get(&env, "/search/unsplash/list?q=lake", None).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["items"].as_array().map(Vec::len), Some(2));
    // More than the backoff allows: a 429 with a message, not an error page.
    env.unsplash
        .state
        .faults
        .too_many
        .store(10, Ordering::SeqCst);
    let (status, body) = get(&env, "/search/unsplash/list?q=lake", None).await;
    assert_eq!(
        (status, body),
        (
            429,
            serde_json::json!({"message": "Unsplash is limiting requests; retrying in 1 s",
                "retryAfter": 1})
        )
    );
}

#[tokio::test]
async fn unsplash_is_listed_and_never_offered_a_sign_in() {
    let env = start().await;
    let (status, body) = get(&env, "/providers", None).await;
    assert_eq!(status, 200);
    let entry = body["providers"]
        .as_array()
        .expect("providers")
        .iter()
        .find(|p| p["id"] == "unsplash")
        .cloned();
    assert_eq!(
        entry,
        Some(
            serde_json::json!({"id": "unsplash", "name": "Unsplash", "rootFolder": "",
            "supportsRefreshToken": false, "search": true})
        ),
        "{body}"
    );
    let (status, body) = get(&env, "/unsplash/connect", None).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (400, Some("Unsplash needs no sign-in"))
    );
    let (status, body) = get(&env, "/search/drive/list?q=cat", None).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (404, Some("Unknown search provider"))
    );
}
