//! Companion transfers report where they stored each file (post-finish) to a real hook receiver
//! over HTTP: the destination (a tus upload URL, a form endpoint's answer, an object in the
//! bucket) and the source URL; the shared sender counts the hooks sent (the server's `/metrics`
//! shows those counters).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use ferry_companion::CompanionConfig;
use ferry_hooks::{EnabledEvents, HookSender, HookType, HooksConfig};
use ferry_testkit::garage::Garage;
use ferry_testkit::hooks::HookReceiver;
use ferry_testkit::origin::{Origin, OriginOptions};
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

fn sender(receiver: &HookReceiver) -> HookSender {
    HookSender::from_config(&HooksConfig {
        http: Some(receiver.url()),
        enabled_events: EnabledEvents::of(&HookType::ALL),
        http_retry: 0,
        ..HooksConfig::default()
    })
    .expect("config")
    .expect("sender")
}

async fn import(config: CompanionConfig, body: Value) -> Value {
    let companion = companion(config, no_names()).await;
    let token = start_transfer(&companion, body).await;
    let mut ws = socket(&companion, &token).await;
    let (last, _) = finish(&mut ws).await;
    assert_eq!(last["action"], "success", "{last}");
    last
}

#[tokio::test]
async fn a_link_import_to_tus_reports_the_upload_url_and_the_source() {
    let receiver = HookReceiver::start().await;
    let data = random_bytes(300_000);
    let origin = Origin::start(data.clone(), OriginOptions::default()).await;
    let tus = TusDest::start().await;
    let config = CompanionConfig {
        hooks: Arc::new(sender(&receiver)),
        ..config(&[tus.origin()])
    };
    let last = import(
        config,
        json!({"url": origin.file_url(), "protocol": "tus", "endpoint": tus.endpoint(),
            "size": data.len(), "metadata": {"name": "a.bin", "type": "application/octet-stream"}}),
    )
    .await;
    let url = last["payload"]["url"].as_str().expect("url").to_owned();
    let finished = receiver.wait_for("post-finish", 1, WAIT).await;
    let upload = &finished[0]["Event"]["Upload"];
    assert_eq!(upload["Size"], data.len());
    assert_eq!(upload["Offset"], data.len());
    assert_eq!(upload["ID"], url.rsplit('/').next().expect("id"));
    assert_eq!(upload["MetaData"]["name"], "a.bin");
    assert_eq!(
        upload["Storage"],
        json!({"Type": "tus", "URL": url, "Source": origin.file_url()})
    );
    assert_eq!(finished[0]["Event"]["HTTPRequest"]["URI"], "/url/get");
    assert_eq!(sha256_hex(&download(&url).await), sha256_hex(&data));
}

#[tokio::test]
async fn a_link_import_to_the_form_endpoint_reports_its_answer() {
    let receiver = HookReceiver::start().await;
    let data = random_bytes(50_000);
    let origin = Origin::start(data.clone(), OriginOptions::default()).await;
    let form = FormDest::start().await;
    let endpoint = form.server.url("/upload");
    let config = CompanionConfig {
        hooks: Arc::new(sender(&receiver)),
        ..config(&[form.server.url("")])
    };
    import(
        config,
        json!({"url": origin.file_url(), "protocol": "multipart", "endpoint": endpoint,
            "fieldname": "file", "size": data.len(), "metadata": {"name": "b.bin"}}),
    )
    .await;
    let finished = receiver.wait_for("post-finish", 1, WAIT).await;
    let storage = &finished[0]["Event"]["Upload"]["Storage"];
    assert_eq!(storage["Type"], "multipart");
    assert_eq!(storage["Endpoint"], endpoint);
    assert_eq!(storage["Source"], origin.file_url());
    let stored_at = storage["URL"].as_str().expect("the form's url");
    assert!(stored_at.starts_with("/upload/"), "{stored_at}");
    let bytes = download(&form.server.url(stored_at)).await;
    assert_eq!(sha256_hex(&bytes), sha256_hex(&data));
    assert_eq!(finished[0]["Event"]["Upload"]["Size"], data.len());
}

#[tokio::test]
async fn an_s3_import_reports_bucket_and_key_and_metrics_count_hooks() {
    let receiver = HookReceiver::start().await;
    let garage = Garage::start().await;
    let data = random_bytes(100_000);
    let origin = Origin::start(data.clone(), OriginOptions::default()).await;
    let hooks = sender(&receiver);
    let config = CompanionConfig {
        s3: Some(common::s3::state(&garage, "imports/")),
        hooks: Arc::new(hooks.clone()),
        ..config(&[])
    };
    let companion = companion(config, no_names()).await;
    let token = start_transfer(
        &companion,
        json!({"url": origin.file_url(), "protocol": "s3-multipart", "size": data.len(),
            "metadata": {"name": "c.bin", "type": "application/octet-stream"}}),
    )
    .await;
    let mut ws = socket(&companion, &token).await;
    let (last, _) = finish(&mut ws).await;
    assert_eq!(last["action"], "success", "{last}");
    let finished = receiver.wait_for("post-finish", 1, WAIT).await;
    let storage = &finished[0]["Event"]["Upload"]["Storage"];
    assert_eq!(storage["Type"], "s3store");
    assert_eq!(storage["Bucket"], garage.bucket.as_str());
    let key = storage["Key"].as_str().expect("key");
    assert!(
        key.starts_with("imports/") && key.ends_with("c.bin"),
        "{key}"
    );
    assert_eq!(storage["Source"], origin.file_url());
    let object = garage.get_object(key).await.expect("object");
    assert_eq!(sha256_hex(&object), sha256_hex(&data));

    // Delivered and counted (the receiver saw it a moment before the sender counted it).
    tokio::time::timeout(WAIT, hooks.flush())
        .await
        .expect("flushed");
    let stats = hooks.stats();
    assert_eq!(stats.sent, 1, "{stats:?}");
    assert_eq!(stats.failed, 0, "{stats:?}");
}
