//! Google's file JSON → [`Item`]: shortcuts open (or download) their target; Workspace types
//! without an export (Forms, Sites, ...) are listed with `custom.unsupported` instead of hidden;
//! shared drives and the virtual "Shared with me" are folders; ids are checked before use.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::export::{export_type, unsupported_reason, with_extension};
use super::{Drive, FOLDER, SHORTCUT, WORKSPACE};
use crate::providers::{Item, ListCtx, ProviderError, Session};

impl Drive {
    /// Every shared drive, all pages.
    pub(super) async fn shared_drives(
        &self,
        session: &Session,
    ) -> Result<Vec<Item>, ProviderError> {
        let mut out = Vec::new();
        let mut token = String::new();
        loop {
            let mut query = vec![
                ("pageSize", "100"),
                ("fields", "nextPageToken,drives(id,name)"),
            ];
            if !token.is_empty() {
                query.push(("pageToken", &token));
            }
            let page = self.get_json(session, "/drives", &query).await?;
            for d in page
                .get("drives")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let (Some(id), Some(name)) = (
                    d.get("id").and_then(Value::as_str),
                    d.get("name").and_then(Value::as_str),
                ) else {
                    continue;
                };
                let mut custom = BTreeMap::new();
                custom.insert("isSharedDrive", json!(true));
                out.push(folder_item(id, name, custom));
            }
            match page.get("nextPageToken").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => token = next.to_owned(),
                _ => return Ok(out),
            }
        }
    }

    pub(super) fn item(&self, ctx: &ListCtx, f: &Value) -> Option<Item> {
        let mut id = str_of(f, "id")?;
        let mut mime = str_of(f, "mimeType").unwrap_or("application/octet-stream");
        if mime == SHORTCUT {
            id = f
                .pointer("/shortcutDetails/targetId")
                .and_then(Value::as_str)?;
            mime = f
                .pointer("/shortcutDetails/targetMimeType")
                .and_then(Value::as_str)
                .unwrap_or("application/octet-stream");
        }
        if !valid_id(id) {
            return None;
        }
        let name = str_of(f, "name").unwrap_or("Untitled");
        if mime == FOLDER {
            return Some(folder_item(id, name, BTreeMap::new()));
        }
        let mut custom = BTreeMap::new();
        custom.insert("isSharedDrive", json!(false));
        if let Some(img) = f.get("imageMediaMetadata") {
            custom.insert(
                "imageWidth",
                img.get("width").cloned().unwrap_or(Value::Null),
            );
            custom.insert(
                "imageHeight",
                img.get("height").cloned().unwrap_or(Value::Null),
            );
            custom.insert(
                "imageRotation",
                img.get("rotation").cloned().unwrap_or(Value::Null),
            );
            custom.insert(
                "imageDateTime",
                img.get("time").cloned().unwrap_or(Value::Null),
            );
        }
        if let Some(video) = f.get("videoMediaMetadata") {
            custom.insert(
                "videoWidth",
                video.get("width").cloned().unwrap_or(Value::Null),
            );
            custom.insert(
                "videoHeight",
                video.get("height").cloned().unwrap_or(Value::Null),
            );
            custom.insert(
                "videoDurationMillis",
                video.get("durationMillis").cloned().unwrap_or(Value::Null),
            );
        }
        let (name, mime_type, size) = if mime.starts_with(WORKSPACE) {
            match export_type(mime) {
                Some((export, ext)) => (with_extension(name, ext), export.to_owned(), None),
                None => {
                    custom.insert("unsupported", json!(true));
                    custom.insert("unsupportedReason", json!(unsupported_reason(mime)));
                    (name.to_owned(), mime.to_owned(), None)
                }
            }
        } else {
            let size = f.get("size").and_then(|s| {
                s.as_str()
                    .and_then(|s| s.parse().ok())
                    .or_else(|| s.as_u64())
            });
            (name.to_owned(), mime.to_owned(), size)
        };
        let thumbnail = f
            .get("thumbnailLink")
            .and_then(Value::as_str)
            .map(|_| ctx.thumbnail(id));
        let icon = thumbnail.clone().unwrap_or_else(|| {
            if mime_type.starts_with("video/") {
                "video"
            } else {
                "file"
            }
            .to_owned()
        });
        Some(Item {
            is_folder: false,
            icon: Some(icon),
            id: id.to_owned(),
            name,
            request_path: id.to_owned(),
            modified_date: str_of(f, "modifiedTime").map(str::to_owned),
            mime_type: Some(mime_type),
            size,
            thumbnail,
            custom,
        })
    }
}

pub(super) fn folder_item(id: &str, name: &str, custom: BTreeMap<&'static str, Value>) -> Item {
    Item {
        is_folder: true,
        icon: Some("folder".into()),
        id: id.to_owned(),
        name: name.to_owned(),
        request_path: id.to_owned(),
        modified_date: None,
        mime_type: Some(FOLDER.into()),
        size: None,
        thumbnail: None,
        custom,
    }
}

pub(super) fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Drive ids (and `root`, `shared-with-me`) are URL-safe base64 characters; anything else is
/// refused before it reaches a query or a path.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 256
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_with_path_or_query_tricks_are_refused() {
        for ok in ["root", "shared-with-me", "1AbC_d-9"] {
            assert!(valid_id(ok), "{ok}");
        }
        for bad in [
            "",
            "..",
            "a/b",
            "a'b",
            "a b",
            "x%2F",
            "a?b",
            "é",
            &"a".repeat(257),
        ] {
            assert!(!valid_id(bad), "{bad:?}");
        }
    }
}
