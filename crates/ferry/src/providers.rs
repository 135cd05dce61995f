//! `ferry serve`'s cloud-provider options: each provider's OAuth app (enabled when its key and
//! secret are both set; `--secret` is then required) and every provider endpoint, overridable
//! for tests and proxies. Companion's `COMPANION_GOOGLE_KEY`... names are mapped in `compat`.

use clap::Args;
use ferry_companion::providers::ProvidersConfig;
use ferry_companion::providers::config::{Endpoints, OAuthApp};

/// Options of the cloud providers (Google Drive, Instagram, Box, Unsplash, Dropbox, OneDrive,
/// Zoom, Facebook, WebDAV).
#[derive(Clone, Default, Args)]
pub struct ProviderArgs {
    /// Google OAuth client id: with --google-secret (and --secret) enables Google Drive
    /// (`drive`). Register `{public URL}/drive/redirect` as its redirect URI (see docs/server.md).
    #[arg(long, env = "FERRY_GOOGLE_KEY")]
    pub google_key: Option<String>,

    /// Google OAuth client secret (never logged).
    #[arg(long, env = "FERRY_GOOGLE_SECRET", hide_env_values = true)]
    pub google_secret: Option<String>,

    /// Instagram app id (Instagram API with Instagram Login): with --instagram-secret (and
    /// --secret) enables Instagram (`instagram`). Redirect URI: `{public URL}/instagram/redirect`.
    #[arg(long, env = "FERRY_INSTAGRAM_KEY")]
    pub instagram_key: Option<String>,

    /// Instagram app secret (never logged).
    #[arg(long, env = "FERRY_INSTAGRAM_SECRET", hide_env_values = true)]
    pub instagram_secret: Option<String>,

    /// Box OAuth client id: with --box-secret (and --secret) enables Box (`box`). Redirect
    /// URI: `{public URL}/box/redirect`.
    #[arg(long, env = "FERRY_BOX_KEY")]
    pub box_key: Option<String>,

    /// Box OAuth client secret (never logged).
    #[arg(long, env = "FERRY_BOX_SECRET", hide_env_values = true)]
    pub box_secret: Option<String>,

    /// Microsoft application (client) id: with --onedrive-secret (and --secret) enables
    /// OneDrive and SharePoint (`onedrive`). Redirect URI: `{public URL}/onedrive/redirect`.
    #[arg(long, env = "FERRY_ONEDRIVE_KEY")]
    pub onedrive_key: Option<String>,

    /// Microsoft client secret (never logged).
    #[arg(long, env = "FERRY_ONEDRIVE_SECRET", hide_env_values = true)]
    pub onedrive_secret: Option<String>,

