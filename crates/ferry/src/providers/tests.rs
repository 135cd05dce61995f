//! The provider options: which flags enable a provider, the endpoints they set, and the
//! configuration errors.

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
