//! The fake Box's API 2.0 routes (`users/me`, folder items with offset and marker paging,
//! file metadata, `content` as a redirect, thumbnails) and the pre-authenticated download host.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{B, BoxItem, MAX_OFFSET, Q, error, not_found};
use crate::fake::oauth::lock;
use crate::fake::{download, found, random_hex};

pub(super) async fn me(State(b): B, headers: HeaderMap) -> Response {
    if let Some(r) = b.gate(&headers) {
        return r;
    }
    Json(
        json!({"type": "user", "id": "11446498", "name": "Fake Box User", "login": b.login,
        "status": "active"}),
    )
    .into_response()
}

/// A numeric query parameter; the error is Box's message for a malformed one.
fn number(q: &HashMap<String, String>, key: &str) -> Result<Option<usize>, String> {
    match q.get(key) {
        None => Ok(None),
        Some(v) => v
            .parse()
            .map(Some)
            .map_err(|_| format!("Invalid value '{v}' for '{key}'")),
    }
}

pub(super) async fn folder_items(
    State(b): B,
    Path(id): Path<String>,
    Query(q): Q,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = b.gate(&headers) {
        return r;
    }
    if id != "0" && b.find(&id).is_none_or(|f| f.kind != "folder") {
        return not_found();
    }
    let limit = match number(&q, "limit") {
        Ok(l) => l.unwrap_or(100).clamp(1, 1000),
        Err(m) => return error(400, "bad_request", &m),
    };
    let mut children: Vec<BoxItem> = lock(&b.items)
        .iter()
        .filter(|i| i.parent == id)
        .cloned()
        .collect();
    children.sort_by(|a, c| {
        (a.kind != "folder", a.name.to_lowercase())
            .cmp(&(c.kind != "folder", c.name.to_lowercase()))
    });
    let fields = q.get("fields").map(String::as_str);
    let marker_paging = q.get("usemarker").map(String::as_str) == Some("true");
    let start = if marker_paging {
        match q.get("marker").filter(|m| !m.is_empty()) {
            None => 0,
            Some(m) => match m.strip_prefix("mk").and_then(|n| n.parse().ok()) {
                Some(n) => n,
                None => return error(400, "bad_request", "Invalid marker"),
            },
        }
    } else {
        match number(&q, "offset") {
            Ok(o) => o.unwrap_or(0),
            Err(m) => return error(400, "bad_request", &m),
        }
    };
    if !marker_paging && start > MAX_OFFSET {
        return error(
            400,
            "bad_request",
            &format!(
                "Invalid value '{start}'. The offset must not exceed the maximum offset of {MAX_OFFSET}"
            ),
        );
    }
    let entries: Vec<Value> = children
        .iter()
        .skip(start)
        .take(limit)
        .map(|i| b.item_json(i, fields))
        .collect();
    let answer = if marker_paging {
        let next = (start + limit < children.len()).then(|| format!("mk{}", start + limit));
        json!({"entries": entries, "limit": limit, "next_marker": next})
    } else {
        json!({"total_count": children.len(), "entries": entries, "offset": start, "limit": limit,
            "order": [{"by": "type", "direction": "ASC"}, {"by": "name", "direction": "ASC"}]})
    };
    Json(answer).into_response()
}

/// `files/{id}` (metadata), `files/{id}/content`, `files/{id}/thumbnail.{jpg,png}`.
pub(super) async fn file(
    State(b): B,
    Path(id): Path<String>,
    Query(q): Q,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = b.gate(&headers) {
        return r;
    }
    match b.find(&id).filter(|f| f.kind == "file") {
        Some(f) => Json(b.item_json(&f, q.get("fields").map(String::as_str))).into_response(),
        None => not_found(),
    }
}

pub(super) async fn file_part(
    State(b): B,
    Path((id, part)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = b.gate(&headers) {
        return r;
    }
    let Some(f) = b.find(&id).filter(|f| f.kind == "file") else {
        return not_found();
    };
    match part.as_str() {
        "content" => {
            let link = random_hex(12);
            lock(&b.links).insert(link.clone(), f.id);
            found(&format!("{}/dl/{link}/download", b.base()))
        }
        "thumbnail.jpg" | "thumbnail.png" => {
            let placeholder = format!("{}/placeholder.png", b.base());
            if !is_image(&f.name) {
                return found(&placeholder);
            }
            if b.thumbnail_pending.load(Ordering::SeqCst) {
                return (
                    StatusCode::ACCEPTED,
                    [
                        (header::LOCATION, placeholder),
                        (header::RETRY_AFTER, "2".to_owned()),
                    ],
                )
                    .into_response();
            }
            let kind = if part.ends_with("png") {
                "image/png"
            } else {
                "image/jpeg"
            };
            (
                [(header::CONTENT_TYPE, kind)],
                format!("thumbnail of {}", f.id),
            )
                .into_response()
        }
        _ => not_found(),
    }
}

fn is_image(name: &str) -> bool {
    let lower = name.to_lowercase();
    [".jpg", ".jpeg", ".png", ".gif", ".mp4", ".mov"]
        .iter()
        .any(|e| lower.ends_with(e))
}

/// The pre-authenticated download URL (Box's `dl.boxcloud.com`): no bearer token.
pub(super) async fn dl(State(b): B, Path(link): Path<String>, headers: HeaderMap) -> Response {
    let Some(id) = lock(&b.links).get(&link).cloned() else {
        return (StatusCode::FORBIDDEN, "expired download link").into_response();
    };
    match b.find(&id) {
        Some(f) => download(f.content, "application/octet-stream", &headers, &b.faults),
        None => not_found(),
    }
}

pub(super) async fn placeholder() -> Response {
    ([(header::CONTENT_TYPE, "image/png")], "placeholder").into_response()
}
