//! Multistatus entries as Companion's list items. The folder's own entry is left out; a
//! child's id is the folder's path plus the child's name (the last segment of its `href`),
//! percent-encoded as JavaScript's `encodeURIComponent` does, as Companion builds it. Only the
//! name is taken from the server: an `href` pointing elsewhere cannot make an id that does.

use std::collections::BTreeMap;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use url::Url;

use super::multistatus::Entry;
use crate::providers::Item;

/// What `encodeURIComponent` keeps: letters, digits and `-_.!~*'()`.
const URI_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// The decoded path of an `href` (an absolute path, or a full URL), without trailing `/`.
fn href_path(href: &str) -> String {
    let raw = match Url::parse(href) {
        Ok(url) => url.path().to_owned(),
        Err(_) => href.split(['?', '#']).next().unwrap_or_default().to_owned(),
    };
    percent_decode_str(&raw)
        .decode_utf8_lossy()
        .trim_end_matches('/')
        .to_owned()
}

/// The items of the folder at `url` (whose path in the collection is `dir`).
pub fn from_entries(url: &Url, dir: &[&str], entries: Vec<Entry>) -> Vec<Item> {
    let own = href_path(url.as_str());
    let prefix: String = dir.iter().map(|s| format!("/{s}")).collect();
    entries
        .into_iter()
        .filter_map(|e| {
            let path = href_path(&e.href);
            if path == own {
                return None;
            }
            let name = path.rsplit('/').next()?.to_owned();
            if name.is_empty() || name == "." || name == ".." || name.contains('\\') {
                return None;
            }
            Some(item(&prefix, name, e))
        })
        .collect()
}

fn item(prefix: &str, name: String, e: Entry) -> Item {
    let id = utf8_percent_encode(&format!("{prefix}/{name}"), URI_COMPONENT).to_string();
    let icon = if e.is_folder {
        "folder"
    } else if e.mime.as_deref().is_some_and(|m| m.starts_with("video/")) {
        "video"
    } else {
        "file"
    };
    let modified_date = e.modified.as_deref().and_then(iso_date);
    Item {
        is_folder: e.is_folder,
        icon: Some(icon.into()),
        request_path: id.clone(),
        id,
        name,
        modified_date,
        mime_type: e.mime.filter(|_| !e.is_folder),
        size: e.size.filter(|_| !e.is_folder),
        thumbnail: None,
        custom: BTreeMap::new(),
    }
}

/// An HTTP date (`Tue, 03 Nov 2026 10:00:00 GMT`) as ISO 8601; unreadable dates are left out.
fn iso_date(raw: &str) -> Option<String> {
    jiff::fmt::rfc2822::DateTimeParser::new()
        .parse_timestamp(raw.trim())
        .ok()
        .map(|t| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(href: &str, folder: bool) -> Entry {
        Entry {
            href: href.into(),
            is_folder: folder,
            size: (!folder).then_some(5),
            modified: Some("Tue, 03 Nov 2026 10:00:00 GMT".into()),
            mime: (!folder).then(|| "video/mp4".into()),
        }
    }

    #[test]
    fn children_get_companions_ids_and_the_folder_itself_is_left_out() {
        let url = Url::parse("https://h.example/dav/My%20Trips/").expect("url");
        let entries = vec![
            entry("/dav/My%20Trips/", true),
            entry(
                "https://h.example/dav/My%20Trips/Tom%20%26%20Jerry.mp4",
                false,
            ),
            entry("/dav/My%20Trips/Sub/", true),
            entry("/elsewhere/../secret", false),
        ];
        let items = from_entries(&url, &["My Trips"], entries);
        let ids: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "%2FMy%20Trips%2FTom%20%26%20Jerry.mp4",
                "%2FMy%20Trips%2FSub",
                "%2FMy%20Trips%2Fsecret"
            ]
        );
        assert_eq!(items[0].name, "Tom & Jerry.mp4");
        assert_eq!(items[0].icon.as_deref(), Some("video"));
        assert_eq!(
            items[0].modified_date.as_deref(),
            Some("2026-11-03T10:00:00Z")
        );
        assert_eq!((items[1].is_folder, items[1].size), (true, None));
    }
}
