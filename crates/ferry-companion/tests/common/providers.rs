//! Shared setup of the provider contract tests: the companion with Drive, Instagram, Box, Dropbox,
//! OneDrive, Zoom and Facebook enabled against the testkit's fakes (loopback exempted from the egress ban
//! through `exempt_ips`, as the configuration allows), real tus and form destinations, a
//! cookie-carrying walk through the OAuth login, and the auth-callback socket.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use ferry_companion::egress::StaticResolver;
use ferry_companion::oauth::handoff::LocalHandoff;
use ferry_companion::providers::ProvidersConfig;
use ferry_companion::providers::config::{Endpoints, OAuthApp};
use ferry_companion::providers::ratelimit::RateLimits;
use ferry_companion::{AppState, CompanionConfig};
use ferry_testkit::TestServer;
use ferry_testkit::fake::r#box::FakeBox;
use ferry_testkit::fake::dropbox::FakeDropbox;
use ferry_testkit::fake::facebook::FakeFacebook;
use ferry_testkit::fake::google::FakeGoogle;
use ferry_testkit::fake::instagram::FakeInstagram;
use ferry_testkit::fake::onedrive::FakeOneDrive;
use ferry_testkit::fake::unsplash::FakeUnsplash;
use ferry_testkit::fake::zoom::FakeZoom;
use futures_util::StreamExt;
use reqwest::header::{COOKIE, LOCATION, ORIGIN, SET_COOKIE};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use super::{FormDest, Socket, TusDest};

pub const SECRET: &str = "provider-test-secret";
pub const APP: &str = "https://app.example";
pub const OTHER_APP: &str = "https://other.example";

pub struct Env {
    pub google: FakeGoogle,
    pub ig: FakeInstagram,
    pub boxed: FakeBox,
    pub unsplash: FakeUnsplash,
    pub dropbox: FakeDropbox,
    pub ms: FakeOneDrive,
    pub zoom: FakeZoom,
    pub facebook: FakeFacebook,
    pub tus: TusDest,
    pub form: FormDest,
    pub companion: TestServer,
    pub http: reqwest::Client,
    /// The companion's state (to close it as a shutdown does).
    pub state: AppState,
    /// Where login outcomes wait.
    pub hub: Arc<LocalHandoff>,
}

/// Options of [`start`].
pub struct Opts {
    /// Exempt loopback from the egress ban (the fakes' CDN URLs are on loopback).
    pub exempt_loopback: bool,
    /// Extra settings (an S3 bucket).
    pub s3: Option<ferry_companion::s3::S3State>,
    /// Auth sockets one client may hold (all in-process clients count as one).
    pub auth_sockets_per_client: usize,
    /// `--cors-origins` (default: [`APP`] and [`OTHER_APP`]).
    pub cors_origins: Vec<String>,
}

impl Default for Opts {
    fn default() -> Self {
        Self {
            exempt_loopback: true,
            s3: None,
            auth_sockets_per_client: ProvidersConfig::default().auth_sockets_per_client,
            cors_origins: vec![APP.into(), OTHER_APP.into()],
        }
    }
}

pub async fn start() -> Env {
    start_with(Opts::default()).await
}

