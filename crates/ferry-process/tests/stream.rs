//! The update stream (`GET /assemblies/{id}/stream`) over real HTTP, read as server-sent events:
//! a late client gets the whole state first; a live one gets each change as it is saved; a
//! client reconnecting with `Last-Event-ID` (also to a restarted server) gets exactly what it
//! missed; failures end with `assembly_error`; listeners per Assembly, the stream's lifetime and
//! its heartbeat are bounded.

mod common;

use std::time::Duration;

use common::*;
use ferry_process::assembly::record::FileRecord;
use ferry_process::id::Id;
use ferry_process::live::StreamLimits;
use futures_util::StreamExt;
use serde_json::{Value, json};

/// One server-sent event as a client sees it.
#[derive(Debug, Default, Clone, PartialEq)]
struct Sse {
    id: Option<String>,
    event: Option<String>,
    data: String,
    comment: bool,
}

/// An open stream being read.
struct Reader {
    body: std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    buf: String,
}

impl Reader {
    /// The next event (comments included); `None` once the server ended the stream.
    async fn next(&mut self) -> Option<Sse> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut ev = Sse::default();
                for line in block.lines() {
                    if let Some(rest) = line.strip_prefix(':') {
                        let _ = rest;
                        ev.comment = true;
                    } else if let Some((k, v)) = line.split_once(':') {
                        let v = v.strip_prefix(' ').unwrap_or(v).to_owned();
                        match k {
                            "id" => ev.id = Some(v),
                            "event" => ev.event = Some(v),
                            "data" => ev.data = v,
                            _ => {}
                        }
                    }
                }
                return Some(ev);
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), self.body.next())
                .await
                .expect("the stream stalled")?
                .expect("chunk");
            self.buf
                .push_str(std::str::from_utf8(&chunk).expect("utf-8"));
        }
    }

    /// The next event that is not a heartbeat.
    async fn next_update(&mut self) -> Option<Sse> {
        loop {
            match self.next().await? {
                e if e.comment && e.data.is_empty() && e.event.is_none() => continue,
                e => return Some(e),
            }
        }
    }

    /// Every update until the server ends the stream.
    async fn rest(&mut self) -> Vec<Sse> {
        let mut out = Vec::new();
        while let Some(e) = self.next_update().await {
            out.push(e);
        }
        out
    }
}

/// Opens the stream of `id`, with `last` as `Last-Event-ID`; the status code, and the reader
/// when it is 200.
async fn open(base: &str, id: &str, last: Option<&str>) -> (u16, Option<Reader>, Value) {
    let mut req = reqwest::Client::new()
        .get(format!("{base}/assemblies/{id}/stream?assembly={id}"))
        .header("accept", "text/event-stream");
    if let Some(last) = last {
        req = req.header("last-event-id", last);
    }
    let res = req.send().await.expect("get stream");
    let code = res.status().as_u16();
    if code != 200 {
        let body = res.json().await.unwrap_or(Value::Null);
        return (code, None, body);
    }
    assert_eq!(
        res.headers()["content-type"].to_str().ok(),
        Some("text/event-stream")
    );
    let reader = Reader {
        body: Box::pin(res.bytes_stream()),
        buf: String::new(),
    };
    (code, Some(reader), Value::Null)
}

/// `(event or message name, payload)` of each update.
fn names(events: &[Sse]) -> Vec<(String, Value)> {
    events
        .iter()
        .map(|e| match &e.event {
            Some(name) => (name.clone(), serde_json::from_str(&e.data).expect("json")),
            None => (e.data.clone(), Value::Null),
        })
        .collect()
}

/// Creates an Assembly that waits for `expected` uploads and exports a `/file/filter` step.
async fn waiting(base: &str, expected: u32) -> String {
    let p = params(json!({
        ":original": {"robot": "/upload/handle"},
        "kept": {"robot": "/file/filter", "use": ":original", "accepts": [["${file.size}", ">", "0"]]},
    }));
    let f = form(&p, &[]).text("num_expected_upload_files", expected.to_string());
    let (code, created) = create(base, f).await;
    assert_eq!(
        (code, created["ok"].as_str()),
        (200, Some("ASSEMBLY_UPLOADING")),
        "{created}"
    );
    created["assembly_id"].as_str().expect("id").to_owned()
}

