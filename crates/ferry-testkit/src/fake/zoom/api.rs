//! The fake Zoom's recordings routes: `users/me/recordings` (a month's date range at most,
//! `next_page_token` paging), `meetings/{uuid}/recordings` (double-encoded UUIDs), each file's
//! `download_url` (a redirect to a pre-signed storage link) and the storage host (`Range`).

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use jiff::civil::Date;
use serde_json::{Value, json};

use super::super::oauth::lock;
use super::super::{download, found, random_hex};
use super::{Meeting, Q, Z, api_error};

pub(super) async fn recordings(State(z): Z, headers: HeaderMap, Query(q): Q) -> Response {
    if let Some(r) = z.gate(&headers, &q) {
        return r;
    }
    let date = |k: &str| q.get(k).and_then(|d| d.parse::<Date>().ok());
    let (Some(from), Some(to)) = (date("from"), date("to")) else {
        return api_error(400, 300, "Invalid from or to date.");
    };
    // Zoom answers at most a month per call.
    if to < from
        || from
            .checked_add(jiff::Span::new().months(1))
            .is_ok_and(|end| to >= end)
    {
        return api_error(400, 300, "The date range must be within one month.");
    }
    let size: usize = match q.get("page_size").map(|s| s.parse::<usize>()) {
        None => 30,
        Some(Ok(n)) if (1..=300).contains(&n) => n,
        Some(_) => return api_error(400, 300, "Invalid page_size."),
    };
    let start = match q.get("next_page_token").filter(|t| !t.is_empty()) {
        None => 0,
        Some(t) => match lock(&z.pages).get(t) {
            Some(n) => *n,
            None => return api_error(400, 300, "Invalid next_page_token."),
        },
    };
    lock(&z.ranges).push((from.to_string(), to.to_string()));
    let mut found: Vec<Meeting> = lock(&z.meetings)
        .iter()
        .filter(|m| {
            m.start_time
                .get(..10)
                .and_then(|d| d.parse::<Date>().ok())
                .is_some_and(|d| d >= from && d <= to)
        })
        .cloned()
        .collect();
    found.sort_by(|a, b| b.start_time.cmp(&a.start_time));
    let page: Vec<Value> = found
        .iter()
        .skip(start)
        .take(size)
        .map(|m| z.meeting_json(m))
        .collect();
    let next = if start + size < found.len() {
        let t = random_hex(12);
        lock(&z.pages).insert(t.clone(), start + size);
        t
    } else {
        String::new()
    };
    Json(
        json!({"from": from.to_string(), "to": to.to_string(), "page_size": size,
        "total_records": found.len(), "next_page_token": next, "meetings": page}),
    )
    .into_response()
}

pub(super) async fn meeting_recordings(
    State(z): Z,
    Path(raw): Path<String>,
    headers: HeaderMap,
    Query(q): Q,
) -> Response {
    if let Some(r) = z.gate(&headers, &q) {
        return r;
    }
    // The router decoded the segment once. Zoom asks UUIDs that start with `/` or hold `//`
    // double-encoded: encoded once, they reach it as paths it does not route.
    if raw.starts_with('/') || raw.contains("//") {
        return api_error(404, 3301, "This recording does not exist.");
    }
    let uuid = percent_encoding::percent_decode_str(&raw)
        .decode_utf8_lossy()
        .into_owned();
    match lock(&z.meetings).iter().find(|m| m.uuid == uuid) {
        Some(m) => Json(z.meeting_json(m)).into_response(),
        None => api_error(404, 3301, "This recording does not exist."),
    }
}

/// A file's `download_url`: with a token, a redirect to its pre-signed storage URL.
pub(super) async fn rec_download(
    State(z): Z,
    Path(id): Path<String>,
    headers: HeaderMap,
    Query(q): Q,
) -> Response {
    if let Some(r) = z.gate(&headers, &q) {
        return r;
    }
    let known = lock(&z.meetings)
        .iter()
        .any(|m| m.files.iter().any(|f| f.id == id));
    if !known {
        return api_error(404, 3301, "This recording does not exist.");
    }
    let link = random_hex(12);
    lock(&z.links).insert(link.clone(), id);
    found(&format!("{}/storage/{link}", z.base()))
}

pub(super) async fn storage(State(z): Z, Path(link): Path<String>, headers: HeaderMap) -> Response {
    let Some(id) = lock(&z.links).get(&link).cloned() else {
        return (StatusCode::FORBIDDEN, "expired link").into_response();
    };
    let file = lock(&z.meetings)
        .iter()
        .flat_map(|m| m.files.iter())
        .find(|f| f.id == id)
        .cloned();
    match file {
        Some(f) => download(f.content, "video/mp4", &headers, &z.faults),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
