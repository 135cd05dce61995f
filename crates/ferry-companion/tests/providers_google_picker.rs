//! Contract tests of `POST /google-picker/get` (Uppy's Google Drive Picker and Google Photos
//! Picker) over real HTTP against the testkit's fake Google (Drive v3 `alt=media`) and fake
//! Photos Picker API: picks imported byte-exact into tus, an expired token refused as an auth
//! error, media URLs on any other host refused before anything is fetched, an expired media
//! URL renewed from the picking session when a download resumes, bad input, and the route
//! listed in `GET /providers` only when enabled.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use common::{TusDest, download, finish, socket};
use ferry_companion::egress::StaticResolver;
use ferry_companion::providers::google_picker::GooglePickerConfig;
use ferry_companion::{AppState, CompanionConfig};
use ferry_testkit::fake::google::FakeGoogle;
use ferry_testkit::fake::google_photos::FakePhotos;
use ferry_testkit::{TestServer, random_bytes, sha256_hex};
use serde_json::{Value, json};

struct Env {
    google: FakeGoogle,
    photos: FakePhotos,
    tus: TusDest,
    companion: TestServer,
}

fn config(tus: &TusDest, picker: Option<GooglePickerConfig>) -> CompanionConfig {
    CompanionConfig {
        upload_urls: vec![tus.endpoint()],
        secret: Some(ferry_auth::Secret::new("picker-test-secret")),
        retry_delays: vec![std::time::Duration::ZERO; 3],
        stall_timeout: std::time::Duration::from_secs(5),
        google_picker: picker,
        ..CompanionConfig::default()
    }
}

fn serve(config: CompanionConfig) -> impl std::future::Future<Output = TestServer> {
    let state =
        AppState::with_resolver(config, Arc::new(StaticResolver::default())).expect("valid config");
    TestServer::start(ferry_companion::routes(state))
}

async fn start() -> Env {
    let google = FakeGoogle::start("picker-client", "unused").await;
    let photos = FakePhotos::start(google.state.clone()).await;
    let tus = TusDest::start().await;
    let picker = GooglePickerConfig {
        drive_api_url: google.api_url(),
        photos_api_url: photos.api_url(),
        photos_content_url: Some(photos.content_url()),
    };
    let companion = serve(config(&tus, Some(picker))).await;
    Env {
        google,
        photos,
        tus,
        companion,
    }
}

async fn post(companion: &TestServer, body: Value) -> (u16, Value) {
    common::post_json(companion, "/google-picker/get", body).await
}

/// Uppy's remote body for a pick, with the tus destination.
fn body(env: &Env, pick: Value, name: &str, size: usize) -> Value {
    let mut b = json!({"protocol": "tus", "endpoint": env.tus.endpoint(), "size": size,
        "metadata": {"name": name, "type": "application/octet-stream"}, "headers": {}});
    for (k, v) in pick.as_object().expect("pick") {
        b[k] = v.clone();
    }
    b
}

/// What the page does with the Photos Picker API: a session, its poll, its items.
async fn picked_items(env: &Env, token: &str) -> (String, Vec<Value>) {
    let http = reqwest::Client::new();
    let api = env.photos.api_url();
    let session: Value = http
        .post(format!("{api}/v1/sessions"))
        .bearer_auth(token)
        .send()
        .await
        .expect("session")
        .json()
        .await
        .expect("json");
    let id = session["id"].as_str().expect("id").to_owned();
    let polled: Value = http
        .get(format!("{api}/v1/sessions/{id}"))
        .bearer_auth(token)
        .send()
        .await
        .expect("poll")
        .json()
        .await
        .expect("json");
    assert_eq!(polled["mediaItemsSet"], true);
    let items: Value = http
        .get(format!("{api}/v1/mediaItems?sessionId={id}&pageSize=100"))
        .bearer_auth(token)
        .send()
        .await
        .expect("items")
        .json()
        .await
        .expect("json");
    (id, items["mediaItems"].as_array().expect("items").clone())
}

/// Runs the transfer of `token` to its end: the last frame.
async fn run(env: &Env, token: &str) -> Value {
    let mut ws = socket(&env.companion, token).await;
    finish(&mut ws).await.0
}

async fn imported(env: &Env, body: Value) -> Vec<u8> {
    let (status, answer) = post(&env.companion, body).await;
    assert_eq!(status, 200, "{answer}");
    let last = run(env, answer["token"].as_str().expect("token")).await;
    assert_eq!(last["action"], "success", "{last}");
    download(last["payload"]["url"].as_str().expect("url")).await
}

