//! `ferry serve`'s cloud-provider options: each provider's OAuth app (enabled when its key and
//! secret are both set; `--secret` is then required) and every provider endpoint, overridable
//! for tests and proxies. Companion's `COMPANION_GOOGLE_KEY`... names are mapped in `compat`.

mod config;
#[cfg(test)]
mod tests;

use clap::Args;

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
