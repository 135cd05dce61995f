//! Contract tests of the `webdav` provider over real HTTP against the testkit's fake WebDAV
//! server (Nextcloud's layout): sign-in through Companion's `POST /webdav/simple-auth` with a
//! user + app password in the URL and with a public share link, PROPFIND listings in
//! Companion's shape, byte-exact imports into tus (a cut body resumed with `Range`), a wrong
//! password and a revoked one, rate limits, and bad input: malformed URLs, other schemes,
//! private addresses (literal and by name), paths climbing out of the collection, oversized and
//! deeply nested PROPFIND answers.
//!
//! The fake listens on 127.0.0.2, exempted from the egress ban the way the link-import tests do
//! (`exempt_ips`); 127.0.0.1 stays refused, so a second fake there counts what reaches it.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::{TusDest, download, finish, post_json, socket};
use ferry_companion::egress::StaticResolver;
use ferry_companion::providers::ProvidersConfig;
use ferry_companion::providers::config::{Endpoints, OAuthApp};
use ferry_companion::providers::ratelimit::RateLimits;
use ferry_companion::{AppState, CompanionConfig};
use ferry_testkit::fake::webdav::FakeWebDav;
use ferry_testkit::{TestServer, random_bytes, sha256_hex};
use serde_json::{Value, json};

const SECRET: &str = "webdav-test-secret";
const USER: &str = "alice";
const APP_PASSWORD: &str = "Xk2p-9QwE-app pass";

struct Env {
    dav: FakeWebDav,
    tus: TusDest,
    companion: TestServer,
}

async fn start() -> Env {
    let dav = FakeWebDav::start_on("127.0.0.2:0", USER, APP_PASSWORD).await;
    let tus = TusDest::start().await;
    let mut providers = ProvidersConfig {
        rate_limits: RateLimits {
            backoff: vec![Duration::from_millis(10), Duration::from_millis(20)],
            ..RateLimits::default()
        },
        ..ProvidersConfig::default()
    };
    let app = OAuthApp {
        key: String::new(),
        secret: String::new(),
    };
    providers.enable("webdav", app, Endpoints::default());
    // The companion knows its own address: list answers build links for its own host only.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let own = format!("http://{}", listener.local_addr().expect("addr"));
    let config = CompanionConfig {
        own_origins: vec![own],
        allow_local_urls: false,
        exempt_ips: vec![common::ip("127.0.0.2")],
        upload_urls: vec![tus.endpoint()],
        secret: Some(ferry_auth::Secret::new(SECRET)),
        retry_delays: vec![Duration::ZERO, Duration::from_millis(50)],
        stall_timeout: Duration::from_secs(5),
        providers,
        ..CompanionConfig::default()
    };
    // `dav.test` is the fake (a public host, by exemption); `intranet.test` is loopback.
    let resolver = StaticResolver::default()
        .with("dav.test", &[common::ip("127.0.0.2")])
        .with("intranet.test", &[common::ip("127.0.0.1")]);
    let state = AppState::with_resolver(config, Arc::new(resolver)).expect("valid config");
    let companion = TestServer::serve(listener, ferry_companion::routes(state));
    Env {
        dav,
        tus,
        companion,
    }
}

/// `POST /webdav/simple-auth` with `form`: (status, answer).
async fn sign_in(env: &Env, form: Value) -> (u16, Value) {
    post_json(
        &env.companion,
        "/webdav/simple-auth",
        json!({ "form": form }),
    )
    .await
}

/// Signs in with `url`; the Uppy auth token.
async fn token_for(env: &Env, url: &str) -> String {
    let (status, answer) = sign_in(env, json!({ "webdavUrl": url })).await;
    assert_eq!(status, 200, "{answer}");
    answer["uppyAuthToken"]
        .as_str()
        .expect("uppyAuthToken")
        .to_owned()
}

