//! The rate-limit checks each provider family runs against its fake (on a paused tokio clock,
//! so `Retry-After` waits take no real time): a listing limited twice succeeds after waiting
//! out both `Retry-After`s; a limit asking for more than the cap is a 429 at once, with
//! `Retry-After` and `{message, retryAfter}`; an import whose download is cut half-way and then
//! rate-limited (a 429 from the API, or a 503 with `Retry-After` from the download host) waits
//! in place (telling the socket it is waiting) and completes byte-exact.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use ferry_testkit::fake::Faults;
use ferry_testkit::sha256_hex;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::providers::{Env, get, post};

/// `/{p}/list/{path}` while the fake answers 429 with `Retry-After: 2` twice: 200 after both
/// waits, and no sooner.
pub async fn list_waits_out_retry_after(env: &Env, p: &str, path: &str, token: &str, f: &Faults) {
    f.retry_after.store(2, Ordering::SeqCst);
    f.too_many.store(2, Ordering::SeqCst);
    let start = Instant::now();
    let (status, body) = get(env, &format!("/{p}/list/{path}"), Some(token)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(f.too_many.load(Ordering::SeqCst), 0, "both 429s were met");
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(4),
        "Retry-After honoured: {waited:?}"
    );
}

/// `/{p}/list/{path}` while the fake asks for 120 s (over the 10 s cap): a 429 at once that
/// names the provider and carries the wait.
pub async fn list_over_the_cap_is_429(
    env: &Env,
    p: &str,
    name: &str,
    path: &str,
    token: &str,
    f: &Faults,
) {
    f.retry_after.store(120, Ordering::SeqCst);
    f.too_many.store(1, Ordering::SeqCst);
    let start = Instant::now();
    let r = env
        .http
        .get(env.companion.url(&format!("/{p}/list/{path}")))
        .header("uppy-auth-token", token)
        .send()
        .await
        .expect("list");
    assert_eq!(r.status(), 429);
    assert_eq!(
        r.headers().get("retry-after").and_then(|v| v.to_str().ok()),
        Some("120")
    );
    let body: Value = r.json().await.expect("json");
    assert_eq!(
        body,
        json!({"message": format!("{name} is limiting requests; retrying in 120 s"),
            "retryAfter": 120})
    );
    assert!(start.elapsed() < Duration::from_secs(10), "not waited for");
    f.too_many.store(0, Ordering::SeqCst);
}

/// Imports `id` (`data` its bytes) into tus with the download cut half-way and its reopening
/// rate-limited twice (`Retry-After: 2`): the socket says `waiting`, then the upload completes
/// byte-exact.
pub async fn import_waits_out_retry_after(
    env: &Env,
    p: &str,
    name: &str,
    id: &str,
    token: &str,
    f: &Faults,
    data: &[u8],
) {
    import_waits_out(env, p, name, id, token, f, &f.too_many, data).await;
}

/// As [`import_waits_out_retry_after`], but the download host itself answers the reopening
/// `503 Service Unavailable` with `Retry-After: 2`, twice (a throttled content host).
pub async fn import_waits_out_unavailable(
    env: &Env,
    p: &str,
    name: &str,
    id: &str,
    token: &str,
    f: &Faults,
    data: &[u8],
) {
    import_waits_out(env, p, name, id, token, f, &f.unavailable, data).await;
}

/// The import of `id` cut half-way, then its reopening limited twice through `limit`.
#[allow(clippy::too_many_arguments)]
async fn import_waits_out(
    env: &Env,
    p: &str,
    name: &str,
    id: &str,
    token: &str,
    f: &Faults,
    limit: &AtomicU32,
    data: &[u8],
) {
    f.cut_after.store(data.len() as u64 / 2, Ordering::SeqCst);
    let body = json!({"fileId": "x", "protocol": "tus", "endpoint": env.tus.endpoint(),
        "size": data.len(), "metadata": {"name": "f.bin", "type": "application/octet-stream"},
        "headers": {}});
    let (status, answer) = post(env, &format!("/{p}/get/{id}"), Some(token), body).await;
    assert_eq!(status, 200, "{answer}");
    // Opened: the limits meet the reopening after the cut.
    f.retry_after.store(2, Ordering::SeqCst);
    limit.store(2, Ordering::SeqCst);
    let start = Instant::now();
    let mut ws = super::socket(&env.companion, answer["token"].as_str().expect("token")).await;
    let (last, frames) = super::finish(&mut ws).await;
    assert_eq!(last["action"], "success", "{last}");
    let waiting: Vec<&Value> = frames.iter().filter(|f| f["action"] == "waiting").collect();
    assert!(!waiting.is_empty(), "a waiting frame: {frames:?}");
    assert_eq!(
        waiting[0]["payload"],
        json!({"retryAfter": 2, "message": format!("{name} is limiting requests; retrying in 2 s")})
    );
    assert_eq!(
        (
            f.cut_after.load(Ordering::SeqCst),
            limit.load(Ordering::SeqCst)
        ),
        (0, 0),
        "cut, then limited twice"
    );
    assert!(
        start.elapsed() >= Duration::from_secs(4),
        "Retry-After honoured"
    );
    let url = last["payload"]["url"].as_str().expect("url");
    assert_eq!(sha256_hex(&super::download(url).await), sha256_hex(data));
}