/// What the tus bridge does for a finished upload: the bytes under the Assembly's `uploads/`,
/// then the upload recorded.
async fn upload(s: &Running, dir: &std::path::Path, id: &str, name: &str, bytes: &[u8]) -> String {
    let file_id = Id::random();
    let path = dir
        .join("assemblies")
        .join(id)
        .join("uploads")
        .join(file_id.as_str());
    tokio::fs::write(&path, bytes).await.expect("write");
    let rec = FileRecord::upload(
        file_id.clone(),
        name.to_owned(),
        bytes.len() as u64,
        "text/plain".to_owned(),
        "file".to_owned(),
    );
    let added = s
        .service
        .add_upload(&Id::parse(id).expect("id"), rec)
        .await
        .expect("add");
    assert!(added);
    file_id.to_string()
}

/// Limits under which only a poke (a saved change) wakes a stream.
fn poke_only() -> StreamLimits {
    StreamLimits {
        refresh: Duration::from_secs(3600),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_late_client_gets_the_whole_state_first_and_the_stream_ends() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let p = params(json!({
        ":original": {"robot": "/upload/handle"},
        "kept": {"robot": "/file/filter", "use": ":original", "accepts": [["${file.name}", "regex", "a"]]},
    }));
    let (_, created) = create(&s.base, form(&p, &[("a.txt", b"aaa"), ("b.txt", b"bbb")])).await;
    let id = created["assembly_id"].as_str().expect("id").to_owned();
    let done = settle(&format!("{}/assemblies/{id}", s.base)).await;
    assert_eq!(done["ok"], "ASSEMBLY_COMPLETED");

    let (code, reader, _) = open(&s.base, &id, None).await;
    assert_eq!(code, 200);
    let events = reader.expect("reader").rest().await;
    let got = names(&events);
    let kinds: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "assembly_upload_finished",
            "assembly_upload_finished",
            "assembly_uploading_finished",
            "assembly_upload_meta_data_extracted",
            "assembly_result_finished",
            "assembly_finished",
        ]
    );
    // The payloads are the status's own file objects.
    assert_eq!(got[0].1, done["uploads"][0]);
    assert_eq!(got[1].1, done["uploads"][1]);
    assert_eq!(got[4].1, json!(["kept", done["results"]["kept"][0]]));
    assert_eq!(got[4].1[1]["name"], "a.txt");
    // Every update has an id; the first says how soon to reconnect.
    assert!(events.iter().all(|e| e.id.is_some()));
    // A client that saw the end is told there is nothing more (an EventSource stops on 204).
    let last = events.last().and_then(|e| e.id.clone()).expect("last id");
    let (code, _, _) = open(&s.base, &id, Some(&last)).await;
    assert_eq!(code, 204);
    let (code, _, body) = open(&s.base, "0123456789abcdef0123456789abcdef", None).await;
    assert_eq!(
        (code, body["error"].as_str()),
        (404, Some("ASSEMBLY_NOT_FOUND"))
    );
}

#[tokio::test]
async fn a_live_client_gets_each_change_as_it_is_saved() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    s.service.live().set_limits(poke_only());
    let id = waiting(&s.base, 2).await;
    let (code, reader, _) = open(&s.base, &id, None).await;
    assert_eq!(code, 200);
    let mut reader = reader.expect("reader");

    let first = upload(&s, dir.path(), &id, "one.txt", b"1").await;
    let e = reader.next_update().await.expect("an update");
    assert_eq!(e.event.as_deref(), Some("assembly_upload_finished"));
    let file: Value = serde_json::from_str(&e.data).expect("json");
    assert_eq!(
        (file["id"].as_str(), file["name"].as_str()),
        (Some(first.as_str()), Some("one.txt"))
    );

    upload(&s, dir.path(), &id, "two.txt", b"22").await;
    let kinds: Vec<String> = names(&reader.rest().await)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        kinds,
        [
            "assembly_upload_finished",
            "assembly_uploading_finished",
            "assembly_upload_meta_data_extracted",
            "assembly_result_finished",
            "assembly_result_finished",
            "assembly_finished",
        ]
    );
}

