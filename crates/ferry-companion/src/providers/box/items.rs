//! Box's folder entries → listed [`Item`]s in Companion's Box shape (`icon` is the entry type,
//! the MIME type comes from the name's extension as Companion's `mime-types` lookup does), Box
//! ids checked before they reach a URL, and the `nextPagePath` of a marker.

use std::collections::BTreeMap;

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

use crate::providers::{Item, ListCtx};

/// The root folder's id.
pub const ROOT: &str = "0";

/// Box ids are decimal digits (files and folders alike); anything else is refused before it
/// reaches a path.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 24 && id.bytes().all(|b| b.is_ascii_digit())
}

/// One folder entry as a listed item; web links and malformed entries are left out.
pub fn item(ctx: &ListCtx, e: &Value) -> Option<Item> {
    let kind = e.get("type").and_then(Value::as_str)?;
    let id = e
        .get("id")
        .and_then(Value::as_str)
        .filter(|i| valid_id(i))?;
    let name = e.get("name").and_then(Value::as_str).unwrap_or("Untitled");
    let is_folder = match kind {
        "folder" => true,
        "file" => false,
        _ => return None,
    };
    Some(Item {
        is_folder,
        icon: Some(kind.to_owned()),
        id: id.to_owned(),
        name: name.to_owned(),
        request_path: id.to_owned(),
        modified_date: e
            .get("modified_at")
            .and_then(Value::as_str)
            .map(str::to_owned),
        mime_type: if is_folder {
            None
        } else {
            mime_of(name).map(str::to_owned)
        },
        size: e.get("size").and_then(Value::as_u64),
        thumbnail: (!is_folder).then(|| ctx.thumbnail(id)),
        custom: BTreeMap::new(),
    })
}

/// `{folder}?cursor={marker}`: the folder stays in the path (Companion's `?cursor=` alone
/// would list the root's next page instead of the folder's).
pub fn next_page_path(folder: &str, marker: &str) -> String {
    format!(
        "{folder}?cursor={}",
        utf8_percent_encode(marker, NON_ALPHANUMERIC)
    )
}

/// The MIME type of a file name's extension, for the common types; `None` otherwise.
pub fn mime_of(name: &str) -> Option<&'static str> {
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "jpg" | "jpeg" => "image/jpeg",
        "png" => "image/png",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "heic" => "image/heic",
        "svg" => "image/svg+xml",
        "tif" | "tiff" => "image/tiff",
        "mp4" => "video/mp4",
        "mov" => "video/quicktime",
        "webm" => "video/webm",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "pdf" => "application/pdf",
        "txt" => "text/plain",
        "md" => "text/markdown",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "json" => "application/json",
        "zip" => "application/zip",
        "doc" => "application/msword",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls" => "application/vnd.ms-excel",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt" => "application/vnd.ms-powerpoint",
        "pptx" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> ListCtx {
        ListCtx {
            thumbnail_base: "https://f.example/box/thumbnail/".into(),
            grant: Box::new(|id: &str| format!("g{id}")),
        }
    }

    #[test]
    fn entries_become_companion_box_items() {
        let file = item(
            &ctx(),
            &json!({"type": "file", "id": "123", "name": "Beach.JPG", "size": 42,
                "modified_at": "2026-01-02T03:04:05-08:00"}),
        )
        .expect("file");
        assert_eq!(
            (
                file.is_folder,
                file.icon.as_deref(),
                file.mime_type.as_deref(),
                file.size,
                file.request_path.as_str(),
                file.thumbnail.as_deref(),
            ),
            (
                false,
                Some("file"),
                Some("image/jpeg"),
                Some(42),
                "123",
                Some("https://f.example/box/thumbnail/123?t=g123"),
            )
        );
        let folder = item(&ctx(), &json!({"type": "folder", "id": "9", "name": "A"})).expect("dir");
        assert!(folder.is_folder && folder.thumbnail.is_none() && folder.mime_type.is_none());
        assert!(item(&ctx(), &json!({"type": "web_link", "id": "5", "name": "x"})).is_none());
        assert!(item(&ctx(), &json!({"type": "file", "id": "../5", "name": "x"})).is_none());
    }

    #[test]
    fn ids_are_digits_only_and_markers_are_escaped() {
        for ok in ["0", "123456789012"] {
            assert!(valid_id(ok), "{ok}");
        }
        for bad in ["", "a1", "1/2", "1?x", "-1", &"1".repeat(25)] {
            assert!(!valid_id(bad), "{bad:?}");
        }
        assert_eq!(next_page_path("77", "a+b/c="), "77?cursor=a%2Bb%2Fc%3D");
    }
}
