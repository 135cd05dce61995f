//! Dropbox's JSON into listed items, in Companion's shape (`requestPath` is the URL-encoded
//! `path_lower`, `icon` the entry's `.tag`), and the checks on what a client sends back: a
//! path (`/a/b.jpg`, or `id:...`, `ns:...` forms the API takes), and the `Dropbox-API-Arg`
//! header, JSON with everything outside printable ASCII escaped as the API requires.

use std::collections::BTreeMap;

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

use super::super::{Item, ListCtx, ListPage};

/// Longest path accepted (Dropbox paths are far shorter in practice).
const MAX_PATH: usize = 4096;

/// Whether `path` is something the API should be asked about: `""` (the root), an absolute
/// path without empty, `.` or `..` segments, control characters or a trailing slash, or an
/// `id:`/`ns:`/`rev:` reference of plain characters.
pub fn valid_path(path: &str) -> bool {
    if path.is_empty() {
        return true;
    }
    if path.len() > MAX_PATH || path.chars().any(char::is_control) {
        return false;
    }
    if let Some(rest) = ["id:", "ns:", "rev:"]
        .iter()
        .find_map(|p| path.strip_prefix(p))
    {
        // `ns:123/sub/dir` names a path inside a namespace.
        let (head, tail) = rest.split_once('/').unwrap_or((rest, ""));
        return !head.is_empty()
            && head
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            && (tail.is_empty() || valid_path(&format!("/{tail}")));
    }
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    rest.split('/')
        .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
}

/// `v` as JSON safe in an HTTP header: every character from U+007F up written `\uXXXX`
/// (surrogate pairs above U+FFFF), as Dropbox's JSON-in-headers rule asks.
pub fn header_json(v: &Value) -> String {
    let raw = v.to_string();
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        if (c as u32) < 0x7f {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// Extensions `files/get_thumbnail_v2` makes thumbnails of (Dropbox's list; others answer
/// `unsupported_extension`, so no link is offered for them).
const THUMBNAIL_EXTENSIONS: &[&str] = &[
    "jpg", "jpeg", "png", "tiff", "tif", "gif", "webp", "ppm", "bmp", "heic",
];

/// Content types of common extensions (Dropbox's listing has none).
const TYPES: &[(&str, &str)] = &[
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("png", "image/png"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("heic", "image/heic"),
    ("tif", "image/tiff"),
    ("tiff", "image/tiff"),
    ("bmp", "image/bmp"),
    ("svg", "image/svg+xml"),
    ("mp4", "video/mp4"),
    ("mov", "video/quicktime"),
    ("webm", "video/webm"),
    ("mp3", "audio/mpeg"),
    ("wav", "audio/wav"),
    ("pdf", "application/pdf"),
    ("zip", "application/zip"),
    ("txt", "text/plain"),
    ("csv", "text/csv"),
    ("json", "application/json"),
    (
        "docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    (
        "xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    (
        "pptx",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ),
];

fn extension(name: &str) -> Option<String> {
    name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())
}

/// The content type of a file name, by its extension.
pub fn mime_of(name: &str) -> Option<String> {
    let ext = extension(name)?;
    TYPES
        .iter()
        .find(|(e, _)| *e == ext)
        .map(|(_, t)| (*t).to_owned())
}

/// One `files/list_folder` entry as an item; deleted entries and ones without a usable path
/// are skipped.
pub fn item(ctx: &ListCtx, entry: &Value) -> Option<Item> {
    let str_of = |k: &str| entry.get(k).and_then(Value::as_str);
    let tag = str_of(".tag")?;
    if tag != "file" && tag != "folder" {
        return None;
    }
    let path = str_of("path_lower").filter(|p| valid_path(p) && !p.is_empty())?;
    let name = str_of("name").unwrap_or_default().to_owned();
    let is_folder = tag == "folder";
    let thumbnail = (!is_folder
        && extension(&name).is_some_and(|e| THUMBNAIL_EXTENSIONS.contains(&e.as_str())))
    .then(|| ctx.thumbnail(path));
    Some(Item {
        is_folder,
        icon: Some(tag.to_owned()),
        id: str_of("id").unwrap_or(path).to_owned(),
        mime_type: if is_folder { None } else { mime_of(&name) },
        name,
        request_path: utf8_percent_encode(path, NON_ALPHANUMERIC).to_string(),
        modified_date: str_of("server_modified").map(str::to_owned),
        size: entry.get("size").and_then(Value::as_u64),
        thumbnail,
        custom: BTreeMap::new(),
    })
}

/// One page of `entries` in Companion's list shape: folders first, then by name, and
/// `?cursor=...` while `answer` says more follow (`list_folder` and `search_v2` alike).
pub fn list_page<'a>(
    ctx: &ListCtx,
    entries: impl Iterator<Item = &'a Value>,
    answer: &Value,
    email: Option<String>,
) -> ListPage {
    let mut items: Vec<Item> = entries.filter_map(|e| item(ctx, e)).collect();
    items.sort_by_cached_key(|i| (!i.is_folder, i.name.to_lowercase()));
    let more = answer.get("has_more").and_then(Value::as_bool) == Some(true);
    let next_page_path = answer
        .get("cursor")
        .and_then(Value::as_str)
        .filter(|c| more && !c.is_empty())
        .map(|c| format!("?cursor={}", utf8_percent_encode(c, NON_ALPHANUMERIC)));
    ListPage {
        username: email.filter(|e| !e.is_empty()),
        items,
        next_page_path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_with_tricks_are_refused() {
        for ok in [
            "",
            "/a",
            "/Photos/b c.jpg",
            "id:a4ayc_80_OEAAAAAAAAAXw",
            "ns:123/x",
        ] {
            assert!(valid_path(ok), "{ok}");
        }
        for bad in [
            "a",
            "/",
            "/a/",
            "//a",
            "/a/../b",
            "/./a",
            "/a\nb",
            "id:",
            "id:a/b/..",
            "ns:1 2",
        ] {
            assert!(!valid_path(bad), "{bad}");
        }
    }

    #[test]
    fn header_json_escapes_non_ascii() {
        assert_eq!(
            header_json(&json!({"path": "/caf\u{e9}/\u{1f600}\u{7f}"})),
            r#"{"path":"/caf\u00e9/\ud83d\ude00\u007f"}"#
        );
    }
}
