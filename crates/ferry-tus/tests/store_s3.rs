//! The store conformance suite on the s3 store, against a real Garage node, plus the S3-side
//! promises: the tail keeps non-final parts at full size, termination aborts the multipart
//! upload, and the finished object is byte-exact.
#![cfg(feature = "s3")]

use ferry_testkit::garage::Garage;
use ferry_testkit::{random_bytes, sha256_hex};
use ferry_tus::UploadId;
use ferry_tus::store::conformance;
use ferry_tus::store::s3::{MIN_PART, S3Config, S3Store};
use ferry_tus::store::{NewUpload, Store};
use tokio::io::AsyncReadExt;

fn store(garage: &Garage, prefix: &str) -> S3Store {
    S3Store::new(S3Config {
        endpoint: garage.endpoint.clone(),
        bucket: garage.bucket.clone(),
        region: garage.region.clone(),
        access_key: garage.access_key.clone(),
        secret_key: garage.secret_key.clone(),
        force_path_style: true,
        prefix: prefix.to_owned(),
        part_size: MIN_PART,
    })
    .expect("store")
}

#[tokio::test]
async fn s3_store_conforms_and_maps_onto_multipart() {
    let garage = Garage::start().await;
    let s3 = store(&garage, "tus/");
    if let Err(e) = conformance::run(&s3).await {
        panic!("s3 store: {e}");
    }

    // PATCHes of odd sizes: parts only ever go out full, the tail carries the rest.
    let bytes = random_bytes(2 * MIN_PART + 333_333);
    let info = s3
        .create(NewUpload {
            length: Some(bytes.len() as u64),
            ..NewUpload::default()
        })
        .await
        .expect("create");
    let id = UploadId::parse(&info.id).expect("our id");
    let mut at = 0;
    for size in [1, 3 * 1024 * 1024, 4 * 1024 * 1024, bytes.len()] {
        let end = size.min(bytes.len());
        let mut chunk = conformance::body_of(&bytes[at..end]);
        at = s3.write(&id, at as u64, &mut chunk).await.expect("write") as usize;
        assert_eq!(at, end);
        if at < bytes.len() {
            let tail = garage
                .get_object(&format!("tus/{id}.tail"))
                .await
                .map_or(0, |t| t.len());
            assert!(
                tail < MIN_PART,
                "tail of {tail} bytes should have been a part"
            );
        }
    }
    let mut stored = Vec::new();
    s3.read(&id)
        .await
        .expect("read")
        .read_to_end(&mut stored)
        .await
        .expect("body");
    assert_eq!(sha256_hex(&stored), sha256_hex(&bytes));
    assert_eq!(garage.get_object(&format!("tus/{id}.tail")).await, None);

    // Terminating an unfinished upload aborts its multipart upload.
    let info = s3
        .create(NewUpload {
            length: Some(10 << 20),
            ..NewUpload::default()
        })
        .await
        .expect("create");
    let id = UploadId::parse(&info.id).expect("our id");
    let mut chunk = conformance::body_of(&bytes[..MIN_PART + 10]);
    s3.write(&id, 0, &mut chunk).await.expect("write");
    assert!(garage.list_multipart_uploads().await.contains(id.as_str()));
    s3.as_terminate()
        .expect("terminate")
        .terminate(&id)
        .await
        .expect("terminate");
    assert!(!garage.list_multipart_uploads().await.contains(id.as_str()));
    assert!(matches!(
        s3.info(&id).await,
        Err(ferry_tus::StoreError::NotFound)
    ));
}
