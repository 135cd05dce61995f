//! Google Drive Picker and Google Photos Picker imports (`POST /google-picker/get`), on
//! Companion's route and body so Uppy's released `@uppy/google-drive-picker` and
//! `@uppy/google-photos-picker` work unchanged.
//!
//! These are not [`super::Provider`]s: there is no sign-in through this server. The page signs in
//! with Google Identity Services (the non-restricted `drive.file` scope, or
//! `photospicker.mediaitems.readonly`), shows Google's picker, and sends each picked item with
//! the page's own access token: a Drive file id, or a Photos media URL (`{baseUrl}=d` / `=dv`).
//! This server downloads it with that token and hands it to a transfer like any other import
//! (any destination, progress socket, pause / resume / cancel, takeover by another instance).
//!
//! Safety: the access token never reaches a log (the types holding it redact it) and is sealed
//! under `--secret` in the transfer's spec, which a shared registry stores. A Photos URL is a
//! bearer-token fetch of a URL the client chose, so only Google's media hosts
//! (`https://lhN.googleusercontent.com/...=d|=dv`) are accepted, or exactly the origin an operator
//! configured in their place (tests point it at a fake), and the fetch still goes through the
//! egress rules.
//!
//! Photos media URLs expire an hour after the picker listed them: the download is opened before
//! the route answers, and one found expired later (a resume after a long pause) is renewed from
//! the picking session's items when the client sent its `sessionId` (a Ferry extension; Uppy
//! does not send it, and then the transfer fails saying to pick the file again).
//!
//! # Layout
//!
//! - here: [`GooglePickerConfig`], the runtime [`GooglePicker`], the picked item [`Pick`] and
//!   its sealed form.
//! - [`photos`]: the Photos URL rules, its download and the renewal of an expired URL.
//! - [`source`]: a picked item as a transfer [`crate::transfer::Source`].
//! - [`routes`]: `POST /google-picker/get` and its body.

pub mod photos;
pub mod routes;
pub mod source;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::api::Api;
use super::config::{Endpoints, OAuthApp, ProviderSetup};
use super::drive::Drive;
use super::{Deps, Download, Provider, ProviderError, Session};
use crate::egress::Egress;
use crate::oauth::sealed;

/// Where the picker imports are fetched from; every URL overridable (tests, proxies).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GooglePickerConfig {
    /// The Drive API base (`/drive/v3/files/{id}` is appended): `--google-api-url`.
    pub drive_api_url: String,
    /// The Photos Picker API base (`/v1/mediaItems` is appended), to renew expired media URLs.
    pub photos_api_url: String,
    /// The one origin Photos media URLs may have instead of Google's media hosts (a fake or a
    /// proxy). Unset: only `https://lhN.googleusercontent.com`.
    pub photos_content_url: Option<String>,
}

impl Default for GooglePickerConfig {
    fn default() -> Self {
        Self {
            drive_api_url: "https://www.googleapis.com".into(),
            photos_api_url: "https://photospicker.googleapis.com".into(),
            photos_content_url: None,
        }
    }
}

/// Which picker an item came from (Companion's `platform`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Drive,
    Photos,
}

impl Platform {
    /// The plugin's id, as `GET /providers` lists it and hooks name the source.
    pub fn plugin_id(self) -> &'static str {
        match self {
            Self::Drive => "google-drive-picker",
            Self::Photos => "google-photos-picker",
        }
    }
}

/// One picked item, as the client sent it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pick {
    pub platform: Platform,
    /// The page's Google access token. Never logged.
    pub access_token: String,
    /// The Drive file id, or the Photos media item id (needed to renew an expired URL).
    pub id: Option<String>,
    /// The Photos media URL (`{baseUrl}=d` or `=dv`).
    pub url: Option<String>,
    /// The Photos picking session, to renew an expired URL (Ferry's extension).
    pub session_id: Option<String>,
}

impl std::fmt::Debug for Pick {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pick")
            .field("platform", &self.platform)
            .field("access_token", &"<redacted>")
            .field("id", &self.id)
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

/// A [`Pick`] sealed for the transfer's spec, tagged so no other sealed value passes for it.
#[derive(Serialize, Deserialize)]
struct Grant {
    /// Kind tag: `picker`.
    k: String,
    #[serde(flatten)]
    pick: Pick,
}

impl Pick {
    /// This pick sealed under `secret`.
    pub fn seal(&self, secret: &[u8]) -> String {
        sealed::seal(
            secret,
            &Grant {
                k: "picker".into(),
                pick: self.clone(),
            },
        )
    }

    /// The pick inside `sealed`, if genuine.
    pub fn open(secret: &[u8], sealed: &str) -> Option<Self> {
        sealed::open::<Grant>(secret, sealed)
            .filter(|g| g.k == "picker")
            .map(|g| g.pick)
    }
}

/// The picker imports' clients and rules, built once at start when the route is enabled.
#[derive(Debug)]
pub struct GooglePicker {
    /// Drive's own download path (metadata, shortcuts, Workspace exports, `Range`).
    drive: Drive,
    photos: photos::Photos,
}

impl GooglePicker {
    /// The picker over `config`. `api` reaches the configured endpoints (no redirects);
    /// `sources` (the egress-policed client) fetches Google's media hosts.
    pub fn new(config: &GooglePickerConfig, api: Api, sources: &Egress) -> Self {
        let setup = ProviderSetup {
            // Downloads only: no OAuth app, this server never signs anyone in to the pickers.
            app: OAuthApp {
                key: String::new(),
                secret: String::new(),
            },
            endpoints: Endpoints::new("", "", &config.drive_api_url),
        };
        let deps = Deps {
            api: api.clone(),
            sources: sources.clone(),
            page_size: 1000,
        };
        Self {
            drive: Drive::new(setup, &deps),
            photos: photos::Photos::new(config, api, sources),
        }
    }

    /// Refuses a pick this server must not fetch (a foreign Photos host, a malformed id).
    pub fn check(&self, pick: &Pick) -> Result<(), ProviderError> {
        match pick.platform {
            Platform::Drive => match pick.id.as_deref() {
                Some(id) if super::drive::valid_id(id) && id != "root" => Ok(()),
                _ => Err(ProviderError::BadRequest("Invalid file id".into())),
            },
            Platform::Photos => self
                .photos
                .check(pick.url.as_deref().unwrap_or_default())
                .map(drop),
        }
    }

    /// Opens `pick` at byte `from`. A Photos URL found expired is renewed (when the pick names
    /// its session) and the renewed URL written back into `pick`.
    pub async fn open(&self, pick: &mut Pick, from: u64) -> Result<Download, ProviderError> {
        self.check(pick)?;
        match pick.platform {
            Platform::Drive => {
                let session = Session {
                    access_token: pick.access_token.clone(),
                    ..Session::default()
                };
                let id = pick.id.as_deref().unwrap_or_default();
                self.drive.download(&session, id, from).await
            }
            Platform::Photos => self.photos.open(pick, from).await,
        }
    }
}

/// What `GET /providers` adds when the route is enabled: the two pickers, marked `picker` so a
/// widget that only knows the sign-in flow can tell them apart.
pub fn listed() -> [Value; 2] {
    [
        json!({"id": Platform::Drive.plugin_id(), "name": "Google Drive Picker", "picker": true}),
        json!({"id": Platform::Photos.plugin_id(), "name": "Google Photos Picker", "picker": true}),
    ]
}
