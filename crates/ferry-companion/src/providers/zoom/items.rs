//! Zoom's folders and items in Companion's Zoom shape: the root lists years, a year lists the
//! meetings recorded in it (one month's date range per Zoom call, newest month first), a
//! meeting lists its finished recording files. Also what a request path or cursor may hold,
//! checked before anything reaches a Zoom URL.

use std::collections::BTreeMap;

use jiff::civil::Date;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};

use crate::providers::{Item, ProviderError};

/// What a list path names.
#[derive(Debug, PartialEq, Eq)]
pub enum Folder<'a> {
    /// The years since the account was created.
    Root,
    /// The meetings recorded in a year.
    Year(i16),
    /// The recording files of one meeting (by its UUID).
    Meeting(&'a str),
}

/// The folder a list path names; anything else is a 400.
pub fn folder(path: &str) -> Result<Folder<'_>, ProviderError> {
    if path.is_empty() || path == "root" {
        return Ok(Folder::Root);
    }
    if path.len() == 4 && path.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(year) = path.parse::<i16>() {
            if (1970..=9999).contains(&year) {
                return Ok(Folder::Year(year));
            }
        }
    }
    if valid_uuid(path) {
        return Ok(Folder::Meeting(path));
    }
    Err(ProviderError::BadRequest("Invalid folder id".into()))
}

/// Meeting UUIDs are base64 (they may hold `/`, `+` and `=`).
pub fn valid_uuid(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
}

/// Recording file ids are UUIDs (hex and dashes) or Zoom's alphanumeric ids.
pub fn valid_file_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// A file's id: `{meeting UUID}~{file id}` (`~` is in neither alphabet).
pub fn file_ref(id: &str) -> Result<(&str, &str), ProviderError> {
    id.split_once('~')
        .filter(|(m, f)| valid_uuid(m) && valid_file_id(f))
        .ok_or_else(|| ProviderError::BadRequest("Invalid file id".into()))
}

/// Where a year's listing goes on: a month and, within it, Zoom's page token.
#[derive(Debug, PartialEq, Eq)]
pub struct YearCursor {
    pub month: i8,
    pub token: Option<String>,
}

impl YearCursor {
    /// `{month}` or `{month}:{next_page_token}`.
    pub fn parse(raw: &str) -> Result<Self, ProviderError> {
        let bad = || ProviderError::BadRequest("Invalid cursor".into());
        let (month, token) = match raw.split_once(':') {
            Some((m, t)) => (m, Some(t)),
            None => (raw, None),
        };
        let month: i8 = month.parse().map_err(|_| bad())?;
        if !(1..=12).contains(&month) {
            return Err(bad());
        }
        if let Some(t) = token {
            let ok = !t.is_empty()
                && t.len() <= 512
                && t.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.~+/=".contains(&b));
            if !ok {
                return Err(bad());
            }
        }
        Ok(Self {
            month,
            token: token.map(str::to_owned),
        })
    }

    /// The `nextPagePath` that resumes the year's listing here.
    pub fn next_page_path(&self, year: i16) -> String {
        let raw = match &self.token {
            Some(t) => format!("{}:{t}", self.month),
            None => self.month.to_string(),
        };
        format!(
            "{year}?cursor={}",
            utf8_percent_encode(&raw, NON_ALPHANUMERIC)
        )
    }
}

/// The newest month of `year` with recordings possible, as of `today` (`None`: a future year).
pub fn last_month(year: i16, today: Date) -> Option<i8> {
    match year.cmp(&today.year()) {
        std::cmp::Ordering::Less => Some(12),
        std::cmp::Ordering::Equal => Some(today.month()),
        std::cmp::Ordering::Greater => None,
    }
}

/// The month's date range as Zoom's `from` and `to` (`yyyy-mm-dd`, inclusive).
pub fn month_range(year: i16, month: i8) -> Option<(String, String)> {
    let first = Date::new(year, month, 1).ok()?;
    Some((first.to_string(), first.last_of_month().to_string()))
}

/// The root's year folders, newest first.
pub fn years(from: i16, to: i16) -> Vec<Item> {
    (from..=to)
        .rev()
        .map(|year| Item {
            is_folder: true,
            icon: Some("folder".into()),
            id: year.to_string(),
            name: year.to_string(),
            request_path: year.to_string(),
            modified_date: Some(format!("{year}-12-31")),
            mime_type: None,
            size: None,
            thumbnail: None,
            custom: BTreeMap::new(),
        })
        .collect()
}