#[tokio::test]
async fn a_client_reconnecting_to_a_restarted_server_gets_exactly_what_it_missed() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    s.service.live().set_limits(poke_only());
    let id = waiting(&s.base, 2).await;
    let (_, reader, _) = open(&s.base, &id, None).await;
    let mut reader = reader.expect("reader");
    upload(&s, dir.path(), &id, "one.txt", b"1").await;
    let seen = reader.next_update().await.expect("first upload");
    let last = seen.id.clone().expect("id");
    drop(reader);
    drop(s);

    // A new server on the same data: the second upload arrives while the client is away.
    let s = start(config(dir.path(), false)).await;
    upload(&s, dir.path(), &id, "two.txt", b"22").await;
    settle(&format!("{}/assemblies/{id}", s.base)).await;
    let (code, reader, _) = open(&s.base, &id, Some(&last)).await;
    assert_eq!(code, 200);
    let got = names(&reader.expect("reader").rest().await);
    let kinds: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "assembly_upload_finished",
            "assembly_uploading_finished",
            "assembly_upload_meta_data_extracted",
            "assembly_result_finished",
            "assembly_result_finished",
            "assembly_finished",
        ],
        "the first upload is not sent twice"
    );
    assert_eq!(got[0].1["name"], "two.txt");
}

#[tokio::test]
async fn a_failed_assembly_ends_its_stream_with_assembly_error() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let p = params(json!({
        "strict": {"robot": "/file/filter", "use": ":original", "accepts": [["${file.size}", ">", "100"]],
                   "error_on_decline": true, "error_msg": "Too small."},
    }));
    let (_, created) = create(&s.base, form(&p, &[("a.txt", b"aaa")])).await;
    let id = created["assembly_id"].as_str().expect("id").to_owned();
    let (_, reader, _) = open(&s.base, &id, None).await;
    let got = names(&reader.expect("reader").rest().await);
    let (name, data) = got.last().expect("an end");
    assert_eq!(name, "assembly_error");
    assert_eq!(
        (data["error"].as_str(), data["message"].as_str()),
        (Some("FILE_FILTER_DECLINED_FILE"), Some("Too small."))
    );
    assert!(got.iter().all(|(n, _)| n != "assembly_finished"));
}

#[tokio::test]
async fn listeners_lifetime_and_heartbeat_are_bounded() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    s.service.live().set_limits(StreamLimits {
        listeners: 1,
        lifetime: Duration::from_millis(300),
        heartbeat: Duration::from_millis(50),
        refresh: Duration::from_secs(3600),
        ..Default::default()
    });
    let id = waiting(&s.base, 1).await;
    let (code, reader, _) = open(&s.base, &id, None).await;
    assert_eq!(code, 200);
    let mut reader = reader.expect("reader");
    let (code, _, body) = open(&s.base, &id, None).await;
    assert_eq!(
        (code, body["error"].as_str()),
        (429, Some("RATE_LIMIT_REACHED"))
    );

    // Nothing happens: heartbeats, then the server ends the stream at its lifetime.
    let mut heartbeats = 0;
    while let Some(e) = reader.next().await {
        assert!(e.comment && e.event.is_none() && e.data.is_empty(), "{e:?}");
        heartbeats += 1;
    }
    assert!(heartbeats >= 1, "no heartbeat before the end");
    // The slot was released with the stream: the client reconnects and carries on.
    let (code, reader, _) = open(&s.base, &id, None).await;
    assert_eq!(code, 200);
    let mut reader = reader.expect("reader");
    upload(&s, dir.path(), &id, "one.txt", b"1").await;
    let e = reader.next_update().await.expect("an update");
    assert_eq!(e.event.as_deref(), Some("assembly_upload_finished"));
}