/// `GET` with the auth token: (status, JSON).
async fn get(env: &Env, path: &str, token: &str) -> (u16, Value) {
    let r = reqwest::Client::new()
        .get(env.companion.url(path))
        .header("uppy-auth-token", token)
        .send()
        .await
        .expect("request");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// Imports the item `id` into tus: (status, answer) of `/get`, and the stored bytes.
async fn import(env: &Env, id: &str, token: &str, size: usize) -> Vec<u8> {
    let body = json!({"fileId": "x", "protocol": "tus", "endpoint": env.tus.endpoint(),
        "size": size, "metadata": {"name": "f"}, "headers": {}});
    let r = reqwest::Client::new()
        .post(env.companion.url(&format!("/webdav/get/{id}")))
        .header("uppy-auth-token", token)
        .json(&body)
        .send()
        .await
        .expect("get");
    let status = r.status().as_u16();
    let answer: Value = r.json().await.expect("json");
    assert_eq!(status, 200, "{answer}");
    let mut ws = socket(&env.companion, answer["token"].as_str().expect("token")).await;
    let (last, _) = finish(&mut ws).await;
    assert_eq!(last["action"], "success", "{last}");
    download(last["payload"]["url"].as_str().expect("url")).await
}

fn names(list: &Value) -> Vec<&str> {
    let items = list["items"].as_array().expect("items");
    items
        .iter()
        .map(|i| i["name"].as_str().unwrap_or(""))
        .collect()
}

fn with_host(url: &str, host: &str, port: u16) -> String {
    url.replace(&format!("127.0.0.2:{port}"), &format!("{host}:{port}"))
}

#[tokio::test]
async fn an_app_password_in_the_url_signs_in_lists_and_imports_byte_exact() {
    let env = start().await;
    let d = &env.dav.state;
    let photo = random_bytes(300_000);
    d.add_file("/Photos/beach day.jpg", "image/jpeg", photo.clone());
    d.add_file("/Photos/Tom & Jerry é.mp4", "video/mp4", vec![7; 10]);
    d.add_file("/notes.txt", "text/plain", b"hello".to_vec());
    let url = with_host(
        &env.dav.user_url_with(USER, APP_PASSWORD),
        "dav.test",
        env.dav.server.addr.port(),
    );
    let token = token_for(&env, &url).await;
    assert!(!token.contains("Xk2p"), "the token is sealed");
    assert_eq!(d.last_depth.lock().expect("depth").as_deref(), Some("0"));

    let (status, providers) = get(&env, "/providers", &token).await;
    assert_eq!(status, 200);
    assert_eq!(
        providers["providers"][0],
        json!({"id": "webdav", "name": "WebDAV", "rootFolder": "",
            "supportsRefreshToken": false, "simpleAuth": true})
    );

    let (status, root) = get(&env, "/webdav/list/", &token).await;
    assert_eq!(status, 200, "{root}");
    assert_eq!(d.last_depth.lock().expect("depth").as_deref(), Some("1"));
    assert_eq!(root["username"], "alice@dav.test");
    assert_eq!(root["nextPagePath"], Value::Null);
    assert_eq!(names(&root), ["Photos", "notes.txt"]);
    let folder = &root["items"][0];
    assert_eq!(
        (&folder["isFolder"], &folder["icon"], &folder["requestPath"]),
        (&json!(true), &json!("folder"), &json!("%2FPhotos"))
    );

    // Uppy asks for a folder by its requestPath as is.
    let (status, photos) = get(&env, "/webdav/list/%2FPhotos", &token).await;
    assert_eq!(status, 200, "{photos}");
    assert_eq!(names(&photos), ["Tom & Jerry é.mp4", "beach day.jpg"]);
    let beach = &photos["items"][1];
    assert_eq!(beach["id"], "%2FPhotos%2Fbeach%20day.jpg");
    assert_eq!(
        (&beach["size"], &beach["mimeType"], &beach["modifiedDate"]),
        (
            &json!(300_000),
            &json!("image/jpeg"),
            &json!("2026-11-03T10:00:00Z")
        )
    );
    assert_eq!(photos["items"][0]["icon"], "video");

    let stored = import(&env, "%2FPhotos%2Fbeach%20day.jpg", &token, photo.len()).await;
    assert_eq!(sha256_hex(&stored), sha256_hex(&photo));

    let (status, out) = get(&env, "/webdav/logout", &token).await;
    assert_eq!((status, out), (200, json!({"ok": true, "revoked": true})));
}

#[tokio::test]
async fn a_public_share_link_lists_the_shared_folder_and_imports_from_it() {
    let env = start().await;
    let d = &env.dav.state;
    let deck = random_bytes(200_000);
    d.add_file("/Private/diary.txt", "text/plain", b"no".to_vec());
    d.add_file("/Team/deck.pdf", "application/pdf", deck.clone());
    d.share("/Team");
    let token = token_for(&env, &env.dav.share_url()).await;
    let (status, root) = get(&env, "/webdav/list/", &token).await;
    assert_eq!(status, 200, "{root}");
    assert_eq!(names(&root), ["deck.pdf"]);
    let stored = import(&env, "%2Fdeck.pdf", &token, deck.len()).await;
    assert_eq!(sha256_hex(&stored), sha256_hex(&deck));
}

#[tokio::test]
async fn a_broken_download_resumes_with_range_and_rate_limits_are_waited_out() {
    let env = start().await;
    let d = &env.dav.state;
    let data = random_bytes(3 * 1024 * 1024 + 17);
    d.add_file("/big.bin", "application/octet-stream", data.clone());
    let token = token_for(&env, &env.dav.user_url_with(USER, APP_PASSWORD)).await;
    d.faults.too_many.store(2, Ordering::SeqCst);
    let (status, root) = get(&env, "/webdav/list/", &token).await;
    assert_eq!((status, names(&root)), (200, vec!["big.bin"]));
    assert_eq!(
        d.faults.too_many.load(Ordering::SeqCst),
        0,
        "two 429s answered"
    );

    d.faults.cut_after.store(1024 * 1024, Ordering::SeqCst);
    let stored = import(&env, "%2Fbig.bin", &token, data.len()).await;
    assert_eq!(sha256_hex(&stored), sha256_hex(&data));
    assert_eq!(
        d.faults.cut_after.load(Ordering::SeqCst),
        0,
        "the cut happened"
    );
    assert!(d.ranged.load(Ordering::SeqCst) >= 1, "resumed with Range");

    // More 429s than the backoff has waits: a clear 429, not a hang.
    d.faults.too_many.store(10, Ordering::SeqCst);
    let (status, body) = get(&env, "/webdav/list/", &token).await;
    assert_eq!(status, 429, "{body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("WebDAV is limiting requests; retrying in "),
        "{body}"
    );
}

#[tokio::test]
async fn a_wrong_password_is_refused_and_a_revoked_one_asks_to_sign_in_again() {
    let env = start().await;
    env.dav
        .state
        .add_file("/a.txt", "text/plain", b"a".to_vec());
    let (status, body) = sign_in(
        &env,
        json!({"webdavUrl": env.dav.user_url_with(USER, "wrong")}),
    )
    .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (
            400,
            Some("The WebDAV server refused the username or password")
        )
    );
    // Separate fields work as well as the URL's userinfo.
    let (status, answer) = sign_in(
        &env,
        json!({"webdavUrl": env.dav.user_url(), "username": USER, "password": APP_PASSWORD}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let token = answer["uppyAuthToken"].as_str().expect("token");
    env.dav
        .state
        .faults
        .expire_access
        .store(true, Ordering::SeqCst);
    let (status, body) = get(&env, "/webdav/list/", token).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (
            401,
            Some("HTTP 401: invalid access token detected by Provider")
        )
    );
}

#[tokio::test]
async fn bad_urls_and_private_addresses_are_refused_before_any_request() {
    let env = start().await;
    // A WebDAV server on loopback (not exempt) that must never be reached.
    let sink = FakeWebDav::start(USER, APP_PASSWORD).await;
    let port = sink.server.addr.port();
    let refused = "The WebDAV URL points at an address that is not allowed";
    let cases = [
        (json!("not a url"), "Invalid WebDAV URL"),
        (
            json!("ftp://dav.test/files/"),
            "Only http and https WebDAV URLs are allowed",
        ),
        (
            json!("file:///etc/passwd"),
            "Only http and https WebDAV URLs are allowed",
        ),
        (json!(""), "Missing webdavUrl"),
        (json!(42), "Missing webdavUrl"),
        (json!(sink.user_url_with(USER, APP_PASSWORD)), refused),
        (json!(format!("http://intranet.test:{port}/open/")), refused),
        (json!(format!("http://[::1]:{port}/open/")), refused),
        (json!(format!("http://10.1.2.3:{port}/open/")), refused),
        (
            json!(format!("http://169.254.169.254:{port}/open/")),
            refused,
        ),
    ];
    for (url, message) in cases {
        let (status, body) = sign_in(&env, json!({ "webdavUrl": url })).await;
        assert_eq!(
            (status, body["message"].as_str()),
            (400, Some(message)),
            "{url}"
        );
    }
    for body in [json!({}), json!({"form": "x"})] {
        let (status, answer) = post_json(&env.companion, "/webdav/simple-auth", body).await;
        assert_eq!(
            (status, answer["message"].as_str()),
            (400, Some("Invalid request body"))
        );
    }
    assert_eq!(sink.state.requests.load(Ordering::SeqCst), 0);
    assert_eq!(env.dav.state.requests.load(Ordering::SeqCst), 0);

    // WebDAV has no OAuth: the login route refuses it.
    let r = reqwest::get(env.companion.url("/webdav/connect?state=e30"))
        .await
        .expect("connect");
    assert_eq!(r.status(), 400);

    // Ids cannot climb out of the collection.
    let token = token_for(&env, &env.dav.user_url_with(USER, APP_PASSWORD)).await;
    let before = env.dav.state.requests.load(Ordering::SeqCst);
    for path in ["%2F..%2F..%2Fetc", "%2Fa%2F.%2Fb", "%2Fa%5Cb"] {
        let (status, body) = get(&env, &format!("/webdav/list/{path}"), &token).await;
        assert_eq!(
            (status, body["message"].as_str()),
            (400, Some("Invalid WebDAV path")),
            "{path}"
        );
    }
    assert_eq!(env.dav.state.requests.load(Ordering::SeqCst), before);
}

#[tokio::test]
async fn oversized_and_deeply_nested_listings_are_refused() {
    let env = start().await;
    let d = &env.dav.state;
    d.add_file("/a.txt", "text/plain", b"a".to_vec());
    let token = token_for(&env, &env.dav.user_url_with(USER, APP_PASSWORD)).await;
    d.pad_listing.store(17 * 1024 * 1024, Ordering::SeqCst);
    let (status, body) = get(&env, "/webdav/list/", &token).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (502, Some("The WebDAV folder listing is larger than 16 MiB"))
    );
    d.pad_listing.store(0, Ordering::SeqCst);
    d.nest_listing.store(100_000, Ordering::SeqCst);
    let (status, body) = get(&env, "/webdav/list/", &token).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (502, Some("The WebDAV answer is nested too deeply"))
    );
    d.nest_listing.store(0, Ordering::SeqCst);
    let (status, body) = get(&env, "/webdav/list/", &token).await;
    assert_eq!((status, names(&body)), (200, vec!["a.txt"]));
}
