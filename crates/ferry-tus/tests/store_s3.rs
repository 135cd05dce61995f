//! The store conformance suite on the s3 store, against a real Garage node, plus the S3-side
//! promises: the tail keeps non-final parts at full size, termination aborts the multipart
//! upload, and the finished object is byte-exact.
#![cfg(feature = "s3")]

use ferry_testkit::garage::Garage;
use ferry_testkit::{random_bytes, sha256_hex};
use ferry_tus::UploadId;
use ferry_tus::store::conformance;
use ferry_tus::store::s3::{MIN_PART, S3Store};
use ferry_tus::store::{NewUpload, Store};
use tokio::io::AsyncReadExt;

fn store(garage: &Garage, prefix: &str) -> S3Store {
    S3Store::new(garage.client(), prefix, MIN_PART)
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

/// S3 may answer CompleteMultipartUpload with 200 and an `<Error>` body. The store must not
/// take that for success: the write fails, the upload is neither complete nor counted as whole,
/// and writing the last bytes again completes it once the store works.
#[tokio::test]
async fn an_error_inside_a_200_complete_answer_fails_the_upload() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use axum::extract::{Request, State};
    use axum::response::{IntoResponse, Response};

    #[derive(Clone)]
    struct Proxy {
        garage: String,
        break_complete: Arc<AtomicBool>,
        http: reqwest::Client,
    }

    /// Forwards every request to Garage unchanged (Host included, so signatures hold), except a
    /// CompleteMultipartUpload while `break_complete` is set.
    async fn forward(State(proxy): State<Proxy>, request: Request) -> Response {
        let query = request.uri().query().unwrap_or_default().to_owned();
        if request.method() == axum::http::Method::POST
            && query.contains("uploadId=")
            && proxy.break_complete.load(Ordering::SeqCst)
        {
            return "<?xml version=\"1.0\"?>\n<Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>".into_response();
        }
        let url = format!("{}{}", proxy.garage, request.uri());
        let mut out = proxy.http.request(request.method().clone(), url);
        for (name, value) in request.headers() {
            out = out.header(name, value);
        }
        let body = axum::body::to_bytes(request.into_body(), usize::MAX)
            .await
            .expect("body");
        let answer = out.body(body).send().await.expect("garage");
        let status = answer.status();
        let headers = answer.headers().clone();
        let bytes = answer.bytes().await.expect("garage body");
        let mut response = (status, bytes).into_response();
        *response.headers_mut() = headers;
        response
    }

    let garage = Garage::start().await;
    let break_complete = Arc::new(AtomicBool::new(true));
    let proxy =
        ferry_testkit::TestServer::start(axum::Router::new().fallback(forward).with_state(Proxy {
            garage: garage.endpoint.clone(),
            break_complete: break_complete.clone(),
            http: reqwest::Client::new(),
        }))
        .await;
    let client = ferry_s3::S3Client::new(ferry_s3::S3Bucket {
        endpoint: proxy.url(""),
        ..garage.bucket()
    })
    .expect("client");
    let s3 = S3Store::new(client, "tus/", MIN_PART);

    let bytes = random_bytes(MIN_PART + 4321);
    let info = s3
        .create(NewUpload {
            length: Some(bytes.len() as u64),
            ..NewUpload::default()
        })
        .await
        .expect("create");
    let id = UploadId::parse(&info.id).expect("our id");
    let written = s3.write(&id, 0, &mut conformance::body_of(&bytes)).await;
    assert!(written.is_err(), "a failed complete was taken for success");
    let info = s3.info(&id).await.expect("info");
    assert!(
        !info.is_complete(),
        "offset {} of {:?}",
        info.offset,
        info.length
    );
    assert!(s3.read(&id).await.is_err(), "no object may exist yet");

    // Once the store completes again, the client resumes from the reported offset.
    break_complete.store(false, Ordering::SeqCst);
    let at = info.offset as usize;
    let end = s3
        .write(&id, info.offset, &mut conformance::body_of(&bytes[at..]))
        .await
        .expect("write after the store recovered");
    assert_eq!(end, bytes.len() as u64);
    let mut stored = Vec::new();
    s3.read(&id)
        .await
        .expect("read")
        .read_to_end(&mut stored)
        .await
        .expect("body");
    assert_eq!(sha256_hex(&stored), sha256_hex(&bytes));
}

/// Hooks over the s3 store: post-finish names the bucket and key (tusd's s3store keys), a
/// hook's id is used and a taken one refused, and a hook's storage key is ignored (objects stay
/// at `{prefix}{id}`).
#[tokio::test]
async fn hooks_report_the_bucket_and_key() {
    use std::sync::Arc;

    use ferry_hooks::{EnabledEvents, HookSender, HookType, HooksConfig};
    use ferry_testkit::TestServer;
    use ferry_testkit::hooks::HookReceiver;
    use ferry_tus::{TusConfig, TusState};
    use serde_json::json;

    let garage = Garage::start().await;
    let receiver = HookReceiver::start().await;
    receiver.answer(
        "pre-create",
        json!({"ChangeFileInfo": {"ID": "s3-chosen_1", "Storage": {"Key": "elsewhere/x"}}}),
    );
    let sender = HookSender::from_config(&HooksConfig {
        http: Some(receiver.url()),
        enabled_events: EnabledEvents::of(&HookType::ALL),
        ..HooksConfig::default()
    })
    .expect("config")
    .expect("sender");
    let state = TusState::new(
        Arc::new(store(&garage, "hooked/")),
        TusConfig {
            hooks: Arc::new(sender),
            ..TusConfig::default()
        },
    );
    let server = TestServer::start(ferry_tus::router(state)).await;
    let client = reqwest::Client::new();
    let bytes = random_bytes(300_000);
    let created = client
        .post(server.url("/files/"))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", bytes.len().to_string())
        .header("Content-Type", "application/offset+octet-stream")
        .body(bytes.clone())
        .send()
        .await
        .expect("create");
    assert_eq!(created.status(), 201);
    assert_eq!(created.headers()["location"], "/files/s3-chosen_1");
    assert_eq!(created.headers()["upload-offset"], "300000");

    let finished = receiver
        .wait_for("post-finish", 1, std::time::Duration::from_secs(5))
        .await;
    let upload = &finished[0]["Event"]["Upload"];
    assert_eq!(upload["ID"], "s3-chosen_1");
    assert_eq!(upload["Size"], 300_000);
    assert_eq!(
        upload["Storage"],
        json!({"Type": "s3store", "Bucket": garage.bucket, "Key": "hooked/s3-chosen_1"})
    );
    let object = garage
        .get_object("hooked/s3-chosen_1")
        .await
        .expect("object");
    assert_eq!(sha256_hex(&object), sha256_hex(&bytes));
    assert!(garage.get_object("elsewhere/x").await.is_none());

    let again = client
        .post(server.url("/files/"))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", "1")
        .send()
        .await
        .expect("create again");
    assert_eq!(again.status(), 409);
}
