//! OneDrive's places and items as Companion items. Every folder a person can open has a
//! `requestPath` Ferry can read back without a query string: `{driveId}~{itemId}` (an item of a
//! drive, `root` for its top), `shared` (items shared with the person), `sites` (SharePoint
//! sites), `site~{siteId}` (a site's document libraries). Graph ids never hold `~`.

use std::collections::BTreeMap;

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};

use crate::providers::{Item, ProviderError};

/// The virtual folder of items others shared with the person.
pub const SHARED: &str = "shared";
/// The virtual folder of SharePoint sites.
pub const SITES: &str = "sites";

/// A folder `list` can open.
#[derive(Debug, PartialEq, Eq)]
pub enum Place<'a> {
    /// The person's own OneDrive, top level (with the virtual folders on its first page).
    Home,
    Shared,
    Sites,
    Site(&'a str),
    Folder {
        drive: &'a str,
        item: &'a str,
    },
}

fn graph_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 256
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'!' | b'_' | b'-'))
}

fn site_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 512
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b',' | b'_' | b'-'))
}

/// Reads a folder's `requestPath`.
pub fn place(path: &str) -> Result<Place<'_>, ProviderError> {
    let bad = || ProviderError::BadRequest("Invalid folder id".into());
    match path {
        "" | "root" => Ok(Place::Home),
        SHARED => Ok(Place::Shared),
        SITES => Ok(Place::Sites),
        _ => match path.split_once('~') {
            Some(("site", id)) if site_id(id) => Ok(Place::Site(id)),
            Some((drive, item)) if graph_id(drive) && graph_id(item) => {
                Ok(Place::Folder { drive, item })
            }
            _ => Err(bad()),
        },
    }
}

/// Reads a file's `requestPath`: (drive, item).
pub fn file(path: &str) -> Result<(&str, &str), ProviderError> {
    match path.split_once('~') {
        Some((drive, item)) if graph_id(drive) && graph_id(item) && item != "root" => {
            Ok((drive, item))
        }
        _ => Err(ProviderError::BadRequest("Invalid file id".into())),
    }
}

/// A virtual folder.
pub fn folder(path: &str, name: &str, kind: &'static str) -> Item {
    let mut custom = BTreeMap::new();
    custom.insert("kind", json!(kind));
    Item {
        is_folder: true,
        icon: Some("folder".into()),
        id: path.to_owned(),
        name: name.to_owned(),
        request_path: path.to_owned(),
        modified_date: None,
        mime_type: None,
        size: None,
        thumbnail: None,
        custom,
    }
}

/// A drive item (or a shared item's `remoteItem`) as a listed item, Companion's OneDrive shape:
/// a folder's icon is `folder`, a file's is its thumbnail URL (Graph's pre-authenticated link).
pub fn item(v: &Value) -> Option<Item> {
    let target = v.get("remoteItem").unwrap_or(v);
    let id = target.get("id").and_then(Value::as_str)?;
    let drive = target
        .pointer("/parentReference/driveId")
        .and_then(Value::as_str)?;
    if !graph_id(id) || !graph_id(drive) {
        return None;
    }
    let is_folder = target.get("folder").is_some();
    let thumbnail = v
        .pointer("/thumbnails/0/medium/url")
        .or_else(|| target.pointer("/thumbnails/0/medium/url"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let path = format!("{drive}~{id}");
    Some(Item {
        is_folder,
        icon: if is_folder {
            Some("folder".into())
        } else {
            thumbnail.clone().or_else(|| Some("file".into()))
        },
        id: path.clone(),
        name: v
            .get("name")
            .or_else(|| target.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("Untitled")
            .to_owned(),
        request_path: path,
        modified_date: target
            .get("lastModifiedDateTime")
            .and_then(Value::as_str)
            .map(str::to_owned),
        mime_type: target
            .pointer("/file/mimeType")
            .and_then(Value::as_str)
            .map(str::to_owned),
        size: if is_folder {
            None
        } else {
            target.get("size").and_then(Value::as_u64)
        },
        thumbnail: if is_folder { None } else { thumbnail },
        custom: BTreeMap::new(),
    })
}

/// The `$skiptoken` of an `@odata.nextLink`, as the next page's path.
pub fn next_page_path(path: &str, page: &Value) -> Option<String> {
    let link = page.get("@odata.nextLink").and_then(Value::as_str)?;
    let url = url::Url::parse(link).ok()?;
    let token = url
        .query_pairs()
        .find(|(k, _)| k == "$skiptoken")
        .map(|(_, v)| v.into_owned())
        .filter(|t| !t.is_empty())?;
    let folder = if path.is_empty() { "root" } else { path };
    Some(format!(
        "{folder}?cursor={}",
        utf8_percent_encode(&token, NON_ALPHANUMERIC)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_paths_read_back_without_a_query() {
        assert_eq!(place("").ok(), Some(Place::Home));
        assert_eq!(
            place("b!x_Y-1~01ABC").ok(),
            Some(Place::Folder {
                drive: "b!x_Y-1",
                item: "01ABC"
            })
        );
        assert_eq!(
            place("site~contoso.sharepoint.com,1a,2b").ok(),
            Some(Place::Site("contoso.sharepoint.com,1a,2b"))
        );
        for bad in ["a/b~c", "d~../x", "site~a/b", "x", "d~"] {
            assert!(place(bad).is_err(), "{bad}");
        }
        assert_eq!(
            file("D4648F06C91D9D3D~D4648F06C91D9D3D!54927").ok(),
            Some(("D4648F06C91D9D3D", "D4648F06C91D9D3D!54927"))
        );
        assert!(file("d~root").is_err());
    }

    #[test]
    fn shared_items_open_their_remote_item() {
        let shared = json!({"id": "local1", "name": "Budget.xlsx",
            "remoteItem": {"id": "01R", "size": 7, "file": {"mimeType": "text/plain"},
                "parentReference": {"driveId": "b!other"}}});
        let i = item(&shared).expect("item");
        assert_eq!(
            (
                i.request_path.as_str(),
                i.size,
                i.icon.as_deref(),
                i.is_folder
            ),
            ("b!other~01R", Some(7), Some("file"), false)
        );
        let page = json!({"@odata.nextLink": "https://graph.microsoft.com/v1.0/me/drive/root/children?$top=2&$skiptoken=a%2Bb"});
        assert_eq!(
            next_page_path("", &page).as_deref(),
            Some("root?cursor=a%2Bb")
        );
    }
}
