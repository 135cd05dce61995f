//! The fake Dropbox's file routes: `files/list_folder` and `/continue` (cursor paging),
//! `auth/token/revoke`, and on the content host `files/download` and `files/get_thumbnail_v2`.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use bytes::Bytes;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{D, Dropbox, endpoint_error};
use crate::fake::download;
use crate::fake::oauth::lock;

/// Cursor: base64 of `ns|dir|offset|limit`.
fn cursor(ns: &str, dir: &str, offset: usize, limit: usize) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{ns}|{dir}|{offset}|{limit}"))
}

fn page(d: &Dropbox, ns: &str, dir: &str, offset: usize, limit: usize) -> Response {
    let Some(all) = d.children(ns, dir) else {
        return endpoint_error("path/not_found/..");
    };
    let end = (offset + limit).min(all.len());
    let entries = all.get(offset..end).unwrap_or_default().to_vec();
    Json(json!({"entries": entries, "cursor": cursor(ns, dir, end, limit), "has_more": end < all.len()}))
        .into_response()
}

pub(super) async fn list_folder(State(d): D, headers: HeaderMap, body: Bytes) -> Response {
    let ns = match d.gate(&headers) {
        Ok(ns) => ns,
        Err(r) => return r,
    };
    let Ok(arg) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "Error in call to API function \"files/list_folder\": request body: could not decode input as JSON").into_response();
    };
    let path = arg.get("path").and_then(Value::as_str).unwrap_or("/");
    if !(path.is_empty() || (path.starts_with('/') && !path.ends_with('/'))) {
        return (StatusCode::BAD_REQUEST, "Error in call to API function \"files/list_folder\": request body: path: 'x' did not match pattern").into_response();
    }
    let limit = arg
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(500)
        .clamp(1, 2000) as usize;
    page(&d, &ns, path, 0, limit)
}

pub(super) async fn list_continue(State(d): D, headers: HeaderMap, body: Bytes) -> Response {
    let ns = match d.gate(&headers) {
        Ok(ns) => ns,
        Err(r) => return r,
    };
    let raw = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("cursor").and_then(Value::as_str).map(str::to_owned))
        .and_then(|c| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(c)
                .ok()
        })
        .and_then(|b| String::from_utf8(b).ok());
    let parts: Option<(String, String, usize, usize)> = raw.and_then(|r| {
        let mut it = r.splitn(4, '|');
        Some((
            it.next()?.to_owned(),
            it.next()?.to_owned(),
            it.next()?.parse().ok()?,
            it.next()?.parse().ok()?,
        ))
    });
    match parts {
        Some((cns, dir, offset, limit)) if cns == ns => page(&d, &ns, &dir, offset, limit),
        _ => endpoint_error("reset/.."),
    }
}

pub(super) async fn revoke(State(d): D, headers: HeaderMap) -> Response {
    if let Err(r) = d.gate(&headers) {
        return r;
    }
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("")
        .to_owned();
    lock(&d.access).remove(&token);
    lock(&d.revoked).insert(token);
    Json(Value::Null).into_response()
}

/// The `Dropbox-API-Arg` header, parsed (it must be ASCII: non-ASCII arrives `\u` escaped).
fn arg(headers: &HeaderMap) -> Option<Value> {
    let raw = headers.get("dropbox-api-arg")?;
    if !raw.as_bytes().iter().all(u8::is_ascii) {
        return None;
    }
    serde_json::from_slice(raw.as_bytes()).ok()
}

pub(super) async fn file_download(State(d): D, headers: HeaderMap) -> Response {
    let ns = match d.gate(&headers) {
        Ok(ns) => ns,
        Err(r) => return r,
    };
    let Some(path) =
        arg(&headers).and_then(|a| a.get("path").and_then(Value::as_str).map(str::to_owned))
    else {
        return (
            StatusCode::BAD_REQUEST,
            "Error in call to API function \"files/download\": Bad Dropbox-API-Arg",
        )
            .into_response();
    };
    let (real, content) = match d.file(&ns, &path) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let meta = Dropbox::meta(&real, Some(content.len()));
    let mut resp = download(content, "application/octet-stream", &headers, &d.faults);
    if let Ok(v) = meta.to_string().parse() {
        resp.headers_mut().insert("dropbox-api-result", v);
    }
    resp
}

pub(super) async fn thumbnail(State(d): D, headers: HeaderMap) -> Response {
    let ns = match d.gate(&headers) {
        Ok(ns) => ns,
        Err(r) => return r,
    };
    let a = arg(&headers).unwrap_or(Value::Null);
    let path = a.pointer("/resource/path").and_then(Value::as_str);
    if a.pointer("/resource/.tag").and_then(Value::as_str) != Some("path") || path.is_none() {
        return (StatusCode::BAD_REQUEST, "Bad Dropbox-API-Arg").into_response();
    }
    let (real, content) = match d.file(&ns, path.unwrap_or_default()) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let image = thumbnail_of(&content);
    let meta = Dropbox::meta(&real, Some(content.len()));
    let mut resp = (
        [(header::CONTENT_TYPE, "application/octet-stream")],
        Bytes::from(image),
    )
        .into_response();
    if let Ok(v) = json!({"file_metadata": meta}).to_string().parse() {
        resp.headers_mut().insert("dropbox-api-result", v);
    }
    resp
}

/// The thumbnail bytes the fake serves for `content`.
pub fn thumbnail_of(content: &[u8]) -> Vec<u8> {
    [b"JPEGTHUMB:".as_slice(), &Sha256::digest(content)].concat()
}
