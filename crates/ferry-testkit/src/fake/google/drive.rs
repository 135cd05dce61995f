//! The fake Google's Drive v3 routes: `about`, `files` (a small `q` parser, paging,
//! `orderBy=folder,name`), `files/{id}` metadata and `alt=media` with `Range`,
//! `files/{id}/export` with the export cap, `drives` paging, and the credentialed thumbnail URL.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{DriveFile, FOLDER, G, Q, error};
use crate::fake::download;
use crate::fake::oauth::lock;

pub(super) async fn about(State(g): G, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    Json(json!({"user": {"emailAddress": g.email, "displayName": "Fake User"}})).into_response()
}

/// `'<id>' in parents and trashed=false` or `sharedWithMe and trashed=false`.
fn parse_q(q: &str) -> Option<Result<String, ()>> {
    let rest = q.trim().strip_suffix("and trashed=false")?.trim();
    if rest == "sharedWithMe" {
        return Some(Err(()));
    }
    let id = rest
        .strip_suffix("in parents")?
        .trim()
        .strip_prefix('\'')?
        .strip_suffix('\'')?;
    (!id.contains('\'')).then(|| Ok(id.to_owned()))
}

fn offset(q: &HashMap<String, String>) -> Option<usize> {
    match q.get("pageToken").filter(|t| !t.is_empty()) {
        None => Some(0),
        Some(t) => t.strip_prefix("o")?.parse().ok(),
    }
}

fn page_size(q: &HashMap<String, String>, default: usize, max: usize) -> usize {
    q.get("pageSize")
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
        .clamp(1, max)
}

pub(super) async fn files(State(g): G, Query(q): Q, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let Some(filter) = q.get("q").and_then(|q| parse_q(q)) else {
        return error(400, "Invalid Value", "invalid");
    };
    let Some(start) = offset(&q) else {
        return error(400, "Invalid Value", "invalidPageToken");
    };
    let size = page_size(&q, 100, 1000);
    let mut matching: Vec<DriveFile> = lock(&g.files)
        .iter()
        .filter(|f| match &filter {
            Ok(parent) => f.parents.iter().any(|p| p == parent),
            Err(()) => f.shared_with_me,
        })
        .cloned()
        .collect();
    if q.get("orderBy").map(String::as_str) == Some("folder,name") {
        matching.sort_by(|a, b| {
            (a.mime != FOLDER, a.name.to_lowercase())
                .cmp(&(b.mime != FOLDER, b.name.to_lowercase()))
        });
    }
    let page: Vec<Value> = matching
        .iter()
        .skip(start)
        .take(size)
        .map(|f| g.file_json(f))
        .collect();
    let mut answer = json!({"kind": "drive#fileList", "incompleteSearch": false, "files": page});
    if start + size < matching.len() {
        answer["nextPageToken"] = json!(format!("o{}", start + size));
    }
    Json(answer).into_response()
}

pub(super) async fn file(
    State(g): G,
    Path(id): Path<String>,
    Query(q): Q,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let Some(f) = g.find(&id) else {
        return error(404, &format!("File not found: {id}."), "notFound");
    };
    if q.get("alt").map(String::as_str) != Some("media") {
        return Json(g.file_json(&f)).into_response();
    }
    if f.mime.starts_with("application/vnd.google-apps.") {
        return error(
            403,
            "Only files with binary content can be downloaded. Use Export with Docs Editors files.",
            "fileNotDownloadable",
        );
    }
    download(f.content, &f.mime, &headers, &g.faults)
}

pub(super) async fn export(
    State(g): G,
    Path(id): Path<String>,
    Query(q): Q,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let Some(f) = g.find(&id) else {
        return error(404, &format!("File not found: {id}."), "notFound");
    };
    let expected = match f.mime.as_str() {
        "application/vnd.google-apps.document" => {
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        }
        "application/vnd.google-apps.spreadsheet" => {
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
        }
        "application/vnd.google-apps.presentation" => {
            "application/vnd.openxmlformats-officedocument.presentationml.presentation"
        }
        "application/vnd.google-apps.drawing" => "application/pdf",
        _ => {
            return error(
                403,
                "Export only supports Docs Editors files.",
                "fileNotExportable",
            );
        }
    };
    if q.get("mimeType").map(String::as_str) != Some(expected) {
        return error(
            400,
            "The requested conversion is not supported.",
            "badRequest",
        );
    }
    if f.content.len() as u64 > g.export_limit.load(Ordering::SeqCst) {
        return error(
            403,
            "This file is too large to be exported.",
            "exportSizeLimitExceeded",
        );
    }
    // Exports have no Range support and no length, like Google's.
    let mut resp = download(f.content, expected, &HeaderMap::new(), &g.faults);
    resp.headers_mut().remove(header::CONTENT_LENGTH);
    resp.headers_mut().remove(header::ACCEPT_RANGES);
    resp
}

pub(super) async fn drives(State(g): G, Query(q): Q, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let Some(start) = offset(&q) else {
        return error(400, "Invalid Value", "invalidPageToken");
    };
    let size = page_size(&q, 10, 100);
    let all = lock(&g.drives).clone();
    let page: Vec<Value> = all
        .iter()
        .skip(start)
        .take(size)
        .map(|(id, name)| json!({"kind": "drive#drive", "id": id, "name": name}))
        .collect();
    let mut answer = json!({"kind": "drive#driveList", "drives": page});
    if start + size < all.len() {
        answer["nextPageToken"] = json!(format!("o{}", start + size));
    }
    Json(answer).into_response()
}

pub(super) async fn thumbnail(State(g): G, Path(id): Path<String>, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let id = id.split('=').next().unwrap_or("");
    match g.find(id).filter(|f| f.thumbnail) {
        Some(f) => (
            [(header::CONTENT_TYPE, "image/png")],
            format!("PNG thumbnail of {}", f.id),
        )
            .into_response(),
        None => error(404, "no thumbnail", "notFound"),
    }
}