#[tokio::test]
async fn execution_progress_is_in_the_status_and_streamed_when_asked_for() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    s.service.live().set_limits(StreamLimits {
        progress: Duration::from_millis(20),
        ..Default::default()
    });
    // Three steps: two end at once, the import hangs on its origin, so the figure stays at 2/3.
    let (origin, _events) = origin(b"").await;
    let expires = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1);
    let p = json!({
        "auth": {"key": KEY, "expires": expires.to_string()},
        "emit_execution_progress": true,
        "steps": {
            ":original": {"robot": "/upload/handle"},
            "kept": {"robot": "/file/filter", "use": ":original", "accepts": [["${file.size}", ">", "0"]]},
            "slow": {"robot": "/http/import", "url": format!("http://{origin}/hang")},
        },
    })
    .to_string();
    let (_, created) = create(&s.base, form(&p, &[("a.txt", b"aaa")])).await;
    let id = created["assembly_id"].as_str().expect("id").to_owned();
    let url = format!("{}/assemblies/{id}", s.base);
    let (_, reader, _) = open(&s.base, &id, None).await;
    let mut reader = reader.expect("reader");
    let mut seen = Vec::new();
    loop {
        let e = reader.next_update().await.expect("an update");
        if e.event.as_deref() != Some("assembly_execution_progress") {
            continue;
        }
        let data: Value = serde_json::from_str(&e.data).expect("json");
        let combined = data["progress_combined"].as_f64().expect("a number");
        seen.push(combined);
        if combined >= 66.7 {
            assert_eq!(combined, 66.7, "{data}");
            let per = data["progress_per_original_file"]
                .as_array()
                .expect("per file");
            assert_eq!(per.len(), 1);
            assert_eq!(per[0]["progress"], 66.7);
            assert_eq!(per[0]["original_id"], created_upload(&url).await);
            break;
        }
    }
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    let status: Value = reqwest::get(&url)
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(status["ok"], "ASSEMBLY_EXECUTING");
    assert_eq!(status["progress_combined"], 66.7);
    reqwest::Client::new()
        .delete(&url)
        .send()
        .await
        .expect("cancel");
}

#[tokio::test]
async fn a_completed_assembly_asked_for_progress_streams_its_100_before_the_end() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let expires = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1);
    let p = json!({
        "auth": {"key": KEY, "expires": expires.to_string()},
        "emit_execution_progress": true,
        "steps": {"kept": {"robot": "/file/filter", "use": ":original"}},
    })
    .to_string();
    let (_, created) = create(&s.base, form(&p, &[("a.txt", b"aaa")])).await;
    let id = created["assembly_id"].as_str().expect("id").to_owned();
    let done = settle(&format!("{}/assemblies/{id}", s.base)).await;
    let (_, reader, _) = open(&s.base, &id, None).await;
    let got = names(&reader.expect("reader").rest().await);
    let n = got.len();
    assert!(n >= 2, "{got:?}");
    assert_eq!(got[n - 1].0, "assembly_finished");
    assert_eq!(got[n - 2].0, "assembly_execution_progress");
    assert_eq!(
        got[n - 2].1,
        json!({"progress_combined": 100.0,
               "progress_per_original_file": [{"original_id": done["uploads"][0]["id"], "progress": 100.0}]})
    );
}

/// The id of the first upload of the Assembly at `url`.
async fn created_upload(url: &str) -> Value {
    let status: Value = reqwest::get(url)
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    status["uploads"][0]["id"].clone()
}

#[tokio::test]
async fn a_completed_assembly_reports_all_of_its_progress_and_streams_none_unasked() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let id = waiting(&s.base, 1).await;
    let (_, reader, _) = open(&s.base, &id, None).await;
    let mut reader = reader.expect("reader");
    upload(&s, dir.path(), &id, "one.txt", b"1").await;
    let kinds: Vec<String> = names(&reader.rest().await)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(
        !kinds.iter().any(|k| k == "assembly_execution_progress"),
        "{kinds:?}"
    );
    let done = settle(&format!("{}/assemblies/{id}", s.base)).await;
    assert_eq!(done["progress_combined"], 100.0);
    assert_eq!(
        done["progress_per_original_file"],
        json!([{"original_id": done["uploads"][0]["id"], "progress": 100.0}])
    );
}

#[tokio::test]
async fn a_page_of_a_configured_origin_may_listen_and_resume() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let id = waiting(&s.base, 1).await;
    let url = format!("{}/assemblies/{id}/stream", s.base);
    // An EventSource resuming sends Last-Event-ID, which a cross-origin page may have to preflight.
    let preflight = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, &url)
        .header("Origin", "https://app.example")
        .header("Access-Control-Request-Method", "GET")
        .header("Access-Control-Request-Headers", "last-event-id")
        .send()
        .await
        .expect("options");
    let allowed = preflight.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap_or_default()
        .to_owned();
    assert!(allowed.contains("last-event-id"), "{allowed}");
    let res = reqwest::Client::new()
        .get(&url)
        .header("Origin", "https://app.example")
        .header("accept", "text/event-stream")
        .send()
        .await
        .expect("get");
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.headers()["access-control-allow-origin"].to_str().ok(),
        Some("https://app.example")
    );
}
