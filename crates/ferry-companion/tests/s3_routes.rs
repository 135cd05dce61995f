//! The `/s3/*` signing routes against a real Garage: every route, the bytes stored (sha256),
//! and the bad inputs each route must refuse with a precise status and message.

mod common;

use common::s3::{Fixture, get_json, settings};
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::{Value, json};

const MIB: usize = 1024 * 1024;

#[tokio::test]
async fn params_put_signs_a_single_upload_that_stores_the_bytes() {
    let f = Fixture::start().await;
    let (status, params) = get_json(
        &f.url("/s3/params?filename=a%20b.txt&type=text/plain&metadata[note]=hi&method=put"),
    )
    .await;
    assert_eq!(status, 200, "{params}");
    assert_eq!(params["method"], "PUT");
    assert_eq!(params["expires"], 300);
    assert_eq!(params["headers"]["content-type"], "text/plain");
    assert_eq!(params["headers"]["x-amz-meta-note"], "hi");
    let url = params["url"].as_str().expect("url");
    assert!(!url.contains("x-amz-checksum"), "{url}");
    let bytes = random_bytes(100_000);
    let mut put = f.http.put(url).body(bytes.clone());
    for (k, v) in params["headers"].as_object().expect("headers") {
        put = put.header(k, v.as_str().expect("string"));
    }
    assert_eq!(put.send().await.expect("PUT").status(), 200);
    let key = f.key_of(url);
    assert!(
        key.starts_with("uploads/") && key.ends_with("-a_b.txt"),
        "{key}"
    );
    assert_eq!(
        sha256_hex(&f.garage.get_object(&key).await.expect("stored")),
        sha256_hex(&bytes)
    );
}

#[tokio::test]
async fn params_post_signs_a_form_upload_that_stores_the_bytes() {
    let f = Fixture::start().await;
    let (status, params) = get_json(&f.url("/s3/params?filename=pic.png&type=image/png")).await;
    assert_eq!(status, 200, "{params}");
    assert_eq!(params["method"], "POST");
    let bytes = random_bytes(70_000);
    let mut form = reqwest::multipart::Form::new();
    for (k, v) in params["fields"].as_object().expect("fields") {
        form = form.text(k.clone(), v.as_str().expect("string").to_owned());
    }
    form = form.part(
        "file",
        reqwest::multipart::Part::bytes(bytes.clone()).file_name("pic.png"),
    );
    let resp = f
        .http
        .post(params["url"].as_str().expect("url"))
        .multipart(form)
        .send()
        .await
        .expect("POST");
    assert!(
        resp.status().is_success(),
        "{} {}",
        resp.status(),
        resp.text().await.unwrap_or_default()
    );
    let key = params["fields"]["key"].as_str().expect("key");
    assert_eq!(
        sha256_hex(&f.garage.get_object(key).await.expect("stored")),
        sha256_hex(&bytes)
    );
}

#[tokio::test]
async fn params_refuses_bad_queries() {
    let f = Fixture::start().await;
    for (query, message) in [
        (
            "?type=text/plain",
            "s3: the \"filename\" query parameter is required",
        ),
        ("?filename=a&method=patch", "s3: method must be put or post"),
    ] {
        let (status, body) = get_json(&f.url(&format!("/s3/params{query}"))).await;
        assert_eq!(
            (status, body["message"].as_str()),
            (400, Some(message)),
            "{query}"
        );
    }
}

