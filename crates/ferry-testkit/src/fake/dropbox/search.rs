//! The fake Dropbox's `files/search_v2` and `files/search/continue_v2`: a case-blind match of
//! the query against names under `options.path` (files and the folders they imply), pages of
//! `options.max_results` with a cursor, in Dropbox's `matches[].metadata.metadata` shape.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use bytes::Bytes;
use serde_json::{Value, json};

use super::{D, Dropbox, endpoint_error};

/// Every entry under `dir` of `ns` whose name contains `query` (case-blind), by path.
fn matches(d: &Dropbox, ns: &str, dir: &str, query: &str) -> Option<Vec<Value>> {
    let needle = query.to_lowercase();
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    let mut first = true;
    while let Some(folder) = stack.pop() {
        let children = d.children(ns, &folder);
        let Some(children) = children else {
            if first {
                return None;
            }
            continue;
        };
        first = false;
        for c in children {
            let path = c["path_display"].as_str().unwrap_or_default().to_owned();
            if c[".tag"] == "folder" {
                stack.push(path.clone());
            }
            if c["name"]
                .as_str()
                .unwrap_or_default()
                .to_lowercase()
                .contains(&needle)
            {
                out.insert(path.to_lowercase(), c);
            }
        }
    }
    Some(out.into_values().collect())
}

fn cursor(ns: &str, dir: &str, query: &str, offset: usize, limit: usize) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(json!([ns, dir, query, offset, limit]).to_string())
}

fn page(d: &Dropbox, ns: &str, dir: &str, query: &str, offset: usize, limit: usize) -> Response {
    let Some(all) = matches(d, ns, dir, query) else {
        return endpoint_error("path/not_found/..");
    };
    let end = (offset + limit).min(all.len());
    let found: Vec<Value> = all
        .get(offset..end)
        .unwrap_or_default()
        .iter()
        .map(|m| json!({"match_type": {".tag": "filename"}, "metadata": {".tag": "metadata", "metadata": m}}))
        .collect();
    let mut answer = json!({"matches": found, "has_more": end < all.len()});
    if end < all.len() {
        answer["cursor"] = json!(cursor(ns, dir, query, end, limit));
    }
    Json(answer).into_response()
}

fn bad(function: &str, why: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        format!("Error in call to API function \"{function}\": {why}"),
    )
        .into_response()
}

pub(super) async fn search(State(d): D, headers: HeaderMap, body: Bytes) -> Response {
    let ns = match d.gate(&headers) {
        Ok(ns) => ns,
        Err(r) => return r,
    };
    let Ok(arg) = serde_json::from_slice::<Value>(&body) else {
        return bad(
            "files/search_v2",
            "request body: could not decode input as JSON",
        );
    };
    let query = arg.get("query").and_then(Value::as_str).unwrap_or("");
    if query.is_empty() || query.chars().count() > 1000 {
        return bad("files/search_v2", "request body: query: invalid length");
    }
    let path = arg
        .pointer("/options/path")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !(path.is_empty() || (path.starts_with('/') && !path.ends_with('/'))) {
        return bad(
            "files/search_v2",
            "request body: options.path: did not match pattern",
        );
    }
    let limit = arg
        .pointer("/options/max_results")
        .and_then(Value::as_u64)
        .unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return bad(
            "files/search_v2",
            "request body: options.max_results: out of range",
        );
    }
    page(&d, &ns, path, query, 0, limit as usize)
}

pub(super) async fn search_continue(State(d): D, headers: HeaderMap, body: Bytes) -> Response {
    let ns = match d.gate(&headers) {
        Ok(ns) => ns,
        Err(r) => return r,
    };
    let parts = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("cursor").and_then(Value::as_str).map(str::to_owned))
        .and_then(|c| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(c)
                .ok()
        })
        .and_then(|raw| serde_json::from_slice::<Value>(&raw).ok());
    let Some(p) = parts else {
        return endpoint_error("reset/..");
    };
    match (
        p[0].as_str(),
        p[1].as_str(),
        p[2].as_str(),
        p[3].as_u64(),
        p[4].as_u64(),
    ) {
        (Some(cns), Some(dir), Some(query), Some(offset), Some(limit)) if cns == ns => {
            page(&d, &ns, dir, query, offset as usize, limit as usize)
        }
        _ => endpoint_error("reset/.."),
    }
}
