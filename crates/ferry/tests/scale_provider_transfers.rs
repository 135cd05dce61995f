//! Cloud-provider imports across `ferry` instances on one Redis, one test per source (Dropbox,
//! Box, OneDrive, Zoom, Facebook, WebDAV), all through one [`Case`]: the import starts on
//! instance A (which opens the file at the provider's fake), its progress socket is on B; A is
//! killed with `kill -9` mid-download and B takes the transfer over, reopening the file at the
//! destination's offset with the session sealed in the transfer record, and the upload
//! completes byte-exact (sha256). The fakes pace their downloads like the fleet's origin (64 KiB
//! per 12 ms), so an import lasts ~5 s.

mod fleet;

use std::sync::atomic::Ordering;
use std::time::Duration;

use ferry_testkit::fake::Faults;
use fleet::*;
use serde_json::{Value, json};

const SECRET: &str = "fleet-secret";

/// Where a fake's token endpoint takes the app's credentials.
#[derive(Clone, Copy)]
enum ClientAuth {
    Form,
    /// HTTP Basic only (Zoom).
    Basic,
}

/// Signs in at a fake's OAuth endpoints as a browser and the server would: the access token
/// and the refresh token, if the provider gives one. `extra` are the provider's own authorize
/// parameters.
async fn tokens(
    (auth_url, token_url): (&str, &str),
    (key, secret): (&str, &str),
    client_auth: ClientAuth,
    extra: &[(&str, &str)],
) -> (String, Option<String>) {
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
    let mut form = vec![
        ("grant_type", "authorization_code"),
        ("code", &code),
        ("redirect_uri", redirect),
    ];
    let mut req = http.post(token_url);
    match client_auth {
        ClientAuth::Form => form.extend([("client_id", key), ("client_secret", secret)]),
        ClientAuth::Basic => req = req.basic_auth(key, Some(secret)),
    }
    let answer: Value = req
        .form(&form)
        .send()
        .await
        .expect("token")
        .json()
        .await
        .expect("json");
    (
        answer["access_token"].as_str().expect("access").to_owned(),
        answer["refresh_token"].as_str().map(str::to_owned),
    )
}

/// The Uppy auth token of a session of `provider` with these tokens.
fn uppy_token(provider: &str, (access, refresh): (String, Option<String>)) -> String {
    let mut session = json!({"accessToken": access, "username": "fleet"});
    if let Some(r) = refresh {
        session["refreshToken"] = json!(r);
    }
    let now = ferry_companion::token::now();
    ferry_companion::token::issue(SECRET.as_bytes(), provider, session, now, 3600)
}

/// `--secret` and the flags enabling `provider` with the app `key`/`secret` at its fake's
/// `urls` (`("auth", url)` is `--{provider}-auth-url url`).
fn flags(provider: &str, (key, secret): (&str, &str), urls: &[(&str, String)]) -> Vec<String> {
    let mut out = vec!["--secret".to_owned(), SECRET.to_owned()];
    for (name, value) in [("key", key), ("secret", secret)] {
        out.extend([format!("--{provider}-{name}"), value.to_owned()]);
    }
    for (name, url) in urls {
        out.extend([format!("--{provider}-{name}-url"), url.clone()]);
    }
    out
}

/// How the import's Uppy auth token is had.
enum SignIn {
    /// Sealed here from tokens the fake issued.
    Token(String),
    /// `POST /{p}/simple-auth` with this form on instance A (WebDAV).
    Form(Value),
}

/// One source's takeover: the provider, the flags that enable it against its fake, the file's
/// `requestPath`, the sign-in, and the fake's faults (to pace its download like the origin).
struct Case<'a> {
    provider: &'static str,
    flags: Vec<String>,
    id: String,
    sign_in: SignIn,
    faults: &'a Faults,
}

/// Starts `/{provider}/get/{id}` on A, watches from B, kills A at 40 %: B finishes it.
async fn survives_the_kill(mut fleet: Fleet, case: Case<'_>) {
    let Case {
        provider,
        flags,
        id,
        sign_in,
        faults,
    } = case;
    faults.slow_ms.store(12, Ordering::SeqCst);
    fleet.extra = flags;
    let a = fleet.instance(2).await;
    let b = fleet.instance(2).await;
    let http = reqwest::Client::new();
    let token = match sign_in {
        SignIn::Token(token) => token,
        SignIn::Form(form) => {
            let res = http
                .post(format!("{}/{provider}/simple-auth", a.base))
                .json(&json!({ "form": form }))
                .send()
                .await
                .expect("simple-auth");
            assert_eq!(res.status(), 200, "{:?}", res.text().await);
            let body: Value = res.json().await.expect("json");
            body["uppyAuthToken"].as_str().expect("token").to_owned()
        }
    };
    let res = http
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
    let fleet = fleet().await;
    let app = ("dbx-key", "dbx-secret");
    let dropbox = FakeDropbox::start(app.0, app.1).await;
    dropbox.state.add("/Fleet/fleet.bin", fleet.data.clone());
    let urls = [
        ("auth", dropbox.auth_url()),
        ("token", dropbox.token_url()),
        ("api", dropbox.api_url()),
        ("content", dropbox.content_url()),
    ];
    let offline = [("token_access_type", "offline")];
    let pair = tokens((&urls[0].1, &urls[1].1), app, ClientAuth::Form, &offline).await;
    let case = Case {
        provider: "dropbox",
        flags: flags("dropbox", app, &urls),
        // The requestPath Dropbox items carry: the URL-encoded lower-case path.
        id: "%2Ffleet%2Ffleet%2Ebin".into(),
        sign_in: SignIn::Token(uppy_token("dropbox", pair)),
        faults: &dropbox.state.faults,
    };
    survives_the_kill(fleet, case).await;
}