#[tokio::test]
async fn multipart_create_sign_put_list_complete_stores_the_bytes() {
    let f = Fixture::start().await;
    let (upload_id, key) = f.create("big file.bin").await;
    assert!(
        key.starts_with("uploads/") && key.ends_with("-big_file.bin"),
        "{key}"
    );
    let bytes = random_bytes(6 * MIB);
    let (first, second) = bytes.split_at(5 * MIB);

    let (status, batch) = get_json(&f.url(&format!(
        "/s3/multipart/{upload_id}/batch?key={}&partNumbers=1,2",
        enc(&key)
    )))
    .await;
    assert_eq!(status, 200, "{batch}");
    let url1 = batch["presignedUrls"]["1"]
        .as_str()
        .expect("url 1")
        .to_owned();
    assert!(!url1.contains("x-amz-checksum"), "{url1}");
    let etag1 = f.put_part(&url1, first.to_vec()).await;
    let (status, one) =
        get_json(&f.url(&format!("/s3/multipart/{upload_id}/2?key={}", enc(&key)))).await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(one["expires"], 300);
    let etag2 = f
        .put_part(one["url"].as_str().expect("url"), second.to_vec())
        .await;

    let (status, parts) =
        get_json(&f.url(&format!("/s3/multipart/{upload_id}?key={}", enc(&key)))).await;
    assert_eq!(status, 200);
    assert_eq!(
        parts,
        json!([
            { "PartNumber": 1, "Size": 5 * MIB, "ETag": etag1 },
            { "PartNumber": 2, "Size": MIB, "ETag": etag2 },
        ])
    );

    let body = json!({ "parts": [ { "PartNumber": 2, "ETag": etag2 }, { "PartNumber": 1, "ETag": etag1 } ] });
    let (status, done) = f
        .post_json(
            &format!("/s3/multipart/{upload_id}/complete?key={}", enc(&key)),
            &body.to_string(),
        )
        .await;
    assert_eq!(status, 200, "{done}");
    assert!(
        done["location"].as_str().is_some_and(|l| !l.is_empty()),
        "{done}"
    );
    assert_eq!(done["key"], key.as_str());
    assert_eq!(
        sha256_hex(&f.garage.get_object(&key).await.expect("stored")),
        sha256_hex(&bytes)
    );
}