    /// Google's OAuth authorize endpoint.
    #[arg(
        long,
        env = "FERRY_GOOGLE_AUTH_URL",
        default_value = "https://accounts.google.com/o/oauth2/v2/auth"
    )]
    pub google_auth_url: String,

    /// Google's OAuth token endpoint (revocation goes to `revoke` beside it).
    #[arg(
        long,
        env = "FERRY_GOOGLE_TOKEN_URL",
        default_value = "https://oauth2.googleapis.com/token"
    )]
    pub google_token_url: String,

    /// Google Drive API base (`/drive/v3/...` is appended).
    #[arg(
        long,
        env = "FERRY_GOOGLE_API_URL",
        default_value = "https://www.googleapis.com"
    )]
    pub google_api_url: String,

    /// Instagram's OAuth authorize endpoint.
    #[arg(
        long,
        env = "FERRY_INSTAGRAM_AUTH_URL",
        default_value = "https://www.instagram.com/oauth/authorize"
    )]
    pub instagram_auth_url: String,

    /// Instagram's code-exchange endpoint.
    #[arg(
        long,
        env = "FERRY_INSTAGRAM_TOKEN_URL",
        default_value = "https://api.instagram.com/oauth/access_token"
    )]
    pub instagram_token_url: String,

    /// Instagram Graph API base (media, long-lived token exchange and refresh).
    #[arg(
        long,
        env = "FERRY_INSTAGRAM_GRAPH_URL",
        default_value = "https://graph.instagram.com"
    )]
    pub instagram_graph_url: String,

    /// Box's OAuth authorize endpoint.
    #[arg(
        long,
        env = "FERRY_BOX_AUTH_URL",
        default_value = "https://account.box.com/api/oauth2/authorize"
    )]
    pub box_auth_url: String,

    /// Box's OAuth token endpoint (revocation goes to `revoke` beside it).
    #[arg(
        long,
        env = "FERRY_BOX_TOKEN_URL",
        default_value = "https://api.box.com/oauth2/token"
    )]
    pub box_token_url: String,

    /// Box API base (`/2.0/...` is appended).
    #[arg(long, env = "FERRY_BOX_API_URL", default_value = "https://api.box.com")]
    pub box_api_url: String,
    /// Unsplash Access Key: enables the Unsplash search provider (`unsplash`); no sign-in, the
    /// server sends it with every call. Register an app at https://unsplash.com/oauth/applications.
    #[arg(long, env = "FERRY_UNSPLASH_KEY", hide_env_values = true)]
    pub unsplash_key: Option<String>,

    /// Unsplash Secret key: accepted for Companion parity, unused (search needs only the
    /// Access Key; never logged).
    #[arg(long, env = "FERRY_UNSPLASH_SECRET", hide_env_values = true)]
    pub unsplash_secret: Option<String>,

    /// Unsplash API base (`/search/photos`, `/photos/{id}` are appended).
    #[arg(
        long,
        env = "FERRY_UNSPLASH_API_URL",
        default_value = "https://api.unsplash.com"
    )]
    pub unsplash_api_url: String,
    /// Dropbox app key: with --dropbox-secret (and --secret) enables Dropbox (`dropbox`).
    /// Redirect URI: `{public URL}/dropbox/redirect`; scopes `files.metadata.read
    /// files.content.read account_info.read`.
    #[arg(long, env = "FERRY_DROPBOX_KEY")]
    pub dropbox_key: Option<String>,

    /// Dropbox app secret (never logged).
    #[arg(long, env = "FERRY_DROPBOX_SECRET", hide_env_values = true)]
    pub dropbox_secret: Option<String>,

    /// Dropbox's OAuth authorize endpoint.
    #[arg(
        long,
        env = "FERRY_DROPBOX_AUTH_URL",
        default_value = "https://www.dropbox.com/oauth2/authorize"
    )]
    pub dropbox_auth_url: String,

    /// Dropbox's OAuth token endpoint (code exchange and refresh).
    #[arg(
        long,
        env = "FERRY_DROPBOX_TOKEN_URL",
        default_value = "https://api.dropboxapi.com/oauth2/token"
    )]
    pub dropbox_token_url: String,

    /// Dropbox API base for RPC calls (`/2/files/list_folder`, ...).
    #[arg(
        long,
        env = "FERRY_DROPBOX_API_URL",
        default_value = "https://api.dropboxapi.com"
    )]
    pub dropbox_api_url: String,

    /// Dropbox content host (downloads and thumbnails, `/2/files/download`, ...).
    #[arg(
        long,
        env = "FERRY_DROPBOX_CONTENT_URL",
        default_value = "https://content.dropboxapi.com"
    )]
    pub dropbox_content_url: String,

    /// Microsoft identity platform's authorize endpoint.
    #[arg(
        long,
        env = "FERRY_ONEDRIVE_AUTH_URL",
        default_value = "https://login.microsoftonline.com/common/oauth2/v2.0/authorize"
    )]
    pub onedrive_auth_url: String,

    /// Microsoft identity platform's token endpoint.
    #[arg(
        long,
        env = "FERRY_ONEDRIVE_TOKEN_URL",
        default_value = "https://login.microsoftonline.com/common/oauth2/v2.0/token"
    )]
    pub onedrive_token_url: String,

    /// Microsoft Graph base (`/v1.0/...` is appended).
    #[arg(
        long,
        env = "FERRY_ONEDRIVE_API_URL",
        default_value = "https://graph.microsoft.com"
    )]
    pub onedrive_api_url: String,

    /// Zoom OAuth client id: with --zoom-secret (and --secret) enables Zoom cloud recordings
    /// (`zoom`). Redirect URI: `{public URL}/zoom/redirect`; scopes are set in the Zoom app.
    #[arg(long, env = "FERRY_ZOOM_KEY")]
    pub zoom_key: Option<String>,

    /// Zoom OAuth client secret (never logged).
    #[arg(long, env = "FERRY_ZOOM_SECRET", hide_env_values = true)]
    pub zoom_secret: Option<String>,

    /// Zoom's OAuth authorize endpoint.
    #[arg(
        long,
        env = "FERRY_ZOOM_AUTH_URL",
        default_value = "https://zoom.us/oauth/authorize"
    )]
    pub zoom_auth_url: String,

    /// Zoom's OAuth token endpoint (revocation goes to `revoke` beside it).
    #[arg(
        long,
        env = "FERRY_ZOOM_TOKEN_URL",
        default_value = "https://zoom.us/oauth/token"
    )]
    pub zoom_token_url: String,

    /// Zoom API base (`/v2/...` is appended).
    #[arg(
        long,
        env = "FERRY_ZOOM_API_URL",
        default_value = "https://api.zoom.us"
    )]
    pub zoom_api_url: String,

    /// Facebook app id: with --facebook-secret (and --secret) enables Facebook albums and
    /// photos (`facebook`). Redirect URI: `{public URL}/facebook/redirect`; permissions `email`
    /// and `user_photos` (the latter needs Meta's app review).
    #[arg(long, env = "FERRY_FACEBOOK_KEY")]
    pub facebook_key: Option<String>,

    /// Facebook app secret (never logged; it also signs every Graph call's `appsecret_proof`).
    #[arg(long, env = "FERRY_FACEBOOK_SECRET", hide_env_values = true)]
    pub facebook_secret: Option<String>,

    /// Facebook Login's OAuth dialog.
    #[arg(
        long,
        env = "FERRY_FACEBOOK_AUTH_URL",
        default_value = "https://www.facebook.com/v25.0/dialog/oauth"
    )]
    pub facebook_auth_url: String,

    /// Facebook Graph API base (`/v25.0/...` is appended; the code exchange is there too).
    #[arg(
        long,
        env = "FERRY_FACEBOOK_API_URL",
        default_value = "https://graph.facebook.com"
    )]
    pub facebook_api_url: String,

    /// Enables WebDAV (`webdav`): people type a server URL (Nextcloud, ownCloud, any RFC 4918
    /// server; a public share link, or `https://user:app-password@host/...`). No app to
    /// register; --secret seals the credentials. The URL is held to the link-import address
    /// rules (--allow-local-urls to reach private addresses).
    #[arg(long, env = "FERRY_WEBDAV")]
    pub webdav: bool,
}