#[tokio::test]
async fn a_box_import_survives_the_kill_of_its_instance() {
    use ferry_testkit::fake::r#box::FakeBox;
    let fleet = fleet().await;
    let app = ("box-key", "box-secret");
    let boxed = FakeBox::start(app.0, app.1).await;
    let id = boxed.state.add_file("0", "fleet.bin", fleet.data.clone());
    let urls = [
        ("auth", boxed.auth_url()),
        ("token", boxed.token_url()),
        ("api", boxed.api_url()),
    ];
    let pair = tokens((&urls[0].1, &urls[1].1), app, ClientAuth::Form, &[]).await;
    let case = Case {
        provider: "box",
        flags: flags("box", app, &urls),
        id,
        sign_in: SignIn::Token(uppy_token("box", pair)),
        faults: &boxed.state.faults,
    };
    survives_the_kill(fleet, case).await;
}

#[tokio::test]
async fn a_onedrive_import_survives_the_kill_of_its_instance() {
    use ferry_testkit::fake::onedrive::FakeOneDrive;
    let fleet = fleet().await;
    let app = ("ms-key", "ms-secret");
    let ms = FakeOneDrive::start(app.0, app.1).await;
    let g = &ms.state;
    let file = g.add_file(
        &g.my_drive,
        "root",
        "fleet.bin",
        "application/octet-stream",
        fleet.data.clone(),
    );
    let urls = [
        ("auth", ms.auth_url()),
        ("token", ms.token_url()),
        ("api", ms.api_url()),
    ];
    let scope = [("scope", "offline_access Files.Read.All")];
    let pair = tokens((&urls[0].1, &urls[1].1), app, ClientAuth::Form, &scope).await;
    let case = Case {
        provider: "onedrive",
        flags: flags("onedrive", app, &urls),
        id: format!("{}~{file}", g.my_drive),
        sign_in: SignIn::Token(uppy_token("onedrive", pair)),
        faults: &g.faults,
    };
    survives_the_kill(fleet, case).await;
}

#[tokio::test]
async fn a_zoom_import_survives_the_kill_of_its_instance() {
    use ferry_testkit::fake::zoom::{FakeZoom, ZoomFile};
    let fleet = fleet().await;
    let app = ("zoom-key", "zoom-secret");
    let zoom = FakeZoom::start(app.0, app.1).await;
    const UUID: &str = "fleetAAAAAAAAAAAAAAAAA==";
    let ids = zoom.state.add_meeting(
        UUID,
        "Fleet",
        "2025-02-03T04:05:06Z",
        vec![ZoomFile::new("MP4", fleet.data.clone())],
    );
    let urls = [
        ("auth", zoom.auth_url()),
        ("token", zoom.token_url()),
        ("api", zoom.api_url()),
    ];
    // Zoom takes the app's credentials as HTTP Basic only.
    let pair = tokens((&urls[0].1, &urls[1].1), app, ClientAuth::Basic, &[]).await;
    let case = Case {
        provider: "zoom",
        flags: flags("zoom", app, &urls),
        // A recording file's requestPath: the meeting UUID (encoded) ~ the file id.
        id: format!("fleetAAAAAAAAAAAAAAAAA%3D%3D~{}", ids[0]),
        sign_in: SignIn::Token(uppy_token("zoom", pair)),
        faults: &zoom.state.faults,
    };
    survives_the_kill(fleet, case).await;
}

#[tokio::test]
async fn a_facebook_import_survives_the_kill_of_its_instance() {
    use ferry_testkit::fake::facebook::FakeFacebook;
    let fleet = fleet().await;
    let app = ("fb-key", "fb-secret");
    let fb = FakeFacebook::start(app.0, app.1).await;
    let album = fb.state.add_album("Fleet");
    // The photo's largest rendition is the fleet's file.
    let id = fb
        .state
        .add_photo(&album, Some("fleet"), fleet.data.clone());
    let urls = [("auth", fb.auth_url()), ("api", fb.api_url())];
    let token_url = format!("{}/v25.0/oauth/access_token", fb.api_url());
    let scope = [("scope", "email,user_photos")];
    let pair = tokens((&urls[0].1, &token_url), app, ClientAuth::Form, &scope).await;
    let case = Case {
        provider: "facebook",
        flags: flags("facebook", app, &urls),
        id,
        sign_in: SignIn::Token(uppy_token("facebook", pair)),
        faults: &fb.state.faults,
    };
    survives_the_kill(fleet, case).await;
}

#[tokio::test]
async fn a_webdav_import_survives_the_kill_of_its_instance() {
    use ferry_testkit::fake::webdav::FakeWebDav;
    let fleet = fleet().await;
    let dav = FakeWebDav::start("fleet", "app-password").await;
    dav.state
        .add_file("/fleet.bin", "application/octet-stream", fleet.data.clone());
    let case = Case {
        provider: "webdav",
        // No app: the server URL and its credentials are sealed in the session.
        flags: vec!["--secret".into(), SECRET.into(), "--webdav".into()],
        id: "%2Ffleet.bin".into(),
        sign_in: SignIn::Form(json!({"webdavUrl": dav.user_url_with("fleet", "app-password")})),
        faults: &dav.state.faults,
    };
    survives_the_kill(fleet, case).await;
}
