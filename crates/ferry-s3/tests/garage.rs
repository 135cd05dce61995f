//! The client against a real Garage node: small objects, a key listing over two pages, a
//! multipart upload from a streamed part to the completed object, abort, and S3's 404s.

use bytes::Bytes;
use ferry_s3::{MIN_PART, S3Error};
use ferry_testkit::garage::Garage;
use ferry_testkit::{random_bytes, sha256_hex};
use futures_util::{StreamExt, stream};

#[tokio::test]
async fn the_client_speaks_to_a_real_bucket() {
    let garage = Garage::start().await;
    let client = garage.client();

    let bytes = random_bytes(70_000);
    client.put("o/a", bytes.clone()).await.expect("put");
    assert_eq!(client.get_bytes("o/a").await.expect("get"), bytes);
    assert!(
        client
            .get("o/missing")
            .await
            .err()
            .is_some_and(|e| e.is_not_found())
    );
    client
        .delete("o/missing")
        .await
        .expect("deleting nothing is fine");

    // ListObjectsV2 answers 1,000 keys a page: 1,001 keys take two pages.
    let keys: Vec<String> = (0..1_001).map(|n| format!("many/{n:04}")).collect();
    stream::iter(&keys)
        .for_each_concurrent(16, |key| async {
            client.put(key, Vec::new()).await.expect("put");
        })
        .await;
    let mut listed = client.list_keys("many/").await.expect("list");
    listed.sort();
    assert_eq!(listed, keys);

    // A part streamed from chunks (never one buffer), a short last part, then the object.
    let data = random_bytes(MIN_PART as usize + 10);
    let (first, last) = data.split_at(MIN_PART as usize);
    let upload = client.create_multipart("big", &[]).await.expect("create");
    let chunks: Vec<std::io::Result<Bytes>> = first
        .chunks(64 * 1024)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    let body = reqwest::Body::wrap_stream(stream::iter(chunks));
    let e1 = client
        .upload_part("big", &upload, 1, MIN_PART, body)
        .await
        .expect("part 1");
    let e2 = client
        .upload_part("big", &upload, 2, 10, last.to_vec())
        .await
        .expect("part 2");
    let parts = client.list_parts("big", &upload).await.expect("list parts");
    assert_eq!(
        parts.iter().map(|p| (p.number, p.size)).collect::<Vec<_>>(),
        [(1, MIN_PART), (2, 10)]
    );
    client
        .complete("big", &upload, &[(1, e1), (2, e2)])
        .await
        .expect("complete");
    let stored = client.get_bytes("big").await.expect("get");
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));

    // Abort ends an upload: its parts can no longer be listed.
    let upload = client.create_multipart("gone", &[]).await.expect("create");
    client.abort("gone", &upload).await.expect("abort");
    let listed = client.list_parts("gone", &upload).await;
    assert!(
        matches!(&listed, Err(e @ S3Error::Client { .. }) if e.is_not_found()),
        "{listed:?}"
    );
}