pub async fn start_with(opts: Opts) -> Env {
    let google = FakeGoogle::start("google-client", "google-secret").await;
    let ig = FakeInstagram::start("ig-client", "ig-secret").await;
    let boxed = FakeBox::start("box-client", "box-secret").await;
    let unsplash = FakeUnsplash::start("unsplash-access-key").await;
    let dropbox = FakeDropbox::start("dropbox-client", "dropbox-secret").await;
    let ms = FakeOneDrive::start("ms-client", "ms-secret").await;
    let zoom = FakeZoom::start("zoom-client", "zoom-secret").await;
    let facebook = FakeFacebook::start("fb-client", "fb-secret").await;
    let tus = TusDest::start().await;
    let form = FormDest::start().await;
    let hub = Arc::new(LocalHandoff::default());
    let mut providers = ProvidersConfig {
        page_size: 5,
        auth_sockets_per_client: opts.auth_sockets_per_client,
        rate_limits: RateLimits {
            backoff: vec![
                Duration::from_millis(10),
                Duration::from_millis(20),
                Duration::from_millis(40),
            ],
            ..RateLimits::default()
        },
        ..ProvidersConfig::default()
    };
    providers
        .enable(
            "drive",
            OAuthApp {
                key: "google-client".into(),
                secret: "google-secret".into(),
            },
            Endpoints::new(&google.auth_url(), &google.token_url(), &google.api_url()),
        )
        .enable(
            "instagram",
            OAuthApp {
                key: "ig-client".into(),
                secret: "ig-secret".into(),
            },
            Endpoints::new(&ig.auth_url(), &ig.token_url(), &ig.graph_url()),
        )
        .enable(
            "box",
            OAuthApp {
                key: "box-client".into(),
                secret: "box-secret".into(),
            },
            Endpoints::new(&boxed.auth_url(), &boxed.token_url(), &boxed.api_url()),
        )
        .enable(
            "unsplash",
            OAuthApp {
                key: "unsplash-access-key".into(),
                secret: String::new(),
            },
            Endpoints::new("", "", &unsplash.api_url()),
        )
        .enable(
            "dropbox",
            OAuthApp {
                key: "dropbox-client".into(),
                secret: "dropbox-secret".into(),
            },
            Endpoints::new(
                &dropbox.auth_url(),
                &dropbox.token_url(),
                &dropbox.api_url(),
            )
            .with_content(&dropbox.content_url()),
        )
        .enable(
            "onedrive",
            OAuthApp {
                key: "ms-client".into(),
                secret: "ms-secret".into(),
            },
            Endpoints::new(&ms.auth_url(), &ms.token_url(), &ms.api_url()),
        )
        .enable(
            "zoom",
            OAuthApp {
                key: "zoom-client".into(),
                secret: "zoom-secret".into(),
            },
            Endpoints::new(&zoom.auth_url(), &zoom.token_url(), &zoom.api_url()),
        )
        .enable(
            "facebook",
            OAuthApp {
                key: "fb-client".into(),
                secret: "fb-secret".into(),
            },
            Endpoints::new(&facebook.auth_url(), "", &facebook.api_url()),
        );
    // The companion knows its own address: provider links are built only for its own host.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let own = format!("http://{}", listener.local_addr().expect("addr"));
    let config = CompanionConfig {
        own_origins: vec![own],
        allow_local_urls: false,
        exempt_ips: if opts.exempt_loopback {
            vec!["127.0.0.1".parse().expect("ip")]
        } else {
            Vec::new()
        },
        upload_urls: vec![tus.endpoint(), form.server.url("/upload")],
        cors_origins: opts.cors_origins,
        secret: Some(ferry_auth::Secret::new(SECRET)),
        retry_delays: vec![
            Duration::ZERO,
            Duration::from_millis(50),
            Duration::from_millis(100),
        ],
        stall_timeout: Duration::from_secs(5),
        s3: opts.s3,
        providers,
        handoff: hub.clone(),
        ..CompanionConfig::default()
    };
    let state =
        AppState::with_resolver(config, Arc::new(StaticResolver::default())).expect("valid config");
    let companion = TestServer::serve(listener, ferry_companion::routes(state.clone()));
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    Env {
        google,
        ig,
        boxed,
        unsplash,
        dropbox,
        ms,
        zoom,
        facebook,
        tus,
        form,
        companion,
        http,
        state,
        hub,
    }
}

/// Uppy's `state` parameter: base64 of `{"origin": ...}`.
pub fn uppy_state(origin: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(json!({ "origin": origin }).to_string())
}

fn location(resp: &reqwest::Response) -> String {
    resp.headers()
        .get(LOCATION)
        .and_then(|l| l.to_str().ok())
        .unwrap_or_else(|| panic!("no Location on {}", resp.status()))
        .to_owned()
}

