//! What a final upload may name: each partial upload once, at most 256 of them, and parts that
//! add up to no more than the server's maximum size, also when a part's length was deferred
//! and became known after the final was made. A refused final leaves nothing behind.

use ferry_tus::TusConfig;

use crate::common::{Endpoint, V};

/// A finished partial upload holding `len` random bytes; returns its path.
async fn finished_part(ep: &Endpoint, len: usize) -> String {
    let url = ep
        .create(Some(len as u64), &[("Upload-Concat", "partial")])
        .await;
    let bytes = ferry_testkit::random_bytes(len);
    assert_eq!(ep.patch(&url, 0, &bytes).await.status, 204);
    url
}

/// The names in the store's directory, sorted.
fn files(ep: &Endpoint) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(ep.dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_final_naming_a_part_twice_is_refused() {
    let ep = Endpoint::start().await;
    let a = finished_part(&ep, 65_536).await;
    let b = finished_part(&ep, 10).await;
    let before = files(&ep);
    for concat in [
        format!("final;{a} {a}"),
        format!("final;{a} {b} {a}"),
        format!("final;{a} {}", ep.url(&a)),
        format!("final;{}", vec![a.as_str(); 400].join(" ")),
    ] {
        let res = ep
            .send(
                "POST",
                "/files/",
                &[V, ("Upload-Concat", &concat)],
                Vec::new(),
            )
            .await;
        assert_eq!(res.status, 400, "{concat}");
        assert_eq!(
            res.text(),
            "Upload-Concat names the same partial upload more than once\n"
        );
    }
    assert_eq!(files(&ep), before, "a refused final stored something");
    // Each part once is still a final.
    let concat = format!("final;{a} {b}");
    let res = ep
        .send(
            "POST",
            "/files/",
            &[V, ("Upload-Concat", &concat)],
            Vec::new(),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
}

#[tokio::test]
async fn a_final_naming_more_than_256_parts_is_refused() {
    let ep = Endpoint::start().await;
    let urls: Vec<String> = (0..257)
        .map(|_| format!("/files/{}", ferry_tus::UploadId::generate()))
        .collect();
    let concat = format!("final;{}", urls.join(" "));
    let res = ep
        .send(
            "POST",
            "/files/",
            &[V, ("Upload-Concat", &concat)],
            Vec::new(),
        )
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(
        res.text(),
        "Upload-Concat names more than 256 partial uploads\n"
    );
}

#[tokio::test]
async fn a_final_larger_than_the_maximum_size_is_refused() {
    let config = TusConfig {
        max_size: Some(100),
        ..TusConfig::default()
    };
    let ep = Endpoint::with(config).await;
    let a = finished_part(&ep, 60).await;
    let b = finished_part(&ep, 60).await;
    let before = files(&ep);
    let concat = format!("final;{a} {b}");
    let res = ep
        .send(
            "POST",
            "/files/",
            &[V, ("Upload-Concat", &concat)],
            Vec::new(),
        )
        .await;
    assert_eq!(res.status, 413);
    assert_eq!(res.text(), "upload is larger than the maximum size\n");
    assert_eq!(files(&ep), before, "a refused final stored something");
}

/// A final made while a deferred-length part was unfinished: the part's length, known later,
/// takes the whole past the maximum, and the final is never concatenated.
#[tokio::test]
async fn a_pending_final_that_grows_past_the_maximum_size_is_never_made() {
    let config = TusConfig {
        max_size: Some(100),
        ..TusConfig::default()
    };
    let ep = Endpoint::with(config).await;
    let a = finished_part(&ep, 60).await;
    let deferred = ep.create(None, &[("Upload-Concat", "partial")]).await;
    let concat = format!("final;{a} {deferred}");
    let res = ep
        .send(
            "POST",
            "/files/",
            &[V, ("Upload-Concat", &concat)],
            Vec::new(),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let final_url = res.header("location").expect("location").to_owned();
    let res = ep
        .send(
            "PATCH",
            &deferred,
            &[
                V,
                ("Upload-Offset", "0"),
                ("Upload-Length", "60"),
                ("Content-Type", "application/offset+octet-stream"),
            ],
            vec![7u8; 60],
        )
        .await;
    assert_eq!(res.status, 204, "{}", res.text());
    let head = ep.send("HEAD", &final_url, &[V], Vec::new()).await;
    assert_eq!(head.status, 413);
    assert_eq!(ep.store_offset(&final_url).await, 0, "the final was filled");
    let get = ep.send("GET", &final_url, &[], Vec::new()).await;
    assert_eq!(get.status, 404);
}
