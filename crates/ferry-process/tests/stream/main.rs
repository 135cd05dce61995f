//! The update stream (`GET /assemblies/{id}/stream`) over real HTTP, read as server-sent events:
//! a late client gets the whole state first; a live one gets each change as it is saved; a
//! client reconnecting with `Last-Event-ID` (also to a restarted server) gets exactly what it
//! missed; failures end with `assembly_error`; listeners per Assembly, the stream's lifetime and
//! its heartbeat are bounded.

#[path = "../common/mod.rs"]
mod common;
mod progress;
mod updates;

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