/// One walk through a login.
pub struct Login {
    /// The Uppy auth token.
    pub token: String,
    /// The provider's redirect back to `/{p}/redirect` (for replays).
    pub redirect_url: String,
    /// The login cookie (`name=value`).
    pub cookie: String,
    /// The `/send-token` page.
    pub page: String,
    /// The `/send-token` URL the login ended on.
    pub send_token: String,
}

/// Walks `/connect` -> provider -> `/redirect` -> `/send-token` like a browser that holds no
/// auth-socket binding cookie.
pub async fn login(env: &Env, p: &str, origin: &str, socket_id: Option<&str>) -> Login {
    login_bound(env, p, origin, socket_id, None).await
}

/// [`login`] from a browser holding `binding` (the cookie pair an auth socket's upgrade set).
pub async fn login_bound(
    env: &Env,
    p: &str,
    origin: &str,
    socket_id: Option<&str>,
    binding: Option<&str>,
) -> Login {
    let mut connect = format!("/{p}/connect?uppyVersions=&state={}", uppy_state(origin));
    if let Some(id) = socket_id {
        connect.push_str(&format!("&authCallbackToken={id}"));
    }
    let r = env
        .http
        .get(env.companion.url(&connect))
        .send()
        .await
        .expect("connect");
    assert_eq!(r.status(), 302, "connect");
    let cookie = r
        .headers()
        .get(SET_COOKIE)
        .and_then(|c| c.to_str().ok())
        .and_then(|c| c.split(';').next())
        .expect("login cookie")
        .to_owned();
    let r = env.http.get(location(&r)).send().await.expect("authorize");
    assert_eq!(r.status(), 302, "authorize: {:?}", r.text().await);
    let redirect_url = location(&r);
    let r = env
        .http
        .get(&redirect_url)
        .header(COOKIE, &cookie)
        .send()
        .await
        .expect("redirect");
    assert_eq!(r.status(), 302, "redirect: {:?}", r.text().await);
    let send_token_url = location(&r);
    let token = url::Url::parse(&send_token_url)
        .expect("send-token url")
        .query_pairs()
        .find(|(k, _)| k == "uppyAuthToken")
        .map(|(_, v)| v.into_owned())
        .expect("uppyAuthToken");
    let (status, page) = send_token(env, &send_token_url, binding).await;
    assert_eq!(status, 200, "send-token: {page}");
    Login {
        token,
        redirect_url,
        cookie,
        page,
        send_token: send_token_url,
    }
}

/// `GET` a `/send-token` URL (absolute, or relative to `/drive/`'s directory as the waiting
/// page's reload is), with the binding cookie if any: (status, page).
pub async fn send_token(env: &Env, url: &str, binding: Option<&str>) -> (u16, String) {
    let url = if url.starts_with("http") {
        url.to_owned()
    } else {
        env.companion.url(&format!("/drive/{url}"))
    };
    let mut req = env.http.get(&url);
    if let Some(b) = binding {
        req = req.header(COOKIE, b);
    }
    let r = req.send().await.expect("send-token");
    (r.status().as_u16(), r.text().await.expect("page"))
}

/// The URL a waiting `/send-token` page reloads itself with.
pub fn next_attempt(page: &str) -> String {
    let raw = page
        .split("var next = ")
        .nth(1)
        .and_then(|s| s.split(';').next())
        .unwrap_or_else(|| panic!("not a waiting page: {page}"));
    serde_json::from_str::<String>(raw).expect("next url")
}

/// Opens the auth-callback socket `id` with the browser origin `origin`.
pub async fn auth_socket(env: &Env, id: &str, origin: &str) -> Result<Socket, u16> {
    let url = format!("ws://{}/api2/auth-callback/token/{id}", env.companion.addr);
    let mut req = url.into_client_request().expect("request");
    req.headers_mut()
        .insert(ORIGIN, origin.parse().expect("origin"));
    match tokio_tungstenite::connect_async(req).await {
        Ok((ws, _)) => Ok(ws),
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => Err(resp.status().as_u16()),
        Err(e) => panic!("auth socket: {e}"),
    }
}

