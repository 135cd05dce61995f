//! Facebook's albums and photos in Companion's Facebook shape: albums are folders, photos are
//! JPEG files named by their caption (or id and date), their smallest rendition as icon and
//! thumbnail; the largest rendition is what an import stores. Also the ids and paging cursors
//! a request may carry, checked before they reach a Graph URL.

use std::collections::BTreeMap;

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

use crate::providers::Item;

/// Album and photo ids are decimal digits.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_digit())
}

/// Graph's `after` cursors are base64url-ish tokens.
pub fn valid_cursor(c: &str) -> bool {
    !c.is_empty()
        && c.len() <= 1024
        && c.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_=.%+/".contains(&b))
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The photo's renditions (`images`) as (width, source), smallest first.
pub fn renditions(photo: &Value) -> Vec<(u64, &str)> {
    let mut all: Vec<(u64, &str)> = photo
        .get("images")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|i| Some((i.get("width")?.as_u64()?, text(i, "source")?)))
        .collect();
    all.sort_by_key(|(w, _)| *w);
    all
}

/// An album as a folder.
pub fn album_item(a: &Value) -> Option<Item> {
    let id = text(a, "id").filter(|i| valid_id(i))?;
    Some(Item {
        is_folder: true,
        icon: Some("folder".into()),
        id: id.to_owned(),
        name: name(a, id),
        request_path: id.to_owned(),
        modified_date: text(a, "created_time").map(str::to_owned),
        mime_type: None,
        size: None,
        thumbnail: None,
        custom: BTreeMap::new(),
    })
}

/// A photo as a file; one without renditions cannot be imported and is left out.
pub fn photo_item(p: &Value) -> Option<Item> {
    let id = text(p, "id").filter(|i| valid_id(i))?;
    let smallest = renditions(p).first().map(|(_, s)| (*s).to_owned())?;
    Some(Item {
        is_folder: false,
        icon: Some(smallest.clone()),
        id: id.to_owned(),
        name: name(p, id),
        request_path: id.to_owned(),
        modified_date: text(p, "created_time").map(str::to_owned),
        mime_type: Some("image/jpeg".into()),
        size: None,
        thumbnail: Some(smallest),
        custom: BTreeMap::new(),
    })
}

/// The caption or album name, else Companion's `{id} {created_time}`.
fn name(v: &Value, id: &str) -> String {
    match text(v, "name").filter(|n| !n.is_empty()) {
        Some(n) => n.to_owned(),
        None => format!("{id} {}", text(v, "created_time").unwrap_or_default()),
    }
}

/// The next page's path, only while Graph says there is one (`paging.next`): Companion pages
/// on `cursors.after` alone, which the last page has too.
pub fn next_page_path(page: &Value, folder: &str) -> Option<String> {
    page.pointer("/paging/next").and_then(Value::as_str)?;
    let after = page
        .pointer("/paging/cursors/after")
        .and_then(Value::as_str)?;
    Some(format!(
        "{folder}?cursor={}",
        utf8_percent_encode(after, NON_ALPHANUMERIC)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn albums_and_photos_in_companions_shape() {
        let album = album_item(&json!({"id": "10", "name": "Trip", "type": "normal",
            "created_time": "2026-01-02T03:04:05+0000"}))
        .expect("album");
        assert_eq!(
            (
                album.is_folder,
                album.icon.as_deref(),
                album.request_path.as_str()
            ),
            (true, Some("folder"), "10")
        );
        let photo = photo_item(&json!({"id": "11", "created_time": "T", "images": [
            {"width": 960, "height": 720, "source": "https://cdn/big"},
            {"width": 130, "height": 98, "source": "https://cdn/small"}]}))
        .expect("photo");
        assert_eq!(
            (
                photo.name.as_str(),
                photo.thumbnail.as_deref(),
                photo.mime_type.as_deref()
            ),
            ("11 T", Some("https://cdn/small"), Some("image/jpeg"))
        );
        assert!(photo_item(&json!({"id": "12", "images": []})).is_none());
        assert!(album_item(&json!({"id": "1/2"})).is_none());
    }

    #[test]
    fn only_a_page_with_next_has_a_next_page() {
        let more = json!({"paging": {"cursors": {"after": "QVFI+x"}, "next": "https://g/x"}});
        assert_eq!(
            next_page_path(&more, "10").as_deref(),
            Some("10?cursor=QVFI%2Bx")
        );
        let last = json!({"paging": {"cursors": {"before": "a", "after": "b"}}});
        assert_eq!(next_page_path(&last, "10"), None);
        assert!(valid_cursor("QVFIUm9_-x=") && !valid_cursor("a b") && !valid_cursor(""));
    }
}