#[tokio::test]
async fn drive_and_photos_picks_are_imported_byte_exact_into_tus() {
    let env = start().await;
    let token = env.google.state.issue_access_token();
    let pdf = random_bytes(300_000);
    let file = env
        .google
        .state
        .add_file("root", "report.pdf", "application/pdf", pdf.clone());
    let drive = json!({"platform": "drive", "accessToken": token, "fileId": file});
    let stored = imported(&env, body(&env, drive, "report.pdf", pdf.len())).await;
    assert_eq!(sha256_hex(&stored), sha256_hex(&pdf));

    let photo = random_bytes(200_000);
    let video = random_bytes(150_000);
    env.photos
        .state
        .add("IMG_1.jpg", "image/jpeg", photo.clone());
    env.photos
        .state
        .add("VID_1.mp4", "video/mp4", video.clone());
    let (_, items) = picked_items(&env, &token).await;
    for (item, want) in items.iter().zip([&photo, &video]) {
        // Uppy's picker: `=dv` for videos, `=d` for photos, the media item id as `fileId`.
        let tail = if item["type"] == "VIDEO" { "=dv" } else { "=d" };
        let url = format!(
            "{}{tail}",
            item["mediaFile"]["baseUrl"].as_str().expect("url")
        );
        let pick =
            json!({"platform": "photos", "accessToken": token, "fileId": item["id"], "url": url});
        let name = item["mediaFile"]["filename"].as_str().expect("name");
        let stored = imported(&env, body(&env, pick, name, want.len())).await;
        assert_eq!(sha256_hex(&stored), sha256_hex(want), "{name}");
    }

    let providers: Value = reqwest::get(env.companion.url("/providers"))
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    let list = providers["providers"].as_array().expect("list");
    for id in ["google-drive-picker", "google-photos-picker"] {
        assert!(
            list.iter().any(|p| p["id"] == id && p["picker"] == true),
            "{providers}"
        );
    }
}

#[tokio::test]
async fn an_expired_token_is_an_auth_error() {
    let env = start().await;
    let token = env.google.state.issue_access_token();
    let file =
        env.google
            .state
            .add_file("root", "a.bin", "application/octet-stream", vec![1u8; 10]);
    env.photos
        .state
        .add("IMG_2.jpg", "image/jpeg", vec![2u8; 10]);
    let (_, items) = picked_items(&env, &token).await;
    let url = format!(
        "{}=d",
        items[0]["mediaFile"]["baseUrl"].as_str().expect("url")
    );
    env.google.state.expire(&token);
    for pick in [
        json!({"platform": "drive", "accessToken": token, "fileId": file}),
        json!({"platform": "photos", "accessToken": token, "fileId": items[0]["id"], "url": url}),
    ] {
        let (status, answer) = post(&env.companion, body(&env, pick, "x", 10)).await;
        assert_eq!(
            (status, answer),
            (
                401,
                json!({"message": "HTTP 401: invalid access token detected by Provider"})
            )
        );
    }
}

#[tokio::test]
async fn a_media_url_on_any_other_host_is_refused_and_nothing_fetched() {
    let env = start().await;
    let token = env.google.state.issue_access_token();
    let id = env
        .photos
        .state
        .add("IMG_3.jpg", "image/jpeg", vec![3u8; 10]);
    let calls = env.google.state.api_calls.load(Ordering::SeqCst);
    // A URL the client chose, on another origin than the configured media host.
    let foreign = format!("{}/media/0/{id}=d", env.google.api_url());
    let pick = json!({"platform": "photos", "accessToken": token, "fileId": id, "url": foreign});
    let (status, answer) = post(&env.companion, body(&env, pick, "x", 10)).await;
    assert_eq!(
        (status, answer),
        (
            400,
            json!({"message": "Invalid URL: not on the configured Google Photos host"})
        )
    );
    assert_eq!(env.google.state.api_calls.load(Ordering::SeqCst), calls);
    assert_eq!(env.photos.state.media_requests.load(Ordering::SeqCst), 0);

    // Without an override, only Google's media hosts: the fake's own URL is refused too.
    let plain = serve(config(&env.tus, Some(GooglePickerConfig::default()))).await;
    let url = format!("{}=d", env.photos.state.base_url(&id));
    let pick = json!({"platform": "photos", "accessToken": token, "fileId": id, "url": url});
    let (status, answer) = post(&plain, body(&env, pick, "x", 10)).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(
        answer["message"],
        "Invalid URL: only Google Photos media URLs (https://lhN.googleusercontent.com/...) are accepted"
    );
    assert_eq!(env.photos.state.media_requests.load(Ordering::SeqCst), 0);
}

