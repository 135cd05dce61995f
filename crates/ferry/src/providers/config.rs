//! From `ferry serve`'s provider options to the companion's [`ProvidersConfig`]: one row per
//! OAuth provider (key, secret, endpoints), then the providers enabled otherwise (Unsplash by its
//! Access Key alone, WebDAV by its switch).

use ferry_companion::providers::ProvidersConfig;
use ferry_companion::providers::config::{Endpoints, OAuthApp};

use super::ProviderArgs;

/// The app of `key` + `secret`; one without the other is a configuration error.
fn app(
    name: &str,
    key: &Option<String>,
    secret: &Option<String>,
) -> Result<Option<OAuthApp>, String> {
    let key = key.as_deref().map(str::trim).filter(|k| !k.is_empty());
    let secret = secret.as_deref().map(str::trim).filter(|s| !s.is_empty());
    match (key, secret) {
        (Some(key), Some(secret)) => Ok(Some(OAuthApp {
            key: key.into(),
            secret: secret.into(),
        })),
        (None, None) => Ok(None),
        _ => Err(format!(
            "--{name}-key and --{name}-secret must be set together"
        )),
    }
}

impl ProviderArgs {
    /// The library settings; `public_url` (`--public-url`) is the base of redirect URIs.
    pub fn to_config(&self, public_url: Option<&str>) -> Result<ProvidersConfig, String> {
        let mut config = ProvidersConfig {
            public_url: public_url.map(|u| u.trim_end_matches('/').to_owned()),
            ..ProvidersConfig::default()
        };
        // (provider id, flag prefix, key, secret, endpoints): one row per provider.
        let rows = [
            (
                "drive",
                "google",
                &self.google_key,
                &self.google_secret,
                Endpoints::new(
                    &self.google_auth_url,
                    &self.google_token_url,
                    &self.google_api_url,
                ),
            ),
            (
                "instagram",
                "instagram",
                &self.instagram_key,
                &self.instagram_secret,
                Endpoints::new(
                    &self.instagram_auth_url,
                    &self.instagram_token_url,
                    &self.instagram_graph_url,
                ),
            ),
            (
                "box",
                "box",
                &self.box_key,
                &self.box_secret,
                Endpoints::new(&self.box_auth_url, &self.box_token_url, &self.box_api_url),
            ),
            (
                "dropbox",
                "dropbox",
                &self.dropbox_key,
                &self.dropbox_secret,
                Endpoints::new(
                    &self.dropbox_auth_url,
                    &self.dropbox_token_url,
                    &self.dropbox_api_url,
                )
                .with_content(&self.dropbox_content_url),
            ),
            (
                "onedrive",
                "onedrive",
                &self.onedrive_key,
                &self.onedrive_secret,
                Endpoints::new(
                    &self.onedrive_auth_url,
                    &self.onedrive_token_url,
                    &self.onedrive_api_url,
                ),
            ),
            (
                "zoom",
                "zoom",
                &self.zoom_key,
                &self.zoom_secret,
                Endpoints::new(
                    &self.zoom_auth_url,
                    &self.zoom_token_url,
                    &self.zoom_api_url,
                ),
            ),
            (
                "facebook",
                "facebook",
                &self.facebook_key,
                &self.facebook_secret,
                // The code exchange is on the Graph host (`/v25.0/oauth/access_token`).
                Endpoints::new(&self.facebook_auth_url, "", &self.facebook_api_url),
            ),
        ];
        for (id, flag, key, secret, endpoints) in rows {
            if let Some(app) = app(flag, key, secret)? {
                config.enable(id, app, endpoints);
            }
        }
        // Unsplash's search needs only the Access Key (the secret is for user OAuth).
        if let Some(key) = self
            .unsplash_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
        {
            let app = OAuthApp {
                key: key.into(),
                secret: self.unsplash_secret.clone().unwrap_or_default(),
            };
            config.enable(
                "unsplash",
                app,
                Endpoints::new("", "", &self.unsplash_api_url),
            );
        }
        // WebDAV has no app: the switch alone enables it.
        if self.webdav {
            let app = OAuthApp {
                key: String::new(),
                secret: String::new(),
            };
            config.enable("webdav", app, Endpoints::default());
        }
        Ok(config)
    }
}
