//! The fake Microsoft Graph v1.0 routes: `me`, the user's drives, `sharedWithMe`, children
//! with `$top` / `$skiptoken` paging and absolute `@odata.nextLink`s, item metadata, `/content`
//! as a redirect to the pre-authenticated download host, thumbnails and SharePoint sites.

use std::collections::HashMap;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{G, Graph, GraphItem, Q, graph_error, not_found};
use crate::fake::oauth::lock;
use crate::fake::{download, found, random_hex};

pub(super) async fn me(State(g): G, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    Json(json!({"displayName": "Fake User", "mail": g.mail, "userPrincipalName": g.mail}))
        .into_response()
}

pub(super) async fn my_drive(State(g): G, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let drives = lock(&g.drives).clone();
    match drives.iter().find(|d| d.id == g.my_drive) {
        Some(d) => Json(g.drive_json(d)).into_response(),
        None => not_found(),
    }
}

pub(super) async fn my_drives(State(g): G, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let drives = lock(&g.drives).clone();
    let value: Vec<Value> = drives
        .iter()
        .filter(|d| d.site.is_none())
        .map(|d| g.drive_json(d))
        .collect();
    Json(json!({"value": value})).into_response()
}

pub(super) async fn shared_with_me(State(g): G, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let items = lock(&g.items).clone();
    let value: Vec<Value> = items
        .iter()
        .filter(|i| i.shared_with_me)
        .map(|i| {
            let remote = g.item_json(i, false);
            json!({"id": format!("local{}", i.id), "name": i.name, "size": i.content.len(),
                "parentReference": {"driveId": g.my_drive}, "remoteItem": remote})
        })
        .collect();
    Json(json!({"value": value})).into_response()
}

/// Children of `parent` in `drive`, one `$top` page from `$skiptoken`.
fn children(
    g: &Graph,
    drive: &str,
    parent: &str,
    q: &HashMap<String, String>,
    path: &str,
) -> Response {
    if !lock(&g.drives).iter().any(|d| d.id == drive) {
        return not_found();
    }
    if parent != "root" && g.find(drive, parent).is_none_or(|p| !p.folder) {
        return not_found();
    }
    let top = q
        .get("$top")
        .and_then(|t| t.parse::<usize>().ok())
        .unwrap_or(200)
        .clamp(1, 999);
    let start = match q.get("$skiptoken") {
        None => 0,
        Some(t) => match t.strip_prefix("sk").and_then(|n| n.parse().ok()) {
            Some(n) => n,
            None => return graph_error(400, "invalidRequest", "Invalid skip token."),
        },
    };
    let thumbnails = q.get("$expand").is_some_and(|e| e.contains("thumbnails"));
    let all: Vec<GraphItem> = lock(&g.items)
        .iter()
        .filter(|i| i.drive == drive && i.parent == parent && !i.shared_with_me)
        .cloned()
        .collect();
    let value: Vec<Value> = all
        .iter()
        .skip(start)
        .take(top)
        .map(|i| g.item_json(i, thumbnails))
        .collect();
    let mut answer = json!({"value": value});
    if start + top < all.len() {
        let mut next = url::Url::parse(&format!("{}{path}", g.base())).expect("own url");
        next.query_pairs_mut()
            .append_pair("$top", &top.to_string())
            .append_pair("$skiptoken", &format!("sk{}", start + top));
        if thumbnails {
            next.query_pairs_mut().append_pair("$expand", "thumbnails");
        }
        answer["@odata.nextLink"] = json!(next.as_str());
    }
    Json(answer).into_response()
}

pub(super) async fn my_root_children(State(g): G, Query(q): Q, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    children(&g, &g.my_drive, "root", &q, "/v1.0/me/drive/root/children")
}

pub(super) async fn my_children(
    State(g): G,
    Path(id): Path<String>,
    Query(q): Q,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let path = format!("/v1.0/me/drive/items/{id}/children");
    children(&g, &g.my_drive, &id, &q, &path)
}

pub(super) async fn drive_root_children(
    State(g): G,
    Path(drive): Path<String>,
    Query(q): Q,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let path = format!("/v1.0/drives/{drive}/root/children");
    children(&g, &drive, "root", &q, &path)
}

pub(super) async fn drive_children(
    State(g): G,
    Path((drive, id)): Path<(String, String)>,
    Query(q): Q,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let path = format!("/v1.0/drives/{drive}/items/{id}/children");
    children(&g, &drive, &id, &q, &path)
}

pub(super) async fn item(
    State(g): G,
    Path((drive, id)): Path<(String, String)>,
    Query(q): Q,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let thumbnails = q.get("$expand").is_some_and(|e| e.contains("thumbnails"));
    match g.find(&drive, &id) {
        Some(i) => Json(g.item_json(&i, thumbnails)).into_response(),
        None => not_found(),
    }
}

pub(super) async fn content(
    State(g): G,
    Path((drive, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    match g.find(&drive, &id).filter(|i| !i.folder) {
        Some(i) => {
            let link = random_hex(12);
            lock(&g.links).insert(link.clone(), format!("{drive}/{}", i.id));
            found(&format!("{}/download/{link}", g.base()))
        }
        None => not_found(),
    }
}

/// The pre-authenticated download URL: no bearer token.
pub(super) async fn dl(State(g): G, Path(link): Path<String>, headers: HeaderMap) -> Response {
    let Some(key) = lock(&g.links).get(&link).cloned() else {
        return (StatusCode::UNAUTHORIZED, "expired download link").into_response();
    };
    let (drive, id) = key.split_once('/').unwrap_or(("", ""));
    match g.find(drive, id) {
        Some(i) => download(i.content, &i.mime, &headers, &g.faults),
        None => not_found(),
    }
}

pub(super) async fn thumb(Path(id): Path<String>) -> Response {
    (
        [(header::CONTENT_TYPE, "image/jpeg")],
        format!("thumbnail of {id}"),
    )
        .into_response()
}

fn site_json(id: &str, name: &str) -> Value {
    json!({"id": id, "displayName": name, "name": name,
        "webUrl": format!("https://contoso.sharepoint.com/sites/{name}")})
}

pub(super) async fn sites(State(g): G, Query(q): Q, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let needle = q
        .get("search")
        .map(|s| s.trim_matches('*').to_lowercase())
        .unwrap_or_default();
    let value: Vec<Value> = lock(&g.sites)
        .iter()
        .filter(|(_, name)| name.to_lowercase().contains(&needle))
        .map(|(id, name)| site_json(id, name))
        .collect();
    Json(json!({"value": value})).into_response()
}

pub(super) async fn followed_sites(State(g): G, headers: HeaderMap) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    let value: Vec<Value> = lock(&g.sites)
        .iter()
        .map(|(id, name)| site_json(id, name))
        .collect();
    Json(json!({"value": value})).into_response()
}

pub(super) async fn site_drives(
    State(g): G,
    Path(site): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = g.gate(&headers) {
        return r;
    }
    if !lock(&g.sites).iter().any(|(id, _)| *id == site) {
        return not_found();
    }
    let drives = lock(&g.drives).clone();
    let value: Vec<Value> = drives
        .iter()
        .filter(|d| d.site.as_deref() == Some(site.as_str()))
        .map(|d| g.drive_json(d))
        .collect();
    Json(json!({"value": value})).into_response()
}
