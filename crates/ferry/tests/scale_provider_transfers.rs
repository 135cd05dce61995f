//! Cloud-provider imports across `ferry` instances on one Redis, one per signed-in provider
//! family (Dropbox, Box, OneDrive): the import starts on instance A (which opens the file at the
//! provider's fake), its progress socket is on B; A is killed with `kill -9` mid-download and B
//! takes the transfer over, reopening the file at the destination's offset with the session
//! sealed in the transfer record, and the upload completes byte-exact (sha256). The fakes pace
//! their downloads like the fleet's origin (64 KiB per 12 ms), so an import lasts ~5 s.

mod fleet;

use std::sync::atomic::Ordering;
use std::time::Duration;

use ferry_testkit::fake::Faults;
use fleet::*;
use serde_json::{Value, json};

const SECRET: &str = "fleet-secret";

/// Signs in at a fake's OAuth endpoints as a browser and the server would: the access and
/// refresh tokens. `extra` are the provider's own authorize parameters.
async fn tokens(
    auth_url: &str,
    token_url: &str,
    key: &str,
    secret: &str,
    extra: &[(&str, &str)],
) -> (String, String) {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let redirect = "http://127.0.0.1:9/redirect";
    let mut query = vec![
        ("client_id", key),
        ("response_type", "code"),
        ("redirect_uri", redirect),
        ("state", "s"),
    ];
    query.extend_from_slice(extra);
    let r = http
        .get(auth_url)
        .query(&query)
        .send()
        .await
        .expect("authorize");
    let location = r.headers()["location"].to_str().expect("location");
    let code = reqwest::Url::parse(location)
        .expect("url")
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .expect("code");
    let answer: Value = http
        .post(token_url)
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", key),
            ("client_secret", secret),
            ("redirect_uri", redirect),
        ])
        .send()
        .await
        .expect("token")
        .json()
        .await
        .expect("json");
    (
        answer["access_token"].as_str().expect("access").to_owned(),
        answer["refresh_token"]
            .as_str()
            .expect("refresh")
            .to_owned(),
    )
}

/// The Uppy auth token of a session of `provider` with these tokens.
fn uppy_token(provider: &str, (access, refresh): (String, String)) -> String {
    let session = json!({"accessToken": access, "refreshToken": refresh, "username": "fleet"});
    let now = ferry_companion::token::now();
    ferry_companion::token::issue(SECRET.as_bytes(), provider, session, now, 3600)
}

/// Starts `/{provider}/get/{id}` on A, watches from B, kills A at 40 %: B finishes it.
async fn survives_the_kill(fleet: &mut Fleet, provider: &str, id: &str, token: &str, f: &Faults) {
    f.slow_ms.store(12, Ordering::SeqCst);
    let a = fleet.instance(2).await;
    let b = fleet.instance(2).await;
    let res = reqwest::Client::new()
        .post(format!("{}/{provider}/get/{id}", a.base))
        .header("uppy-auth-token", token)
        .json(
            &json!({"protocol": "tus", "endpoint": format!("{}/files/", fleet.dest.base),
            "size": SIZE, "metadata": {"name": "fleet.bin"}}),
        )
        .send()
        .await
        .expect("get");
    assert_eq!(res.status(), 200, "{:?}", res.text().await);
    let body: Value = res.json().await.expect("json");
    let transfer = body["token"].as_str().expect("token").to_owned();
    let mut ws = socket(&b, &transfer).await;
    until_progress(&mut ws, 40.0).await;
    a.kill9();
    let url = until_success(&mut ws, Duration::from_secs(60)).await;
    fleet.assert_stored(&url).await;
    assert_eq!(fleet.record(&transfer, "attempts"), "2");
    assert_eq!(fleet.record(&transfer, "state"), "succeeded");
}

#[tokio::test]
async fn a_dropbox_import_survives_the_kill_of_its_instance() {
    use ferry_testkit::fake::dropbox::FakeDropbox;
    let mut fleet = fleet().await;
    let dropbox = FakeDropbox::start("dbx-key", "dbx-secret").await;
    dropbox.state.add("/Fleet/fleet.bin", fleet.data.clone());
    fleet.extra = [
        "--secret",
        SECRET,
        "--dropbox-key",
        "dbx-key",
        "--dropbox-secret",
        "dbx-secret",
    ]
    .map(str::to_owned)
    .to_vec();
    fleet.extra.extend([
        "--dropbox-auth-url".into(),
        dropbox.auth_url(),
        "--dropbox-token-url".into(),
        dropbox.token_url(),
        "--dropbox-api-url".into(),
        dropbox.api_url(),
        "--dropbox-content-url".into(),
        dropbox.content_url(),
    ]);
    let pair = tokens(
        &dropbox.auth_url(),
        &dropbox.token_url(),
        "dbx-key",
        "dbx-secret",
        &[("token_access_type", "offline")],
    )
    .await;
    let token = uppy_token("dropbox", pair);
    // The requestPath Dropbox items carry: the URL-encoded lower-case path.
    let id = "%2Ffleet%2Ffleet%2Ebin";
    survives_the_kill(&mut fleet, "dropbox", id, &token, &dropbox.state.faults).await;
}

#[tokio::test]
async fn a_box_import_survives_the_kill_of_its_instance() {
    use ferry_testkit::fake::r#box::FakeBox;
    let mut fleet = fleet().await;
    let boxed = FakeBox::start("box-key", "box-secret").await;
    let id = boxed.state.add_file("0", "fleet.bin", fleet.data.clone());
    fleet.extra = [
        "--secret",
        SECRET,
        "--box-key",
        "box-key",
        "--box-secret",
        "box-secret",
    ]
    .map(str::to_owned)
    .to_vec();
    fleet.extra.extend([
        "--box-auth-url".into(),
        boxed.auth_url(),
        "--box-token-url".into(),
        boxed.token_url(),
        "--box-api-url".into(),
        boxed.api_url(),
    ]);
    let pair = tokens(
        &boxed.auth_url(),
        &boxed.token_url(),
        "box-key",
        "box-secret",
        &[],
    )
    .await;
    let token = uppy_token("box", pair);
    survives_the_kill(&mut fleet, "box", &id, &token, &boxed.state.faults).await;
}

#[tokio::test]
async fn a_onedrive_import_survives_the_kill_of_its_instance() {
    use ferry_testkit::fake::onedrive::FakeOneDrive;
    let mut fleet = fleet().await;
    let ms = FakeOneDrive::start("ms-key", "ms-secret").await;
    let g = &ms.state;
    let file = g.add_file(
        &g.my_drive,
        "root",
        "fleet.bin",
        "application/octet-stream",
        fleet.data.clone(),
    );
    fleet.extra = [
        "--secret",
        SECRET,
        "--onedrive-key",
        "ms-key",
        "--onedrive-secret",
        "ms-secret",
    ]
    .map(str::to_owned)
    .to_vec();
    fleet.extra.extend([
        "--onedrive-auth-url".into(),
        ms.auth_url(),
        "--onedrive-token-url".into(),
        ms.token_url(),
        "--onedrive-api-url".into(),
        ms.api_url(),
    ]);
    let pair = tokens(
        &ms.auth_url(),
        &ms.token_url(),
        "ms-key",
        "ms-secret",
        &[("scope", "offline_access Files.Read.All")],
    )
    .await;
    let token = uppy_token("onedrive", pair);
    let id = format!("{}~{file}", g.my_drive);
    survives_the_kill(&mut fleet, "onedrive", &id, &token, &g.faults).await;
}