#[tokio::test]
async fn multipart_routes_refuse_bad_inputs() {
    let f = Fixture::start().await;
    let (upload_id, key) = f.create("x.bin").await;
    let k = enc(&key);
    let cases = [
        (
            format!("/s3/multipart/{upload_id}/0?key={k}"),
            400,
            "s3: the part number must be an integer between 1 and 10000",
        ),
        (
            format!("/s3/multipart/{upload_id}/10001?key={k}"),
            400,
            "s3: the part number must be an integer between 1 and 10000",
        ),
        (
            format!("/s3/multipart/{upload_id}/abc?key={k}"),
            400,
            "s3: the part number must be an integer between 1 and 10000",
        ),
        (
            format!("/s3/multipart/{upload_id}/batch?key={k}&partNumbers=1,0"),
            400,
            "s3: the part number must be an integer between 1 and 10000",
        ),
        (
            format!("/s3/multipart/{upload_id}/batch?key={k}"),
            400,
            "s3: the part numbers must be passed as a comma-separated list, e.g. \"?partNumbers=1,2\"",
        ),
        (
            format!("/s3/multipart/{upload_id}/1"),
            400,
            "s3: the object key must be passed as a query parameter. For example \"?key=abc.jpg\"",
        ),
        (
            format!("/s3/multipart/{upload_id}/1?key=elsewhere/x.bin"),
            400,
            "s3: invalid object key",
        ),
        (
            format!("/s3/multipart/{upload_id}/1?key=uploads/../x"),
            400,
            "s3: invalid object key",
        ),
    ];
    for (path, want_status, want_message) in cases {
        let (status, body) = get_json(&f.url(&path)).await;
        assert_eq!(
            (status, body["message"].as_str()),
            (want_status, Some(want_message)),
            "{path}"
        );
    }
    let complete = format!("/s3/multipart/{upload_id}/complete?key={k}");
    for (body, message) in [
        ("not json", "s3: invalid JSON body"),
        (
            "{\"parts\":[{\"PartNumber\":1,\"ETag\":\"a\"},{\"PartNumber\":1,\"ETag\":\"a\"}]}",
            "s3: part 1 is listed twice",
        ),
        (
            "{\"parts\":[]}",
            "s3: \"parts\" must list between 1 and 10000 parts",
        ),
    ] {
        let (status, answer) = f.post_json(&complete, body).await;
        assert_eq!(status, 400, "{body}");
        assert!(
            answer["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(message)),
            "{answer}"
        );
    }
    for (body, message) in [
        ("{", "s3: invalid JSON body"),
        (
            "{\"type\":\"a/b\"}",
            "s3: the \"filename\" field is required and must be a string",
        ),
        (
            "{\"filename\":\"a\",\"type\":5}",
            "s3: content type must be a string",
        ),
    ] {
        let (status, answer) = f.post_json("/s3/multipart", body).await;
        assert_eq!(status, 400, "{body}");
        assert!(
            answer["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(message)),
            "{answer}"
        );
    }
    // An upload id the store does not know: the store's 404 comes through.
    let (status, _) = get_json(&f.url(&format!("/s3/multipart/nope?key={k}"))).await;
    assert_eq!(status, 404);
    // A wrong ETag: the store refuses the completion with a 4xx, reported as such.
    let (status, answer) = f
        .post_json(
            &complete,
            "{\"parts\":[{\"PartNumber\":1,\"ETag\":\"\\\"0000\\\"\"}]}",
        )
        .await;
    assert!((400..500).contains(&status), "{status} {answer}");
}

#[tokio::test]
async fn abort_removes_the_multipart_upload_from_the_store() {
    let f = Fixture::start().await;
    let (upload_id, key) = f.create("gone.bin").await;
    assert!(f.garage.list_multipart_uploads().await.contains(&upload_id));
    let resp = f
        .http
        .delete(f.url(&format!("/s3/multipart/{upload_id}?key={}", enc(&key))))
        .send()
        .await
        .expect("DELETE");
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.json::<Value>().await.expect("json"), json!({}));
    assert!(!f.garage.list_multipart_uploads().await.contains(&upload_id));
}

#[tokio::test]
async fn expiry_is_capped_to_seven_days() {
    let f = Fixture::start_with(|g| ferry_companion::s3::S3Settings {
        expires: std::time::Duration::from_secs(30 * 86_400),
        ..settings(g, "uploads/")
    })
    .await;
    let (_, params) = get_json(&f.url("/s3/params?filename=a&method=put")).await;
    assert_eq!(params["expires"], 604_800);
    assert!(
        params["url"]
            .as_str()
            .expect("url")
            .contains("X-Amz-Expires=604800")
    );
}

#[tokio::test]
async fn list_parts_follows_every_page() {
    let f = Fixture::start().await;
    let (upload_id, key) = f.create("many.bin").await;
    let numbers: Vec<String> = (1..=1005).map(|n| n.to_string()).collect();
    let (_, batch) = get_json(&f.url(&format!(
        "/s3/multipart/{upload_id}/batch?key={}&partNumbers={}",
        enc(&key),
        numbers.join(",")
    )))
    .await;
    let urls: Vec<String> = numbers
        .iter()
        .map(|n| batch["presignedUrls"][n].as_str().expect("url").to_owned())
        .collect();
    // Eight streams, as a browser would run; each part PUT retries Garage's 503 (its
    // SlowDown when the machine is busy) a bounded number of times, as S3 clients must.
    let puts = urls.chunks(urls.len().div_ceil(8)).map(|chunk| {
        let http = f.http.clone();
        let chunk = chunk.to_vec();
        async move {
            for url in chunk {
                assert_eq!(put_part(&http, &url).await, 200, "PUT {url}");
            }
        }
    });
    futures_join(puts).await;
    let (status, parts) =
        get_json(&f.url(&format!("/s3/multipart/{upload_id}?key={}", enc(&key)))).await;
    assert_eq!(status, 200);
    let parts = parts.as_array().expect("array");
    assert_eq!(parts.len(), 1005);
    assert_eq!(parts[1004]["PartNumber"], 1005);
}

/// PUTs one ten-byte part, retrying 503 up to five times with a growing pause.
async fn put_part(http: &reqwest::Client, url: &str) -> u16 {
    let mut status = 0;
    for attempt in 0..6u64 {
        status = http
            .put(url)
            .body(vec![7u8; 10])
            .send()
            .await
            .expect("PUT")
            .status()
            .as_u16();
        if status != 503 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200 * (attempt + 1))).await;
    }
    status
}

async fn futures_join(tasks: impl Iterator<Item = impl Future<Output = ()> + Send + 'static>) {
    let handles: Vec<_> = tasks.map(tokio::spawn).collect();
    for handle in handles {
        handle.await.expect("task");
    }
}

fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
