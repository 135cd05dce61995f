//! `/s3/store` through the Assembly API into a real Garage (an S3-compatible store): a small
//! file in one PUT and one larger than a PUT in parts, each read back from the bucket with the
//! sha256 of what was sent, at the key its `path` template names, with the result URL in the
//! status; the credentials never appear in the status; an endpoint on a private address is
//! refused when the server allows public addresses only: at create (403) when the host is
//! literal or comes from a field, when the step runs when it names a per-file value.

mod common;

use common::*;
use ferry_testkit::garage::Garage;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn store_step(garage: &Garage, extra: Value) -> Value {
    let mut step = json!({
        "robot": "/s3/store",
        "use": ":original",
        "key": garage.access_key,
        "secret": garage.secret_key,
        "bucket": garage.bucket,
        "bucket_region": garage.region,
        "host": garage.endpoint,
    });
    if let (Value::Object(s), Value::Object(e)) = (&mut step, extra) {
        s.extend(e);
    }
    step
}

#[tokio::test]
async fn files_are_stored_byte_for_byte_at_their_templated_keys() {
    let garage = Garage::start().await;
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let small = b"a small file".repeat(1000);
    // Larger than one PUT: two parts (8 MiB and the rest).
    let large: Vec<u8> = (0..(9 * 1024 * 1024 + 7) as u32)
        .map(|i| (i % 251) as u8)
        .collect();
    let p = params(json!({
        "exported": store_step(&garage, json!({"path": "${fields.folder}/${unique_prefix}/${file.url_name}"})),
        "prefixed": store_step(&garage, json!({"path": "cdn/${file.name}", "url_prefix": "https://cdn.example/", "acl": "bucket-default"})),
    }));
    let p = {
        let mut v: Value = serde_json::from_str(&p).expect("params");
        v["fields"] = json!({"folder": "inbox"});
        v.to_string()
    };
    let (code, created) = create(
        &s.base,
        form(&p, &[("my photo.bin", &small), ("big.bin", &large)]),
    )
    .await;
    assert_eq!(code, 200, "{created}");
    let done = settle(created["assembly_ssl_url"].as_str().expect("url")).await;
    assert_eq!(done["ok"], "ASSEMBLY_COMPLETED", "{done}");

    let exported = done["results"]["exported"].as_array().expect("exported");
    assert_eq!(exported.len(), 2, "{done}");
    let url_base = format!("{}/{}/", garage.endpoint, garage.bucket);
    for (result, sent) in exported.iter().zip([&small, &large]) {
        let url = result["url"].as_str().expect("url");
        assert_eq!(result["ssl_url"].as_str(), Some(url));
        let key = url
            .strip_prefix(&url_base)
            .expect("a path-style Garage URL");
        let name = result["name"].as_str().expect("name").replace(' ', "_");
        // inbox/ab/cdef.../my_photo.bin
        let parts: Vec<&str> = key.split('/').collect();
        assert_eq!(
            (parts.len(), parts[0], parts[3]),
            (4, "inbox", name.as_str()),
            "{key}"
        );
        assert_eq!(parts[1].len(), 2, "{key}");
        let stored = garage.get_object(key).await.expect("stored");
        assert_eq!(Sha256::digest(&stored), Sha256::digest(sent), "{key}");
        assert_eq!(result["size"].as_u64(), Some(sent.len() as u64));
    }

    let prefixed = done["results"]["prefixed"].as_array().expect("prefixed");
    assert_eq!(
        prefixed[0]["url"].as_str(),
        Some("https://cdn.example/cdn/my%20photo.bin")
    );
    let stored = garage.get_object("cdn/my photo.bin").await.expect("stored");
    assert_eq!(Sha256::digest(&stored), Sha256::digest(&small));

    // No trace of the credentials in what clients read.
    let text = done.to_string();
    assert!(!text.contains(&garage.secret_key), "the secret is echoed");
    assert!(!text.contains(&garage.access_key), "the key is echoed");
}

#[tokio::test]
async fn a_private_endpoint_is_refused_and_a_wrong_secret_is_a_clear_error() {
    let garage = Garage::start().await;
    let dir = tempfile::tempdir().expect("dir");
    let public_only = start(config(&dir.path().join("a"), true)).await;
    // Refused when the Assembly is created, before any file is received or step runs.
    let p = params(json!({"exported": store_step(&garage, json!({}))}));
    let (code, body) = create(&public_only.base, form(&p, &[("a.txt", b"x")])).await;
    assert_eq!(
        (code, body["error"].as_str(), body["message"].as_str()),
        (
            403,
            Some("S3_STORE_ACCESS_DENIED"),
            Some("Step \"exported\": The S3 host is an address this server may not connect to.")
        ),
        "{body}"
    );
    // A host from a field is known at create: expanded and refused there the same way,
    // before any file is received.
    let p = params(json!({"exported": store_step(&garage, json!({"host": "${fields.host}"}))}));
    let p = {
        let mut v: Value = serde_json::from_str(&p).expect("params");
        v["fields"] = json!({"host": "127.0.0.1"});
        v.to_string()
    };
    let (code, body) = create(&public_only.base, form(&p, &[("a.txt", b"x")])).await;
    assert_eq!(
        (code, body["error"].as_str(), body["message"].as_str()),
        (
            403,
            Some("S3_STORE_ACCESS_DENIED"),
            Some("Step \"exported\": The S3 host is an address this server may not connect to.")
        ),
        "{body}"
    );
    // A host naming a per-file value is only known when the step runs: refused then.
    let per_file = garage.endpoint.replace("127.0.0.1", "${file.name}");
    let p = params(json!({"exported": store_step(&garage, json!({"host": per_file}))}));
    let (_, created) = create(&public_only.base, form(&p, &[("127.0.0.1", b"x")])).await;
    let done = settle(created["assembly_ssl_url"].as_str().expect("url")).await;
    assert_eq!(
        (done["error"].as_str(), done["message"].as_str()),
        (
            Some("S3_STORE_ACCESS_DENIED"),
            Some("The S3 host is an address this server may not connect to.")
        ),
        "{done}"
    );

    let s = start(config(&dir.path().join("b"), false)).await;
    let p = params(json!({"exported": store_step(&garage, json!({"secret": "0".repeat(64)}))}));
    let (_, created) = create(&s.base, form(&p, &[("a.txt", b"x")])).await;
    let done = settle(created["assembly_ssl_url"].as_str().expect("url")).await;
    assert_eq!(
        done["error"].as_str(),
        Some("S3_STORE_ACCESS_DENIED"),
        "{done}"
    );
    let message = done["message"].as_str().expect("message");
    assert_eq!(
        message,
        "Storing on S3 failed: the store refused the request (403); check key, secret, bucket and acl."
    );
    assert!(!done.to_string().contains(&"0".repeat(64)), "{done}");

    let p = params(json!({"exported": store_step(&garage, json!({"credentials": "mine"}))}));
    let (code, body) = create(&s.base, form(&p, &[])).await;
    assert_eq!(
        (code, body["error"].as_str()),
        (400, Some("S3_STORE_VALIDATION")),
        "{body}"
    );
}
