//! The JSON bodies the endpoint answers with, as types: the handlers build them and the
//! OpenAPI document describes them from the same definitions, so the two cannot disagree.

use serde::Serialize;

/// One stored file.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct StoredFile {
    /// The file's name as sent.
    pub name: String,
    /// Its media type as sent (`application/octet-stream` when none was).
    #[serde(rename = "type")]
    pub content_type: String,
    /// Its size in bytes.
    pub size: u64,
    /// Where it can be fetched (`/upload/{id}`).
    pub url: String,
}

/// The answer to an upload: the first file's `url` and `name` (what the widget's XHR uploader
/// reads) and every file of the request.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Uploaded {
    /// The first file's URL.
    pub url: String,
    /// The first file's name.
    pub name: String,
    /// Every stored file, in the order sent.
    pub files: Vec<StoredFile>,
}

impl Uploaded {
    /// The answer for `files`; `None` when there are none.
    pub(crate) fn of(files: Vec<StoredFile>) -> Option<Self> {
        let first = files.first()?;
        Some(Self {
            url: first.url.clone(),
            name: first.name.clone(),
            files,
        })
    }
}

/// Every error but a hook's refusal (whose body is the hook's).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorMessage {
    /// What went wrong, for a person.
    pub message: String,
}
