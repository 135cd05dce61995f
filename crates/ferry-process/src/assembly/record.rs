//! An Assembly as it is kept on disk: its state, instructions, fields, uploads and results.
//! [`crate::assembly::status`] turns it into the Assembly Status JSON clients read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::id::Id;
use crate::steps::Step;

/// Where an Assembly is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum State {
    /// Waiting for the expected uploads.
    #[serde(rename = "ASSEMBLY_UPLOADING")]
    Uploading,
    /// Its steps are running (or queued for a worker).
    #[serde(rename = "ASSEMBLY_EXECUTING")]
    Executing,
    /// Every step finished.
    #[serde(rename = "ASSEMBLY_COMPLETED")]
    Completed,
    /// Canceled by a client.
    #[serde(rename = "ASSEMBLY_CANCELED")]
    Canceled,
    /// The upload connection broke before all of the form arrived.
    #[serde(rename = "REQUEST_ABORTED")]
    Aborted,
    /// Ended with an error (`error` says which).
    #[serde(rename = "ASSEMBLY_FAILED")]
    Failed,
}

impl State {
    /// Whether the Assembly can still change (uploading or executing).
    pub fn is_busy(self) -> bool {
        matches!(self, State::Uploading | State::Executing)
    }

    /// The status's `ok` code (`None` for an error).
    pub fn ok_code(self) -> Option<&'static str> {
        Some(match self {
            State::Uploading => "ASSEMBLY_UPLOADING",
            State::Executing => "ASSEMBLY_EXECUTING",
            State::Completed => "ASSEMBLY_COMPLETED",
            State::Canceled => "ASSEMBLY_CANCELED",
            State::Aborted => "REQUEST_ABORTED",
            State::Failed => return None,
        })
    }
}

/// Why an Assembly failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The documented error code.
    pub code: String,
    /// The human message.
    pub message: String,
    /// The step that failed, if one did.
    pub step: Option<String>,
}

/// An upload or a result file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileRecord {
    pub id: Id,
    pub name: String,
    pub basename: String,
    pub ext: String,
    pub size: u64,
    pub mime: String,
    /// `image`, `video`, `audio`, `document`, `archive` or none.
    pub kind: Option<String>,
    pub field: String,
    pub original_id: Id,
    pub original_name: String,
    pub original_basename: String,
    /// The tus upload it came from, if any.
    pub tus_upload_url: Option<String>,
    pub meta: Map<String, Value>,
    pub user_meta: Map<String, Value>,
    /// Where the bytes are, relative to the Assembly's directory.
    pub path: String,
    /// The step that made it (`:original` for uploads).
    pub step: String,
    /// The URL it was imported from (`/http/import`).
    pub import_url: Option<String>,
    /// Where a store robot put it (`/s3/store`): the status's `url` and `ssl_url` instead of
    /// ferry's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl FileRecord {
    /// A new upload `name` of `size` bytes, stored at `uploads/{id}`.
    pub fn upload(id: Id, name: String, size: u64, mime: String, field: String) -> Self {
        let (basename, ext) = split_name(&name);
        Self {
            path: format!("uploads/{id}"),
            original_id: id.clone(),
            original_name: name.clone(),
            original_basename: basename.clone(),
            kind: kind_of(&mime),
            id,
            name,
            basename,
            ext,
            size,
            mime,
            field,
            tus_upload_url: None,
            meta: Map::new(),
            user_meta: Map::new(),
            step: crate::steps::ORIGINAL.to_owned(),
            import_url: None,
            url: None,
        }
    }

    /// A result of `step` made from `input`, named `name`, `size` bytes at `path`.
    pub fn derived(
        input: &FileRecord,
        step: &str,
        name: String,
        size: u64,
        mime: String,
        path: String,
        id: Id,
    ) -> Self {
        let (basename, ext) = split_name(&name);
        Self {
            kind: kind_of(&mime),
            id,
            name,
            basename,
            ext,
            size,
            mime,
            field: input.field.clone(),
            original_id: input.original_id.clone(),
            original_name: input.original_name.clone(),
            original_basename: input.original_basename.clone(),
            tus_upload_url: None,
            meta: Map::new(),
            user_meta: input.user_meta.clone(),
            path,
            step: step.to_owned(),
            import_url: input.import_url.clone(),
            url: None,
        }
    }
}

/// `photo.tar.gz` → (`photo.tar`, `gz`); no dot → no extension.
pub fn split_name(name: &str) -> (String, String) {
    match name.rsplit_once('.') {
        Some((base, ext)) if !base.is_empty() && !ext.is_empty() => {
            (base.to_owned(), ext.to_ascii_lowercase())
        }
        _ => (name.to_owned(), String::new()),
    }
}

