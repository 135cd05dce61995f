//! S3 (Garage) failing under `ferry --store s3`, through the fault proxy in front of it: a part
//! upload that never answers ends the PATCH with 503 within `--s3-idle-timeout` (not when the
//! connection dies), HEAD answers meanwhile, the offset stays at what S3 durably holds, and the
//! upload resumes byte-exact once S3 answers again; S3 cut off answers 503 with a message on
//! every route instead of 500; Garage killed and restarted mid-uploads loses nothing
//! acknowledged.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferry_testkit::garage::Garage;
use ferry_testkit::process::FerryProcess as Ferry;
use ferry_testkit::proxy::{FaultProxy, Mode};
use ferry_testkit::{random_bytes, sha256_hex};
use reqwest::{Client, Method, StatusCode};

use crate::resume::{Record, all_whole, until_whole};
use crate::tus::{BIN, create, download, offset, patch, tus};

/// What a request answers while S3 cannot be reached or does not answer.
const UNAVAILABLE: &str = "the storage service is unavailable; try again shortly\n";
/// The part size of `ferry`'s S3 store.
const PART: usize = 8 << 20;
/// Longest a request may take here: far over `--s3-idle-timeout 2`, far under "forever".
const BOUND: Duration = Duration::from_secs(30);

/// `ferry --store s3` on Garage's bucket through `endpoint` (the proxy, or Garage itself).
async fn start(garage: &Garage, endpoint: &str, data: &tempfile::TempDir) -> Ferry {
    let mut args = crate::common::s3_store(garage);
    let at = args
        .iter()
        .position(|a| a == "--s3-endpoint")
        .expect("endpoint flag");
    args[at + 1] = endpoint.to_owned();
    let dir = data.path().display().to_string();
    args.extend(["--s3-idle-timeout", "2", "--no-ui", "--data-dir", &dir].map(str::to_owned));
    Ferry::start(BIN, args).await
}

/// The status and message of `request`, which must answer within [`BOUND`].
async fn answered(request: reqwest::RequestBuilder) -> (StatusCode, String) {
    let res = request
        .timeout(BOUND)
        .send()
        .await
        .expect("an answer within the bound, not a hang");
    let status = res.status();
    (status, res.text().await.unwrap_or_default())
}

#[tokio::test]
async fn a_part_s3_never_answers_ends_the_patch_with_503_and_the_upload_resumes_byte_exact() {
    let garage = Garage::start().await;
    let proxy = FaultProxy::in_front_of(&garage.endpoint).await;
    let data = tempfile::tempdir().expect("temp dir");
    let ferry = start(&garage, &proxy.base_url(), &data).await;
    let client = Client::new();
    let bytes = random_bytes(2 * PART + (4 << 20));
    let url = create(&client, &ferry.base, bytes.len()).await;
    // One part and 1 MiB of tail stored.
    let first = PART + (1 << 20);
    assert_eq!(
        patch(&client, &url, 0, bytes[..first].to_vec())
            .await
            .status(),
        204
    );

    // The next part's PUT gets 1 MiB through, then S3 hangs.
    proxy.stall_after(1 << 20);
    let started = Instant::now();
    let patch_rest = tus(&client, Method::PATCH, &url)
        .header("Upload-Offset", first.to_string())
        .header("Content-Type", "application/offset+octet-stream")
        .body(bytes[first..].to_vec());
    let (status, message) = answered(patch_rest).await;
    let waited = started.elapsed();
    assert_eq!(proxy.mode(), Mode::Stall, "S3 was hanging");
    assert_eq!(
        (status, message.as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, UNAVAILABLE)
    );

    // HEAD needs S3 too: it answers, 503, rather than waiting on it.
    let (status, message) = answered(tus(&client, Method::HEAD, &url)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{message}");

    proxy.set_mode(Mode::Pass);
    assert_eq!(
        offset(&client, &url).await,
        Ok(first as u64),
        "what S3 holds, no more"
    );
    let res = patch(&client, &url, first as u64, bytes[first..].to_vec()).await;
    assert_eq!(res.status(), 204);
    assert_eq!(
        sha256_hex(&download(&client, &url).await),
        sha256_hex(&bytes)
    );
    println!("faults/s3: a stuck part answered 503 after {waited:?} (--s3-idle-timeout 2)");
}

#[tokio::test]
async fn s3_cut_off_answers_503_with_a_message_and_uploads_go_on_once_it_is_back() {
    let garage = Garage::start().await;
    let proxy = FaultProxy::in_front_of(&garage.endpoint).await;
    let data = tempfile::tempdir().expect("temp dir");
    let ferry = start(&garage, &proxy.base_url(), &data).await;
    let client = Client::new();
    let bytes = random_bytes(3 << 20);
    let url = create(&client, &ferry.base, bytes.len()).await;
    assert_eq!(
        patch(&client, &url, 0, bytes[..1 << 20].to_vec())
            .await
            .status(),
        204
    );

    proxy.set_mode(Mode::Cut);
    let creation =
        tus(&client, Method::POST, &format!("{}/files/", ferry.base)).header("Upload-Length", "10");
    assert_eq!(
        answered(creation).await,
        (StatusCode::SERVICE_UNAVAILABLE, UNAVAILABLE.to_owned())
    );
    let (status, _) = answered(tus(&client, Method::HEAD, &url)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let more = tus(&client, Method::PATCH, &url)
        .header("Upload-Offset", (1 << 20).to_string())
        .header("Content-Type", "application/offset+octet-stream")
        .body(bytes[1 << 20..].to_vec());
    let res = more.timeout(BOUND).send().await.expect("answered");
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        res.headers()["retry-after"],
        "1",
        "clients are told to retry"
    );

    proxy.set_mode(Mode::Pass);
    assert_eq!(offset(&client, &url).await, Ok(1 << 20));
    let res = patch(&client, &url, 1 << 20, bytes[1 << 20..].to_vec()).await;
    assert_eq!(res.status(), 204);
    assert_eq!(
        sha256_hex(&download(&client, &url).await),
        sha256_hex(&bytes)
    );
}

#[tokio::test]
async fn garage_killed_and_restarted_during_uploads_loses_nothing_acknowledged() {
    let mut garage = Garage::start().await;
    let data = tempfile::tempdir().expect("temp dir");
    let ferry = start(&garage, &garage.endpoint.clone(), &data).await;
    let client = Client::new();
    let record = Arc::new(Record::default());
    let mut clients = Vec::new();
    for _ in 0..4 {
        let bytes = random_bytes(PART + (4 << 20));
        let url = create(&client, &ferry.base, bytes.len()).await;
        let pace = Duration::from_millis(20);
        let job = until_whole(
            client.clone(),
            vec![url.clone()],
            bytes.clone(),
            128 * 1024,
            pace,
            record.clone(),
        );
        clients.push((url, bytes, tokio::spawn(job)));
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    let killed = Instant::now();
    garage.kill9();
    tokio::time::sleep(Duration::from_secs(1)).await;
    garage.restart().await;
    let down = killed.elapsed();
    all_whole(&client, clients, &record).await;
    let refusals = record.refusals.lock().expect("record").clone();
    assert!(
        refusals.iter().all(|(status, _)| *status == 503),
        "only 503 while Garage was away: {refusals:?}"
    );
    let total = (4 * (PART + (4 << 20))) as u64;
    println!(
        "faults/s3: Garage down {down:?}; 4 uploads byte-exact; {} refusals (503), {} B re-sent",
        refusals.len(),
        record.sent() - total
    );
}
