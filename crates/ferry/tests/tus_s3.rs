//! `ferry serve --store s3` against a real Garage: a tus upload in uneven PATCHes lands in the
//! bucket byte-exact, downloads back, and termination removes it; partial uploads concatenate
//! into a final one.
#![cfg(feature = "s3")]

mod common;

use ferry_testkit::garage::Garage;
use ferry_testkit::{random_bytes, sha256_hex};

#[tokio::test]
async fn tus_upload_to_the_s3_store() {
    let garage = Garage::start().await;
    let store = common::s3_store(&garage);
    let args: Vec<&str> = store.iter().map(String::as_str).collect();
    let server = common::configure(&args).await.start();
    let base = &server.base;
    let client = reqwest::Client::new();
    let bytes = random_bytes(11 * 1024 * 1024 + 4321);

    let meta = [("Upload-Metadata", "filetype aW1hZ2UvcG5n")];
    let location = common::create_with(&client, base, bytes.len(), &meta).await;
    let url = format!("{base}{location}");
    let mut offset = 0;
    for end in [3 * 1024 * 1024, 9 * 1024 * 1024 + 1, bytes.len()] {
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
        assert_eq!(res.headers()["upload-offset"], end.to_string().as_str());
        offset = end;
    }
    let id = url.rsplit('/').next().expect("id");
    let object = garage
        .get_object(&format!("tus/{id}"))
        .await
        .expect("object in the bucket");
    assert_eq!(sha256_hex(&object), sha256_hex(&bytes));
    let res = client.get(&url).send().await.expect("download");
    assert_eq!(res.headers()["content-type"], "image/png");
    let downloaded = res.bytes().await.expect("body");
    assert_eq!(sha256_hex(&downloaded), sha256_hex(&bytes));

    let res = client
        .delete(&url)
        .header("Tus-Resumable", "1.0.0")
        .send()
        .await
        .expect("delete");
    assert_eq!(res.status(), 204);
    assert_eq!(garage.get_object(&format!("tus/{id}")).await, None);

    // Concatenation: advertised, and a final upload holds the parts' bytes in order.
    let res = client
        .request(reqwest::Method::OPTIONS, format!("{base}/files/"))
        .send()
        .await
        .expect("options");
    let extensions = res.headers()["tus-extension"].to_str().expect("ascii");
    assert!(
        extensions.split(',').any(|e| e == "concatenation"),
        "{extensions}"
    );
    let parts = [&bytes[..6 * 1024 * 1024 + 1], &bytes[6 * 1024 * 1024 + 1..]];
    let mut part_paths = Vec::new();
    for part in parts {
        part_paths.push(create_partial(&client, base, part.len(), Some(part)).await);
    }
    let url = create_final(&client, base, &part_paths).await;
    assert_eq!(
        offset_of(&client, &url).await,
        Some(bytes.len().to_string())
    );
    assert_eq!(downloaded_sha256(&client, &url).await, sha256_hex(&bytes));

    // concatenation-unfinished: the final is created before its second part has any bytes,
    // and is concatenated when that part finishes.
    assert!(
        extensions
            .split(',')
            .any(|e| e == "concatenation-unfinished"),
        "{extensions}"
    );
    let first = create_partial(&client, base, parts[0].len(), Some(parts[0])).await;
    let second = create_partial(&client, base, parts[1].len(), None).await;
    let url = create_final(&client, base, &[first, second.clone()]).await;
    assert_eq!(
        offset_of(&client, &url).await,
        None,
        "pending has no offset"
    );
    let res = client
        .patch(format!("{base}{second}"))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .body(parts[1].to_vec())
        .send()
        .await
        .expect("finish the second part");
    assert_eq!(res.status(), 204);
    assert_eq!(
        offset_of(&client, &url).await,
        Some(bytes.len().to_string())
    );
    assert_eq!(downloaded_sha256(&client, &url).await, sha256_hex(&bytes));
}

/// POSTs a partial upload of `len` bytes, with `bytes` as its first bytes when given; returns
/// its path.
async fn create_partial(
    client: &reqwest::Client,
    base: &str,
    len: usize,
    bytes: Option<&[u8]>,
) -> String {
    let mut req = client
        .post(format!("{base}/files/"))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", len.to_string())
        .header("Upload-Concat", "partial");
    if let Some(bytes) = bytes {
        req = req
            .header("Content-Type", "application/offset+octet-stream")
            .body(bytes.to_vec());
    }
    let res = req.send().await.expect("create partial");
    assert_eq!(res.status(), 201);
    if let Some(bytes) = bytes {
        let stored = bytes.len().to_string();
        assert_eq!(res.headers()["upload-offset"], stored.as_str());
    }
    res.headers()["location"]
        .to_str()
        .expect("ascii")
        .to_owned()
}

/// POSTs a final upload of the partial uploads at `parts`; returns its URL.
async fn create_final(client: &reqwest::Client, base: &str, parts: &[String]) -> String {
    let res = client
        .post(format!("{base}/files/"))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Concat", format!("final;{}", parts.join(" ")))
        .send()
        .await
        .expect("create final");
    assert_eq!(res.status(), 201);
    format!(
        "{base}{}",
        res.headers()["location"].to_str().expect("ascii")
    )
}

/// `Upload-Offset` from a HEAD of `url`, if it has one.
async fn offset_of(client: &reqwest::Client, url: &str) -> Option<String> {
    let res = client
        .head(url)
        .header("Tus-Resumable", "1.0.0")
        .send()
        .await
        .expect("head");
    assert_eq!(res.status(), 200);
    res.headers()
        .get("upload-offset")
        .map(|v| v.to_str().expect("ascii").to_owned())
}

/// The sha256 of what `url` downloads.
async fn downloaded_sha256(client: &reqwest::Client, url: &str) -> String {
    let res = client.get(url).send().await.expect("download");
    sha256_hex(&res.bytes().await.expect("body"))
}
