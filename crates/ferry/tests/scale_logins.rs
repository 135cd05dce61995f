//! A Google Drive login and import across two `ferry` instances on one Redis, against the
//! testkit's fake Google: the page's auth-callback socket is on B while the popup's whole login
//! (`/connect`, the provider, `/redirect`, `/send-token`) runs on A, and B's socket gets the token
//! (A accepts the binding cookie B's socket set, under the fleet's shared secret);
//! the token then lists and imports on B, with the import's progress socket on A; the stored
//! bytes equal the Drive file's.

use std::time::Duration;

use base64::Engine;
use ferry_testkit::fake::google::FakeGoogle;
use ferry_testkit::process::FerryProcess as Ferry;
use ferry_testkit::redis::RedisServer;
use ferry_testkit::{random_bytes, sha256_hex};
use futures_util::StreamExt;
use reqwest::header::{COOKIE, LOCATION, ORIGIN, SET_COOKIE};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const APP: &str = "https://app.example";
const KEY: &str = "fleet-google-key";
const GOOGLE_SECRET: &str = "fleet-google-secret";

async fn instance(google: &FakeGoogle, redis: &str, dir: &std::path::Path) -> Ferry {
    let d = dir.display().to_string();
    Ferry::start(
        env!("CARGO_BIN_EXE_ferry"),
        [
            "--data-dir",
            &d,
            "--ui-dir",
            &d,
            "--secret",
            "fleet-secret",
            "--google-key",
            KEY,
            "--google-secret",
            GOOGLE_SECRET,
            "--google-auth-url",
            &google.auth_url(),
            "--google-token-url",
            &google.token_url(),
            "--google-api-url",
            &google.api_url(),
            "--allow-local-urls",
            "--cors-origins",
            APP,
            "--redis-url",
            redis,
        ],
    )
    .await
}

fn location(resp: &reqwest::Response) -> String {
    resp.headers()
        .get(LOCATION)
        .and_then(|l| l.to_str().ok())
        .unwrap_or_else(|| panic!("no Location on {}", resp.status()))
        .to_owned()
}

async fn first_text(
    ws: &mut tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("a message in time")
            .expect("socket open")
            .expect("frame");
        if let Message::Text(t) = msg {
            return serde_json::from_str(t.as_str()).expect("json");
        }
    }
}

#[tokio::test]
async fn a_login_on_one_instance_reaches_the_socket_on_another_and_imports_anywhere() {
    let redis = RedisServer::start();
    let google = FakeGoogle::start(KEY, GOOGLE_SECRET).await;
    let content = random_bytes(3 * 1024 * 1024 + 11);
    let file_id = google.state.add_file(
        "root",
        "fleet.bin",
        "application/octet-stream",
        content.clone(),
    );
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().expect("dir")).collect();
    let a = instance(&google, &redis.url(), dirs[0].path()).await;
    let b = instance(&google, &redis.url(), dirs[1].path()).await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");

    // The page's socket waits on B.
    let socket_id = "fleet-login-1";
    let mut req = format!(
        "{}/api2/auth-callback/token/{socket_id}",
        b.base.replace("http://", "ws://")
    )
    .into_client_request()
    .expect("request");
    req.headers_mut()
        .insert(ORIGIN, APP.parse().expect("origin"));
    let (mut auth_socket, upgrade) = tokio_tungstenite::connect_async(req)
        .await
        .expect("auth socket on B");
    // B's answer binds this browser to the id; A checks it under the shared secret.
    let binding = upgrade.headers()[SET_COOKIE]
        .to_str()
        .expect("binding cookie")
        .split(';')
        .next()
        .expect("cookie pair")
        .to_owned();

    // The popup's login runs on A from start to end.
    let state =
        base64::engine::general_purpose::STANDARD.encode(json!({ "origin": APP }).to_string());
    let r = http
        .get(format!(
            "{}/drive/connect?uppyVersions=&state={state}&authCallbackToken={socket_id}",
            a.base
        ))
        .send()
        .await
        .expect("connect");
    assert_eq!(r.status(), 302, "connect");
    let cookie = r.headers()[SET_COOKIE]
        .to_str()
        .expect("cookie")
        .split(';')
        .next()
        .expect("cookie pair")
        .to_owned();
    let r = http.get(location(&r)).send().await.expect("authorize");
    assert_eq!(r.status(), 302, "authorize");
    let redirect = location(&r);
    assert!(redirect.starts_with(&a.base), "{redirect}");
    let r = http
        .get(&redirect)
        .header(COOKIE, &cookie)
        .send()
        .await
        .expect("redirect");
    assert_eq!(r.status(), 302, "redirect");
    let send_token = location(&r);
    let r = http
        .get(&send_token)
        .header(COOKIE, &binding)
        .send()
        .await
        .expect("send-token");
    assert_eq!(r.status(), 200);

    // B's socket got the token A minted.
    let message = first_text(&mut auth_socket).await;
    let token = message["token"].as_str().expect("token").to_owned();
    assert!(
        send_token.contains(&token),
        "the socket's token is the login's"
    );

    // The token lists on B.
    let r = http
        .get(format!("{}/drive/list/root", b.base))
        .header("uppy-auth-token", &token)
        .send()
        .await
        .expect("list");
    assert_eq!(r.status(), 200);
    let page: Value = r.json().await.expect("json");
    assert!(
        page["items"]
            .as_array()
            .expect("items")
            .iter()
            .any(|i| i["name"] == "fleet.bin"),
        "{page}"
    );

    // An import started on B into B's own tus endpoint, watched from A.
    let r = http
        .post(format!("{}/drive/get/{file_id}", b.base))
        .header("uppy-auth-token", &token)
        .json(&json!({
            "protocol": "tus",
            "endpoint": format!("{}/files/", b.base),
            "size": content.len(),
            "metadata": {"name": "fleet.bin"},
        }))
        .send()
        .await
        .expect("get");
    assert_eq!(r.status(), 200);
    let transfer: Value = r.json().await.expect("json");
    let transfer = transfer["token"].as_str().expect("transfer token");
    let (mut progress, _) = tokio_tungstenite::connect_async(format!(
        "{}/api/{transfer}",
        a.base.replace("http://", "ws://")
    ))
    .await
    .expect("progress socket on A");
    let url = loop {
        let frame = first_text(&mut progress).await;
        match frame["action"].as_str() {
            Some("success") => break frame["payload"]["url"].as_str().expect("url").to_owned(),
            Some("error") => panic!("import failed: {frame}"),
            _ => {}
        }
    };
    let stored = http
        .get(&url)
        .send()
        .await
        .expect("download")
        .bytes()
        .await
        .expect("body");
    assert_eq!(sha256_hex(&stored), sha256_hex(&content));
}
