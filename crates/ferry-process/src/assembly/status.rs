//! The Assembly Status JSON, one format for create answers, polls and notifications, with the
//! keys Uppy's plugin and the Node SDK read: `ok` or `error`/`message`, `assembly_id`,
//! `assembly_url` and `assembly_ssl_url` (both: the SDK requires them), `tus_url`,
//! `websocket_url`/`update_stream_url`, `uploads: []` and `results: {}` from the first answer on
//! (Uppy diffs them), byte counters (with tus uploads still arriving), execution progress (`progress_combined`,
//! `progress_per_original_file`) once the Assembly runs, and file objects with `id`, `url`,
//! `ssl_url`, `meta`.

use serde_json::{Map, Value, json};

use super::record::{Assembly, FileRecord};

/// The URLs of the service as clients reach it.
#[derive(Clone, Debug)]
pub struct Urls {
    /// The origin, e.g. `http://127.0.0.1:3020` (no trailing slash).
    pub base: String,
    /// The tus endpoint uploads go to (`{base}/files/`).
    pub tus: String,
}

impl Urls {
    /// `{base}/assemblies/{id}`.
    pub fn assembly(&self, id: &str) -> String {
        format!("{}/assemblies/{id}", self.base)
    }
}

/// The status of `a`.
pub fn status(a: &Assembly, urls: &Urls) -> Value {
    let url = urls.assembly(a.id.as_str());
    let file = |f: &FileRecord| file_json(f, &url);
    let results: Map<String, Value> = a
        .results
        .iter()
        .map(|(step, files)| (step.clone(), Value::Array(files.iter().map(file).collect())))
        .collect();
    let mut out = json!({
        "assembly_id": a.id,
        "assembly_url": url,
        "assembly_ssl_url": url,
        "tus_url": urls.tus,
        "websocket_url": format!("{url}/stream"),
        "update_stream_url": format!("{url}/stream"),
        "bytes_received": a.bytes_received,
        "bytes_expected": a.bytes_expected,
        "expected_tus_uploads": a.expected_uploads,
        "num_input_files": a.uploads.len(),
        "fields": a.fields,
        "params": a.params.to_string(),
        "template_id": a.template_id,
        "notify_url": a.notify_url,
        "notify_status": a.notify_status,
        "uploads": a.uploads.iter().map(file).collect::<Vec<_>>(),
        "results": results,
        "warnings": a.warnings,
        "execution_start": a.execution_start,
        "execution_duration": a.execution_duration,
        "last_job_completed": a.finished,
        "start_date": a.created,
        "upload_meta_data_extracted": a.upload_meta_data_extracted,
    });
    let Value::Object(map) = &mut out else {
        return out;
    };
    tus_counters(a, map);
    if let Some(p) = &a.execution_progress {
        let (combined, per) = progress_json(p);
        map.insert("progress_combined".into(), combined);
        map.insert("progress_per_original_file".into(), per);
    }
    match (a.state.ok_code(), &a.error) {
        (Some(ok), _) => {
            map.insert("ok".into(), json!(ok));
        }
        (None, Some(e)) => {
            map.insert("error".into(), json!(e.code));
            map.insert("message".into(), json!(e.message));
            map.insert("reason".into(), json!(e.message));
            if let Some(step) = &e.step {
                map.insert("step".into(), json!(step));
            }
        }
        (None, None) => {
            map.insert("error".into(), json!("ASSEMBLY_CRASHED"));
        }
    }
    out
}

/// `tus_uploads[]`, `started_tus_uploads`, `finished_tus_uploads`, and the bytes of uploads still
/// arriving added to `bytes_received`/`bytes_expected` (finished ones are counted there already).
fn tus_counters(a: &Assembly, map: &mut Map<String, Value>) {
    let mut finished_n = 0;
    let (mut received, mut expected) = (a.bytes_received, a.bytes_expected);
    let list: Vec<Value> = a
        .tus_uploads
        .iter()
        .map(|t| {
            let finished = a
                .uploads
                .iter()
                .any(|u| u.tus_upload_url.as_deref() == Some(t.upload_url.as_str()));
            if finished {
                finished_n += 1;
            } else {
                received += t.offset;
                expected += t.size.unwrap_or(t.offset);
            }
            json!({
                "filename": t.filename,
                "fieldname": t.fieldname,
                // A number, as clients' schemas want; a deferred length is known only up to the offset.
                "size": t.size.unwrap_or(t.offset),
                "offset": if finished { t.size.unwrap_or(t.offset) } else { t.offset },
                "finished": finished,
                "upload_url": t.upload_url,
            })
        })
        .collect();
    map.insert("started_tus_uploads".into(), json!(list.len()));
    map.insert("finished_tus_uploads".into(), json!(finished_n));
    map.insert("tus_uploads".into(), Value::Array(list));
    map.insert("bytes_received".into(), json!(received));
    map.insert("bytes_expected".into(), json!(expected));
}

/// `progress_combined` and `progress_per_original_file` of `p`, as Transloadit's
/// `assembly_execution_progress` event and status carry them.
pub fn progress_json(p: &crate::live::progress::Snapshot) -> (Value, Value) {
    let per = p
        .per_original
        .iter()
        .map(|(id, progress)| json!({"original_id": id, "progress": progress}))
        .collect();
    (json!(p.combined), Value::Array(per))
}

/// A file object; its `url` serves the bytes (`{assembly}/files/{id}`).
pub fn file_json(f: &FileRecord, assembly_url: &str) -> Value {
    let url = f
        .url
        .clone()
        .unwrap_or_else(|| format!("{assembly_url}/files/{}", f.id));
    let is_upload = f.step == crate::steps::ORIGINAL;
    let mut out = json!({
        "id": f.id,
        "name": f.name,
        "basename": f.basename,
        "ext": f.ext,
        "size": f.size,
        "mime": f.mime,
        "type": f.kind,
        "field": f.field,
        "original_id": f.original_id,
        "original_name": f.original_name,
        "original_basename": f.original_basename,
        "url": url,
        "ssl_url": url,
        "is_tus_file": f.tus_upload_url.is_some(),
        "tus_upload_url": f.tus_upload_url,
        "meta": f.meta,
        "user_meta": f.user_meta,
        "md5hash": null,
        "original_path": "/",
        "original_md5hash": null,
        "from_batch_import": false,
        "queue": null,
        "is_temp_url": !is_upload,
    });
    // The SDK's schema takes `import_url` as a string when present, never null.
    if let (Some(u), Value::Object(map)) = (&f.import_url, &mut out) {
        map.insert("import_url".into(), json!(u));
    }
    out
}
