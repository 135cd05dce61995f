//! concatenation-unfinished: a final upload created while a part is still unfinished has no
//! `Upload-Offset` until the last part finishes, then holds exactly the parts' bytes, also when
//! the server restarted in between.

use ferry_tus::TusConfig;

use crate::common::{Endpoint, Response, V};

/// Two partial uploads (bytes and urls); only the first is written.
async fn two_partials(ep: &Endpoint) -> ([Vec<u8>; 2], [String; 2]) {
    let parts = [
        ferry_testkit::random_bytes(70_001),
        ferry_testkit::random_bytes(4_099),
    ];
    let first = ep
        .create(Some(parts[0].len() as u64), &[("Upload-Concat", "partial")])
        .await;
    let second = ep
        .create(Some(parts[1].len() as u64), &[("Upload-Concat", "partial")])
        .await;
    assert_eq!(ep.patch(&first, 0, &parts[0]).await.status, 204);
    (parts, [first, second])
}

async fn create_final(ep: &Endpoint, concat: &str) -> Response {
    ep.send(
        "POST",
        "/files/",
        &[
            V,
            ("Upload-Concat", concat),
            ("Upload-Metadata", "filename YS5iaW4="),
        ],
        Vec::new(),
    )
    .await
}

/// HEAD of a final whose second part is unfinished: 200, `final;...`, no offset, and the
/// length, since both parts declared theirs.
async fn assert_pending(ep: &Endpoint, final_url: &str, concat: &str, total: &str) {
    let head = ep.send("HEAD", final_url, &[V], Vec::new()).await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("upload-concat"), Some(concat));
    assert_eq!(
        head.header("upload-offset"),
        None,
        "pending final has no offset"
    );
    assert_eq!(head.header("upload-length"), Some(total));
    assert_eq!(head.header("upload-metadata"), Some("filename YS5iaW4="));
    // Not downloadable and not writable while pending.
    assert_eq!(ep.send("GET", final_url, &[], Vec::new()).await.status, 404);
    assert_eq!(ep.patch(final_url, 0, b"x").await.status, 403);
}

/// HEAD shows the final complete and GET returns exactly the parts' bytes.
async fn assert_finished(ep: &Endpoint, final_url: &str, parts: &[Vec<u8>; 2]) {
    let whole = parts.concat();
    let total = whole.len().to_string();
    let head = ep.send("HEAD", final_url, &[V], Vec::new()).await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("upload-offset"), Some(total.as_str()));
    assert_eq!(head.header("upload-length"), Some(total.as_str()));
    let get = ep.send("GET", final_url, &[], Vec::new()).await;
    assert_eq!(get.status, 200);
    assert_eq!(
        ferry_testkit::sha256_hex(&get.body),
        ferry_testkit::sha256_hex(&whole)
    );
    assert_eq!(
        ep.patch(final_url, whole.len() as u64, b"x").await.status,
        403
    );
}

#[tokio::test]
async fn final_created_before_its_last_part_finishes_completes_with_it() {
    let ep = Endpoint::start().await;
    let (parts, urls) = two_partials(&ep).await;
    let concat = format!("final;{} {}", urls[0], urls[1]);
    let res = create_final(&ep, &concat).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let final_url = res.header("location").expect("location").to_owned();
    let total = (parts[0].len() + parts[1].len()).to_string();
    assert_pending(&ep, &final_url, &concat, &total).await;

    // Half of the second part: still pending.
    let half = parts[1].len() / 2;
    assert_eq!(ep.patch(&urls[1], 0, &parts[1][..half]).await.status, 204);
    assert_pending(&ep, &final_url, &concat, &total).await;

    let res = ep.patch(&urls[1], half as u64, &parts[1][half..]).await;
    assert_eq!(res.status, 204);
    // Concatenated by the PATCH that finished the part, before any HEAD of the final.
    assert_eq!(
        ep.stored(&final_url),
        parts.concat(),
        "final's bytes after the last part's PATCH"
    );
    assert_finished(&ep, &final_url, &parts).await;
}

#[tokio::test]
async fn pending_final_without_a_known_length_omits_upload_length() {
    let ep = Endpoint::start().await;
    let first = ep.create(Some(3), &[("Upload-Concat", "partial")]).await;
    let deferred = ep.create(None, &[("Upload-Concat", "partial")]).await;
    let concat = format!("final;{first} {deferred}");
    let res = create_final(&ep, &concat).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let final_url = res.header("location").expect("location").to_owned();
    let head = ep.send("HEAD", &final_url, &[V], Vec::new()).await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("upload-offset"), None);
    assert_eq!(head.header("upload-length"), None);
    assert_eq!(head.header("upload-concat"), Some(concat.as_str()));

    // Both parts finish; the deferred one sets its length on its last PATCH.
    assert_eq!(ep.patch(&first, 0, b"abc").await.status, 204);
    let res = ep
        .send(
            "PATCH",
            &deferred,
            &[
                V,
                ("Upload-Offset", "0"),
                ("Upload-Length", "2"),
                ("Content-Type", "application/offset+octet-stream"),
            ],
            b"de".to_vec(),
        )
        .await;
    assert_eq!(res.status, 204, "{}", res.text());
    let head = ep.send("HEAD", &final_url, &[V], Vec::new()).await;
    assert_eq!(head.header("upload-offset"), Some("5"));
    assert_eq!(head.header("upload-length"), Some("5"));
    let get = ep.send("GET", &final_url, &[], Vec::new()).await;
    assert_eq!(get.body, b"abcde");
}