/// `2026-01-02T15:04:05Z` as Companion shows it (`2026-01-02, 15:04`, here in UTC).
fn shown(time: &str) -> String {
    time.parse::<jiff::Timestamp>()
        .map(|t| t.strftime("%Y-%m-%d, %H:%M").to_string())
        .unwrap_or_else(|_| time.to_owned())
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A recording file Zoom has finished and not deleted, with a download URL.
fn downloadable(f: &Value) -> bool {
    text(f, "status") == Some("completed")
        && f.get("deleted_time").is_none_or(Value::is_null)
        && text(f, "download_url").is_some_and(|u| !u.is_empty())
}

/// The MIME type, icon and extension of a recording file type Companion lists.
fn kind(file_type: &str) -> Option<(&'static str, &'static str, &'static str)> {
    Some(match file_type {
        "MP4" => ("video/mp4", "video", "mp4"),
        "M4A" => ("audio/mp4", "file", "m4a"),
        "CHAT" => ("text/plain", "file", "txt"),
        "TRANSCRIPT" | "CC" => ("text/vtt", "file", "vtt"),
        _ => return None,
    })
}

/// A meeting with at least one downloadable file, as a folder.
pub fn meeting_item(m: &Value) -> Option<Item> {
    let uuid = text(m, "uuid").filter(|u| valid_uuid(u))?;
    let topic = text(m, "topic")?;
    let files = m.get("recording_files")?.as_array()?;
    if !files.iter().any(downloadable) {
        return None;
    }
    let start = text(m, "start_time");
    Some(Item {
        is_folder: true,
        icon: Some("folder".into()),
        id: uuid.to_owned(),
        name: format!("{topic} ({})", start.map(shown).unwrap_or_default()),
        request_path: utf8_percent_encode(uuid, NON_ALPHANUMERIC).to_string(),
        modified_date: start.map(str::to_owned),
        mime_type: None,
        size: m.get("total_size").and_then(Value::as_u64),
        thumbnail: None,
        custom: BTreeMap::from([("topic", json!(topic))]),
    })
}

/// A meeting's downloadable recording file of a type Companion lists, as a file.
pub fn file_item(uuid: &str, topic: &str, f: &Value) -> Option<Item> {
    if !downloadable(f) {
        return None;
    }
    let (mime, icon, ext) = kind(text(f, "file_type")?)?;
    let id = text(f, "id").filter(|i| valid_file_id(i))?;
    let start = text(f, "recording_start");
    let recording = text(f, "recording_type")
        .map(|t| format!(" - {}", t.replace('_', " ")))
        .unwrap_or_default();
    Some(Item {
        is_folder: false,
        icon: Some(icon.into()),
        id: format!("{uuid}~{id}"),
        name: format!(
            "{topic}{recording} ({}).{ext}",
            start.map(shown).unwrap_or_default()
        ),
        request_path: format!("{}~{id}", utf8_percent_encode(uuid, NON_ALPHANUMERIC)),
        modified_date: start.map(str::to_owned),
        mime_type: Some(mime.into()),
        size: f.get("file_size").and_then(Value::as_u64),
        thumbnail: None,
        custom: BTreeMap::from([("topic", json!(topic))]),
    })
}

/// The file `file_id` of a meeting's recordings answer, if it can be downloaded.
pub fn find_file<'a>(recordings: &'a Value, file_id: &str) -> Option<&'a Value> {
    recordings
        .get("recording_files")?
        .as_array()?
        .iter()
        .find(|f| text(f, "id") == Some(file_id) && downloadable(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_the_root_a_year_or_a_meeting_and_nothing_else() {
        assert_eq!(folder("").ok(), Some(Folder::Root));
        assert_eq!(folder("2024").ok(), Some(Folder::Year(2024)));
        assert_eq!(folder("ab/+c==").ok(), Some(Folder::Meeting("ab/+c==")));
        for bad in ["../x", "a b", "a?b", "a~b", &"a".repeat(65)] {
            assert!(folder(bad).is_err(), "{bad:?}");
        }
        assert!(file_ref("ab/c==~f-1").is_ok());
        for bad in ["abc", "ab~", "~f", "a.b~f", "ab~f/1"] {
            assert!(file_ref(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn cursors_round_trip_and_bad_ones_are_refused() {
        let c = YearCursor::parse("7:tok+/=").expect("cursor");
        assert_eq!((c.month, c.token.as_deref()), (7, Some("tok+/=")));
        assert_eq!(c.next_page_path(2025), "2025?cursor=7%3Atok%2B%2F%3D");
        for bad in ["0", "13", "x", "3:", "3:a b"] {
            assert!(YearCursor::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn month_ranges_and_the_newest_month() {
        assert_eq!(
            month_range(2024, 2),
            Some(("2024-02-01".into(), "2024-02-29".into()))
        );
        let today = Date::new(2026, 5, 9).expect("date");
        assert_eq!(last_month(2025, today), Some(12));
        assert_eq!(last_month(2026, today), Some(5));
        assert_eq!(last_month(2027, today), None);
    }

    #[test]
    fn meetings_and_files_in_companions_shape() {
        let file = json!({"id": "f-1", "file_type": "MP4", "status": "completed",
            "download_url": "https://zoom.us/rec/download/x", "file_size": 42,
            "recording_start": "2026-01-02T15:04:05Z",
            "recording_type": "shared_screen_with_speaker_view"});
        let meeting = json!({"uuid": "ab/c==", "topic": "Standup", "total_size": 42,
            "start_time": "2026-01-02T15:00:00Z", "recording_files": [file]});
        let m = meeting_item(&meeting).expect("meeting");
        assert_eq!(
            (m.name.as_str(), m.request_path.as_str(), m.is_folder),
            ("Standup (2026-01-02, 15:00)", "ab%2Fc%3D%3D", true)
        );
        let f = file_item("ab/c==", "Standup", &meeting["recording_files"][0]).expect("file");
        assert_eq!(
            (
                f.name.as_str(),
                f.request_path.as_str(),
                f.mime_type.as_deref(),
                f.size
            ),
            (
                "Standup - shared screen with speaker view (2026-01-02, 15:04).mp4",
                "ab%2Fc%3D%3D~f-1",
                Some("video/mp4"),
                Some(42)
            )
        );
        let pending = json!({"uuid": "u1", "topic": "t", "recording_files": [
            {"id": "f", "file_type": "MP4", "status": "processing", "download_url": "u"}]});
        assert!(meeting_item(&pending).is_none());
        let timeline = json!({"id": "f", "file_type": "TIMELINE", "status": "completed",
            "download_url": "u"});
        assert!(file_item("u1", "t", &timeline).is_none());
    }
}