/// A download broken off after its media URL expired: resumed from a renewed URL when the pick
/// names its session, else failed saying to pick again.
#[tokio::test]
async fn an_expired_media_url_is_renewed_from_the_session_when_the_download_resumes() {
    let env = start().await;
    let token = env.google.state.issue_access_token();
    let photo = random_bytes(400_000);
    env.photos
        .state
        .add("IMG_4.jpg", "image/jpeg", photo.clone());
    for with_session in [true, false] {
        let (session, items) = picked_items(&env, &token).await;
        let url = format!(
            "{}=d",
            items[0]["mediaFile"]["baseUrl"].as_str().expect("url")
        );
        let mut pick = json!({"platform": "photos", "accessToken": token, "fileId": items[0]["id"], "url": url});
        if with_session {
            pick["sessionId"] = json!(session);
        }
        env.photos
            .state
            .faults
            .cut_after
            .store(150_000, Ordering::SeqCst);
        let (status, answer) =
            post(&env.companion, body(&env, pick, "IMG_4.jpg", photo.len())).await;
        assert_eq!(status, 200, "{answer}");
        // The first response is already open; every URL listed so far now expires.
        env.photos.state.expire_urls();
        let last = run(&env, answer["token"].as_str().expect("token")).await;
        if with_session {
            assert_eq!(last["action"], "success", "{last}");
            let stored = download(last["payload"]["url"].as_str().expect("url")).await;
            assert_eq!(sha256_hex(&stored), sha256_hex(&photo));
        } else {
            assert_eq!(last["action"], "error", "{last}");
            assert_eq!(
                last["payload"]["error"]["message"],
                "The Google Photos link has expired (they last an hour); pick the file again",
                "{last}"
            );
        }
    }
}

#[tokio::test]
async fn bad_input_is_a_400_naming_the_field() {
    let env = start().await;
    let cases = [
        (
            json!({"accessToken": "t", "fileId": "f"}),
            "Invalid request body: platform must be \"drive\" or \"photos\"",
        ),
        (
            json!({"platform": "dropbox", "accessToken": "t", "fileId": "f"}),
            "Invalid request body: platform must be \"drive\" or \"photos\"",
        ),
        (
            json!({"platform": "drive", "fileId": "f"}),
            "Invalid request body: accessToken is required",
        ),
        (
            json!({"platform": "drive", "accessToken": 7, "fileId": "f"}),
            "Invalid request body: accessToken must be a string of at most 8192 characters",
        ),
        (
            json!({"platform": "drive", "accessToken": "t"}),
            "Invalid request body: fileId is required for drive",
        ),
        (
            json!({"platform": "photos", "accessToken": "t", "fileId": "m"}),
            "Invalid request body: url is required for photos",
        ),
        (
            json!({"platform": "drive", "accessToken": "t", "fileId": "../about"}),
            "Invalid file id",
        ),
        (
            json!({"platform": "photos", "accessToken": "t", "url": "ftp://x/y=d"}),
            "Invalid URL: not on the configured Google Photos host",
        ),
    ];
    for (pick, message) in cases {
        let (status, answer) = post(&env.companion, body(&env, pick.clone(), "x", 1)).await;
        assert_eq!(
            (status, answer),
            (400, json!({"message": message})),
            "{pick}"
        );
    }
    let resp = reqwest::Client::new()
        .post(env.companion.url("/google-picker/get"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), 400);
    assert_eq!(
        resp.json::<Value>().await.expect("json"),
        json!({"message": "Invalid request body"})
    );
    assert_eq!(env.photos.state.media_requests.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_route_is_off_unless_enabled() {
    let tus = TusDest::start().await;
    let companion = serve(config(&tus, None)).await;
    let pick = json!({"platform": "drive", "accessToken": "t", "fileId": "f"});
    let (status, answer) = post(&companion, pick).await;
    assert_eq!(
        (status, answer),
        (
            404,
            json!({"message": "The Google Picker route is not enabled on this server"})
        )
    );
    let providers: Value = reqwest::get(companion.url("/providers"))
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(providers, json!({"providers": []}));
    // Enabled without --secret: refused at start (the pickers' tokens are sealed in specs).
    let mut no_secret = config(&tus, Some(GooglePickerConfig::default()));
    no_secret.secret = None;
    let err = ferry_companion::router(no_secret).expect_err("needs --secret");
    assert!(
        err.to_string()
            .contains("--secret (FERRY_SECRET) is not set"),
        "{err}"
    );
}
