//! Every S3 call is bounded: against a store that accepts the connection and then never reads
//! nor answers (the fault proxy stalled), an upload of a whole part, a small write and a read
//! each fail with an upstream error after the idle timeout instead of waiting forever.

use std::time::Duration;

use ferry_s3::{S3Bucket, S3Client, S3Error, S3Timeouts};
use ferry_testkit::origin::Sink;
use ferry_testkit::proxy::{FaultProxy, Mode};

/// The test's own bound: far over the client's idle timeout, far under "forever".
const BOUND: Duration = Duration::from_secs(20);

async fn hung_store() -> (FaultProxy, Sink, S3Client) {
    let sink = Sink::start().await;
    let proxy = FaultProxy::start(sink.addr).await;
    proxy.set_mode(Mode::Stall);
    let client = S3Client::new(S3Bucket {
        endpoint: proxy.base_url(),
        bucket: "hung".to_owned(),
        region: "us-east-1".to_owned(),
        access_key: "key".to_owned(),
        secret_key: "secret".to_owned().into(),
        force_path_style: true,
        key_prefix: String::new(),
    })
    .and_then(|c| {
        c.with_timeouts(S3Timeouts {
            connect: Duration::from_secs(1),
            idle: Duration::from_secs(1),
        })
    })
    .expect("client");
    (proxy, sink, client)
}

fn timed_out<T: std::fmt::Debug>(result: Result<Result<T, S3Error>, tokio::time::error::Elapsed>) {
    match result {
        Ok(Err(e @ S3Error::Upstream(_))) => {
            assert!(e.detail().contains("no progress for 1s"), "{}", e.detail());
        }
        other => panic!("expected an idle timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn a_part_upload_to_a_store_that_stopped_reading_fails_after_the_idle_timeout() {
    let (_proxy, _sink, client) = hung_store().await;
    let part = vec![7u8; 8 << 20];
    let sent = client.upload_part("k", "upload", 1, part.len() as u64, part);
    timed_out(tokio::time::timeout(BOUND, sent).await);
}

#[tokio::test]
async fn a_small_write_and_a_read_that_get_no_answer_fail_after_the_idle_timeout() {
    let (_proxy, _sink, client) = hung_store().await;
    timed_out(tokio::time::timeout(BOUND, client.put("k.info", b"{}".to_vec())).await);
    timed_out(tokio::time::timeout(BOUND, client.get_bytes("k.info")).await);
}
