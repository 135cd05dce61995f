//! `ferry serve`'s Google Picker options: the switch for `POST /google-picker/get` (Uppy's
//! Google Drive Picker and Google Photos Picker; Companion's
//! `COMPANION_ENABLE_GOOGLE_PICKER_ENDPOINT=true` is mapped onto it in `compat`) and the
//! Photos endpoints, overridable for tests and proxies. Drive downloads use `--google-api-url`.

use clap::Args;
use ferry_companion::providers::google_picker::GooglePickerConfig;

/// Options of the Google Picker imports.
#[derive(Clone, Debug, Default, Args)]
pub struct GooglePickerArgs {
    /// Enable `POST /google-picker/get`, which imports what a page picked with Google's Drive
    /// Picker or Photos Picker, downloaded with the page's own access token (needs --secret).
    /// The page needs Google's client id, API key and app id; this server needs no Google key.
    #[arg(long, env = "FERRY_GOOGLE_PICKER")]
    pub google_picker: bool,

    /// Google Photos Picker API base (`/v1/mediaItems` is appended), to renew expired media URLs.
    #[arg(
        long,
        env = "FERRY_GOOGLE_PHOTOS_PICKER_URL",
        default_value = "https://photospicker.googleapis.com"
    )]
    pub google_photos_picker_url: String,

    /// The one origin Google Photos media URLs may have instead of Google's media hosts
    /// (`https://lhN.googleusercontent.com`): a proxy or a test fake [default: Google's hosts].
    #[arg(long, env = "FERRY_GOOGLE_PHOTOS_CONTENT_URL")]
    pub google_photos_content_url: Option<String>,
}

impl GooglePickerArgs {
    /// The library settings when enabled; Drive downloads go to `drive_api_url`.
    pub fn to_config(&self, drive_api_url: &str) -> Option<GooglePickerConfig> {
        self.google_picker.then(|| GooglePickerConfig {
            drive_api_url: drive_api_url.to_owned(),
            photos_api_url: self.google_photos_picker_url.clone(),
            photos_content_url: self
                .google_photos_content_url
                .clone()
                .filter(|u| !u.trim().is_empty()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        picker: GooglePickerArgs,
    }

    #[test]
    fn the_route_is_off_by_default_and_on_with_google_endpoints() {
        let off = Cli::parse_from(["x"]);
        assert_eq!(off.picker.to_config("https://www.googleapis.com"), None);
        let on = Cli::parse_from(["x", "--google-picker"]);
        assert_eq!(
            on.picker.to_config("https://www.googleapis.com"),
            Some(GooglePickerConfig::default())
        );
    }
}