impl std::fmt::Debug for ProviderArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderArgs")
            .field("google_key", &self.google_key)
            .field(
                "google_secret",
                &self.google_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("instagram_key", &self.instagram_key)
            .field(
                "instagram_secret",
                &self.instagram_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("box_key", &self.box_key)
            .field(
                "box_secret",
                &self.box_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("onedrive_key", &self.onedrive_key)
            .field(
                "onedrive_secret",
                &self.onedrive_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("google_api_url", &self.google_api_url)
            .field("instagram_graph_url", &self.instagram_graph_url)
            .field(
                "unsplash_key",
                &self.unsplash_key.as_ref().map(|_| "<redacted>"),
            )
            .field("unsplash_api_url", &self.unsplash_api_url)
            .field("dropbox_key", &self.dropbox_key)
            .field(
                "dropbox_secret",
                &self.dropbox_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("dropbox_api_url", &self.dropbox_api_url)
            .field("zoom_key", &self.zoom_key)
            .field(
                "zoom_secret",
                &self.zoom_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("facebook_key", &self.facebook_key)
            .field(
                "facebook_secret",
                &self.facebook_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("webdav", &self.webdav)
            .finish_non_exhaustive()
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        providers: ProviderArgs,
    }

    #[test]
    fn a_provider_is_enabled_by_key_and_secret_together() {
        let cli = Cli::parse_from(["x", "--google-key", "k", "--google-secret", "s"]);
        let config = cli
            .providers
            .to_config(Some("https://f.example/"))
            .expect("valid");
        let drive = config.setup("drive").expect("drive enabled");
        assert_eq!(drive.app.key, "k");
        assert!(config.setup("instagram").is_none());
        assert!(config.setup("unsplash").is_none());
        assert_eq!(config.public_url.as_deref(), Some("https://f.example"));
        assert_eq!(drive.endpoints.api_url, "https://www.googleapis.com");
        let boxed = Cli::parse_from(["x", "--box-key", "bk", "--box-secret", "bs"]);
        let config = boxed.providers.to_config(None).expect("valid");
        let setup = config.setup("box").expect("box enabled");
        assert_eq!(
            (
                setup.app.key.as_str(),
                setup.endpoints.token_url.as_str(),
                setup.endpoints.api_url.as_str()
            ),
            (
                "bk",
                "https://api.box.com/oauth2/token",
                "https://api.box.com"
            )
        );
        let dropbox = Cli::parse_from(["x", "--dropbox-key", "k", "--dropbox-secret", "s"]);
        let config = dropbox.providers.to_config(None).expect("valid");
        let endpoints = &config.setup("dropbox").expect("dropbox enabled").endpoints;
        assert_eq!(
            (endpoints.api_url.as_str(), endpoints.content_url.as_str()),
            (
                "https://api.dropboxapi.com",
                "https://content.dropboxapi.com"
            )
        );
        let zoom = Cli::parse_from(["x", "--zoom-key", "zk", "--zoom-secret", "zs"]);
        let config = zoom.providers.to_config(None).expect("valid");
        let endpoints = &config.setup("zoom").expect("zoom enabled").endpoints;
        assert_eq!(
            (
                endpoints.auth_url.as_str(),
                endpoints.token_url.as_str(),
                endpoints.api_url.as_str()
            ),
            (
                "https://zoom.us/oauth/authorize",
                "https://zoom.us/oauth/token",
                "https://api.zoom.us"
            )
        );
        let fb = Cli::parse_from(["x", "--facebook-key", "fk", "--facebook-secret", "fs"]);
        let config = fb.providers.to_config(None).expect("valid");
        let endpoints = &config
            .setup("facebook")
            .expect("facebook enabled")
            .endpoints;
        assert_eq!(
            (endpoints.auth_url.as_str(), endpoints.api_url.as_str()),
            (
                "https://www.facebook.com/v25.0/dialog/oauth",
                "https://graph.facebook.com"
            )
        );
        let half = Cli::parse_from(["x", "--instagram-key", "k"]);
        assert_eq!(
            half.providers.to_config(None).err().as_deref(),
            Some("--instagram-key and --instagram-secret must be set together")
        );
    }

    #[test]
    fn unsplash_is_enabled_by_its_access_key_alone() {
        let cli = Cli::parse_from(["x", "--unsplash-key", "access"]);
        let config = cli.providers.to_config(None).expect("valid");
        let unsplash = config.setup("unsplash").expect("unsplash enabled");
        assert_eq!(unsplash.app.key, "access");
        assert_eq!(unsplash.endpoints.api_url, "https://api.unsplash.com");
    }

    #[test]
    fn webdav_is_enabled_by_its_switch_alone() {
        let off = Cli::parse_from(["x"])
            .providers
            .to_config(None)
            .expect("valid");
        assert!(off.setup("webdav").is_none());
        let on = Cli::parse_from(["x", "--webdav"])
            .providers
            .to_config(None)
            .expect("valid");
        assert!(on.setup("webdav").is_some());
    }

    #[test]
    fn an_enabled_provider_without_secret_fails_at_start() {
        let cli = Cli::parse_from([
            "x",
            "--google-key",
            "k",
            "--google-secret",
            "s",
            "--box-key",
            "k",
            "--box-secret",
            "s",
        ]);
        let config = ferry_companion::CompanionConfig {
            providers: cli.providers.to_config(None).expect("valid"),
            ..ferry_companion::CompanionConfig::default()
        };
        let Err(err) = ferry_companion::router(config) else {
            panic!("a provider without --secret must be refused");
        };
        let err = err.to_string();
        assert!(err.contains("--secret (FERRY_SECRET) is not set"), "{err}");
        // The message names what was enabled, whichever providers those are.
        assert!(err.contains("enabled (box, drive)"), "{err}");
    }
}