/// Transloadit's file `type` for a MIME type.
pub fn kind_of(mime: &str) -> Option<String> {
    let top = mime.split('/').next().unwrap_or_default();
    let kind = match top {
        "image" | "video" | "audio" => top,
        _ if mime == "application/pdf"
            || mime.starts_with("text/")
            || mime.contains("document") =>
        {
            "document"
        }
        _ if matches!(
            mime,
            "application/zip"
                | "application/gzip"
                | "application/x-tar"
                | "application/x-7z-compressed"
        ) =>
        {
            "archive"
        }
        _ => return None,
    };
    Some(kind.to_owned())
}

/// A tus upload into the Assembly while it arrives (the status's `tus_uploads[]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TusUpload {
    /// The tus upload's URL (what `uploads[].tus_upload_url` names once it finished).
    pub upload_url: String,
    pub filename: String,
    pub fieldname: String,
    /// `Upload-Length`, unless deferred.
    pub size: Option<u64>,
    /// Bytes stored so far.
    pub offset: u64,
}

/// Everything kept about one Assembly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Assembly {
    pub id: Id,
    pub state: State,
    pub error: Option<Failure>,
    /// The request's params, without `auth` (never echoed: it may hold limits of the signer)
    /// and with store credentials redacted.
    pub params: Value,
    pub steps: Vec<Step>,
    pub fields: Map<String, Value>,
    pub template_id: Option<String>,
    pub notify_url: Option<String>,
    /// `null` until the notification was tried; then its outcome (`"successful"`, or the error).
    pub notify_status: Option<String>,
    /// Uploads the client announced (form files count against it too).
    pub expected_uploads: u64,
    pub bytes_expected: u64,
    pub bytes_received: u64,
    pub uploads: Vec<FileRecord>,
    /// Exported results per step, in step order.
    pub results: BTreeMap<String, Vec<FileRecord>>,
    /// RFC 3339 times.
    pub created: String,
    pub execution_start: Option<String>,
    pub finished: Option<String>,
    pub execution_duration: Option<f64>,
    /// Set when the Assembly was restarted after the server stopped while it ran.
    pub warnings: Vec<String>,
    /// Whether the uploads' `meta` was filled in (execution began).
    #[serde(default)]
    pub upload_meta_data_extracted: bool,
    /// Execution progress, saved while the Assembly runs (`progress_combined` in the status).
    #[serde(default)]
    pub execution_progress: Option<crate::live::progress::Snapshot>,
    /// The tus uploads that named this Assembly, as they started and progressed.
    #[serde(default)]
    pub tus_uploads: Vec<TusUpload>,
    /// The client that created it (`key@address`), for the per-client caps; never shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// When its files were deleted after the retention (RFC 3339); its status then answers
    /// `ASSEMBLY_EXPIRED`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expired: Option<String>,
}

impl Assembly {
    /// A new Assembly in `Uploading`.
    pub fn new(
        id: Id,
        params: Value,
        steps: Vec<Step>,
        fields: Map<String, Value>,
        expected_uploads: u64,
    ) -> Self {
        let template_id = params
            .get("template_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let notify_url = params
            .get("notify_url")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let mut shown = params;
        if let Value::Object(map) = &mut shown {
            map.remove("auth");
        }
        crate::robots::s3store::redact(&mut shown);
        Self {
            id,
            state: State::Uploading,
            error: None,
            params: shown,
            steps,
            fields,
            template_id,
            notify_url,
            notify_status: None,
            expected_uploads,
            bytes_expected: 0,
            bytes_received: 0,
            uploads: Vec::new(),
            results: BTreeMap::new(),
            created: jiff::Timestamp::now().to_string(),
            execution_start: None,
            finished: None,
            execution_duration: None,
            warnings: Vec::new(),
            upload_meta_data_extracted: false,
            execution_progress: None,
            tus_uploads: Vec::new(),
            client: None,
            expired: None,
        }
    }

    /// Whether every expected upload has arrived.
    pub fn uploads_done(&self) -> bool {
        self.uploads.len() as u64 >= self.expected_uploads
    }

    /// Ends the Assembly with `failure`.
    pub fn fail(&mut self, code: &str, message: String, step: Option<String>) {
        self.state = State::Failed;
        self.error = Some(Failure {
            code: code.to_owned(),
            message,
            step,
        });
        self.finish_clock();
    }

    /// Stamps the end time and the execution duration.
    pub fn finish_clock(&mut self) {
        let now = jiff::Timestamp::now();
        self.finished = Some(now.to_string());
        if let Some(start) = self
            .execution_start
            .as_deref()
            .and_then(|s| s.parse::<jiff::Timestamp>().ok())
        {
            let took = now.duration_since(start);
            self.execution_duration = Some(took.as_secs_f64());
        }
    }

    /// Finds a file (upload or exported result) by id.
    pub fn file(&self, id: &Id) -> Option<&FileRecord> {
        self.uploads
            .iter()
            .chain(self.results.values().flatten())
            .find(|f| &f.id == id)
    }
}