/// [`auth_socket`], with the binding cookie pair (`name=value`) its upgrade answer set.
pub async fn bound_socket(env: &Env, id: &str, origin: &str) -> (Socket, String) {
    let url = format!("ws://{}/api2/auth-callback/token/{id}", env.companion.addr);
    let mut req = url.into_client_request().expect("request");
    req.headers_mut()
        .insert(ORIGIN, origin.parse().expect("origin"));
    let (ws, resp) = tokio_tungstenite::connect_async(req)
        .await
        .expect("auth socket");
    let cookie = resp
        .headers()
        .get(SET_COOKIE)
        .and_then(|c| c.to_str().ok())
        .and_then(|c| c.split(';').next())
        .expect("binding cookie")
        .to_owned();
    (ws, cookie)
}

/// The first text message of a socket, as JSON.
pub async fn first_message(ws: &mut Socket) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("a message in time")
            .expect("socket open")
            .expect("frame");
        if let Message::Text(t) = msg {
            return serde_json::from_str(t.as_str()).expect("json");
        }
    }
}

/// `GET` with the auth token: (status, JSON).
pub async fn get(env: &Env, path: &str, token: Option<&str>) -> (u16, Value) {
    let mut req = env.http.get(env.companion.url(path));
    if let Some(t) = token {
        req = req.header("uppy-auth-token", t);
    }
    let r = req.send().await.expect("request");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// `POST` JSON with the auth token: (status, JSON).
pub async fn post(env: &Env, path: &str, token: Option<&str>, body: Value) -> (u16, Value) {
    let mut req = env.http.post(env.companion.url(path)).json(&body);
    if let Some(t) = token {
        req = req.header("uppy-auth-token", t);
    }
    let r = req.send().await.expect("request");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// Every page of `/{p}/list/{path}`, following `nextPagePath` to the end.
pub async fn list_all(env: &Env, p: &str, path: &str, token: &str) -> (Vec<Value>, usize) {
    let mut items = Vec::new();
    let mut next = Some(path.to_owned());
    let mut pages = 0;
    while let Some(path) = next {
        let (status, page) = get(env, &format!("/{p}/list/{path}"), Some(token)).await;
        assert_eq!(status, 200, "{page}");
        assert!(
            page["username"].is_string(),
            "username on every page: {page}"
        );
        items.extend(page["items"].as_array().expect("items").iter().cloned());
        next = page["nextPagePath"].as_str().map(str::to_owned);
        pages += 1;
        assert!(pages < 1000, "paging never ends");
    }
    (items, pages)
}

/// The `name`s of listed items, in order.
pub fn names(items: &[Value]) -> Vec<&str> {
    items
        .iter()
        .map(|i| i["name"].as_str().expect("name"))
        .collect()
}

/// The provider session inside an Uppy auth token.
pub fn session_of(p: &str, token: &str) -> Value {
    ferry_companion::token::verify(SECRET.as_bytes(), p, token, ferry_companion::token::now())
        .expect("valid token")
}

/// Tus body for a provider import.
pub fn tus_body(env: &Env, name: &str, size: usize) -> Value {
    json!({"fileId": "x", "protocol": "tus", "endpoint": env.tus.endpoint(), "size": size,
        "metadata": {"name": name, "type": "application/octet-stream"}, "headers": {}})
}

/// Runs a transfer to the end: the success frame's upload URL.
pub async fn transfer(env: &Env, token: &str) -> String {
    let mut ws = super::socket(&env.companion, token).await;
    let (last, _) = super::finish(&mut ws).await;
    assert_eq!(last["action"], "success", "{last}");
    last["payload"]["url"].as_str().expect("url").to_owned()
}
