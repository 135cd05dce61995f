//! Uploads into an Assembly through tus with `--store s3` (a real Garage): the upload names its
//! Assembly in `Upload-Metadata` as Uppy's plugin does, lands in the bucket, is read back from
//! it into the Assembly, which then runs; the Assembly's copy has the sha256 of what was sent.
#![cfg(feature = "s3")]

mod common;

use base64::Engine;
use ferry_testkit::garage::Garage;
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::{Value, json};

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[tokio::test]
async fn a_tus_upload_in_the_s3_store_reaches_its_assembly() {
    let garage = Garage::start().await;
    let mut args = common::s3_store(&garage);
    args.extend(["--assembly-key".to_owned(), "tus-s3-key".to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = common::serve(&args).await;
    let client = reqwest::Client::new();

    // No secret: params need no signature.
    let params = json!({
        "auth": {"key": "tus-s3-key"},
        "steps": {"kept": {"robot": "/file/filter", "use": ":original", "accepts": [["${file.size}", ">", "0"]]}},
    });
    let form = reqwest::multipart::Form::new()
        .text("params", params.to_string())
        .text("tus_num_expected_upload_files", "1");
    let created: Value = client
        .post(format!("{}/assemblies", server.base))
        .multipart(form)
        .send()
        .await
        .expect("create")
        .json()
        .await
        .expect("json");
    assert_eq!(created["ok"], "ASSEMBLY_UPLOADING", "{created}");
    let assembly_url = created["assembly_ssl_url"].as_str().expect("url");
    assert_eq!(created["tus_url"], format!("{}/files/", server.base));

    // Two PATCHes, the upload larger than one S3 part.
    let bytes = random_bytes(9 * 1024 * 1024 + 123);
    let metadata = format!(
        "assembly_url {},fieldname {},filename {}",
        b64(assembly_url),
        b64("file"),
        b64("clip.bin")
    );
    let meta = [("Upload-Metadata", metadata.as_str())];
    let location = common::create_with(&client, &server.base, bytes.len(), &meta).await;
    let url = format!("{}{location}", server.base);
    let mut offset = 0;
    for end in [6 * 1024 * 1024, bytes.len()] {
        let res = client
            .patch(&url)
            .header("Tus-Resumable", "1.0.0")
            .header("Upload-Offset", offset.to_string())
            .header("Content-Type", "application/offset+octet-stream")
            .body(bytes[offset..end].to_vec())
            .send()
            .await
            .expect("patch");
        assert_eq!(res.status(), 204);
        offset = end;
    }
    let id = url.rsplit('/').next().expect("id");
    assert!(garage.get_object(&format!("tus/{id}")).await.is_some());

    // Polled as the Node SDK does (bounded: at most 30 s).
    let mut status = Value::Null;
    for _ in 0..300 {
        status = client
            .get(assembly_url)
            .send()
            .await
            .expect("status")
            .json()
            .await
            .expect("json");
        if status["ok"] != "ASSEMBLY_UPLOADING" && status["ok"] != "ASSEMBLY_EXECUTING" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status["ok"], "ASSEMBLY_COMPLETED", "{status}");
    let upload = &status["uploads"][0];
    assert_eq!(
        (
            upload["name"].as_str(),
            upload["size"].as_u64(),
            upload["is_tus_file"].as_bool()
        ),
        (Some("clip.bin"), Some(bytes.len() as u64), Some(true)),
        "{status}"
    );
    let kept = &status["results"]["kept"][0];
    let stored = client
        .get(kept["url"].as_str().expect("result url"))
        .send()
        .await
        .expect("get")
        .bytes()
        .await
        .expect("bytes");
    assert_eq!(sha256_hex(&stored), sha256_hex(&bytes));
}