#[tokio::test]
async fn unfinished_final_still_requires_existing_partial_parts() {
    let ep = Endpoint::start().await;
    let partial = ep.create(Some(5), &[("Upload-Concat", "partial")]).await;
    let plain = ep.create(Some(5), &[]).await;
    let missing = "/files/0123456789abcdef0123456789abcdef";
    for (concat, status) in [
        (format!("final;{partial} {plain}"), 400),
        (format!("final;{partial} {missing}"), 400),
        (format!("final;{partial}"), 201),
    ] {
        let res = create_final(&ep, &concat).await;
        assert_eq!(res.status, status, "{concat}: {}", res.text());
    }
}

#[tokio::test]
async fn pending_final_completes_after_a_restart() {
    let ep = Endpoint::start().await;
    let (parts, urls) = two_partials(&ep).await;
    let concat = format!("final;{} {}", urls[0], urls[1]);
    let res = create_final(&ep, &concat).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let final_url = res.header("location").expect("location").to_owned();
    let total = (parts[0].len() + parts[1].len()).to_string();

    // A new process (new store, state and locks) on the same directory.
    let ep = ep.restart(TusConfig::default()).await;
    assert_pending(&ep, &final_url, &concat, &total).await;
    assert_eq!(ep.patch(&urls[1], 0, &parts[1]).await.status, 204);
    assert_finished(&ep, &final_url, &parts).await;
}

#[tokio::test]
async fn final_whose_last_part_finished_before_a_restart_is_completed_by_head() {
    let ep = Endpoint::start().await;
    let (parts, urls) = two_partials(&ep).await;
    let concat = format!("final;{} {}", urls[0], urls[1]);
    let res = create_final(&ep, &concat).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let final_url = res.header("location").expect("location").to_owned();
    // The last part's bytes reach the disk without the server (as when a crash came between
    // them and the concatenation).
    let second = urls[1].rsplit('/').next().expect("id");
    std::fs::write(ep.dir.path().join(second), &parts[1]).expect("write part");

    let ep = ep.restart(TusConfig::default()).await;
    assert_finished(&ep, &final_url, &parts).await;
}

#[tokio::test]
async fn options_advertises_concatenation_unfinished() {
    let ep = Endpoint::start().await;
    let res = ep.send("OPTIONS", "/files/", &[], Vec::new()).await;
    let extensions = res.header("tus-extension").expect("Tus-Extension");
    assert!(
        extensions
            .split(',')
            .any(|e| e == "concatenation-unfinished"),
        "{extensions}"
    );
}

/// The finals waiting for a part are found again after a restart, without any HEAD of them:
/// the PATCH that finishes the part concatenates every final still waiting for it (one was
/// terminated meanwhile, and is neither made nor in the way).
#[tokio::test]
async fn finals_waiting_for_a_part_are_found_after_a_restart_by_its_patch() {
    let ep = Endpoint::start().await;
    let (parts, urls) = two_partials(&ep).await;
    let concat = format!("final;{} {}", urls[0], urls[1]);
    let mut finals = Vec::new();
    for _ in 0..3 {
        let res = create_final(&ep, &concat).await;
        assert_eq!(res.status, 201, "{}", res.text());
        finals.push(res.header("location").expect("location").to_owned());
    }
    let res = ep.send("DELETE", &finals[1], &[V], Vec::new()).await;
    assert_eq!(res.status, 204);

    let ep = ep.restart(TusConfig::default()).await;
    assert_eq!(ep.patch(&urls[1], 0, &parts[1]).await.status, 204);
    // Read from disk: concatenated by that PATCH, not by a HEAD.
    for final_url in [&finals[0], &finals[2]] {
        assert_eq!(
            ferry_testkit::sha256_hex(&ep.stored(final_url)),
            ferry_testkit::sha256_hex(&parts.concat()),
            "{final_url}"
        );
        assert_finished(&ep, final_url, &parts).await;
    }
    assert_eq!(
        ep.send("HEAD", &finals[1], &[V], Vec::new()).await.status,
        404
    );
    // A final made after the restart is found too.
    let (more, more_urls) = two_partials(&ep).await;
    let concat = format!("final;{} {}", more_urls[0], more_urls[1]);
    let res = create_final(&ep, &concat).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let final_url = res.header("location").expect("location").to_owned();
    assert_eq!(ep.patch(&more_urls[1], 0, &more[1]).await.status, 204);
    assert_eq!(ep.stored(&final_url), more.concat());
}
