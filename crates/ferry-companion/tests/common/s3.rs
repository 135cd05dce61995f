//! A Garage bucket as the companion's S3 destination: its settings and state for transfers into
//! it, and the fixture of the `/s3/*` route tests (Garage, the router on loopback, small HTTP
//! helpers); a provider import into the bucket checked byte for byte.

use std::time::Duration;

use ferry_companion::s3::{S3Settings, S3State, router};
use ferry_testkit::TestServer;
use ferry_testkit::garage::Garage;
use ferry_testkit::sha256_hex;
use serde_json::{Value, json};

use super::providers::{Env, post};

/// Settings pointing at `garage`'s bucket, keys under `prefix`, 300 s presigned URLs, no tokens.
pub fn settings(garage: &Garage, prefix: &str) -> S3Settings {
    S3Settings {
        bucket: ferry_s3::S3Bucket {
            key_prefix: prefix.to_owned(),
            ..garage.bucket()
        },
        expires: Duration::from_secs(300),
        auth: None,
    }
}

/// The companion's S3 destination for transfers: [`settings`] made live.
pub fn state(garage: &Garage, prefix: &str) -> S3State {
    S3State::new(settings(garage, prefix)).expect("settings")
}

pub struct Fixture {
    pub garage: Garage,
    pub server: TestServer,
    pub http: reqwest::Client,
    pub token: Option<String>,
}

impl Fixture {
    /// Garage and the `/s3/*` routes with [`settings`] under `uploads/`.
    pub async fn start() -> Self {
        Self::start_with(|g| settings(g, "uploads/")).await
    }

    /// Garage and the `/s3/*` routes with the settings `make` builds (from [`settings`]).
    pub async fn start_with(make: impl FnOnce(&Garage) -> S3Settings) -> Self {
        let garage = Garage::start().await;
        let state = S3State::new(make(&garage)).expect("valid settings");
        let server = TestServer::start(router(state)).await;
        Self {
            garage,
            server,
            http: reqwest::Client::new(),
            token: None,
        }
    }

    pub fn url(&self, path: &str) -> String {
        self.server.url(path)
    }

    /// The object key of a presigned path-style URL.
    pub fn key_of(&self, url: &str) -> String {
        let url = url::Url::parse(url).expect("url");
        let prefix = format!("/{}/", self.garage.bucket);
        let path = url.path().strip_prefix(&prefix).expect("path-style url");
        percent_decode(path)
    }

    pub async fn post_json(&self, path: &str, body: &str) -> (u16, Value) {
        let mut req = self
            .http
            .post(self.url(path))
            .header("content-type", "application/json")
            .body(body.to_owned());
        if let Some(token) = &self.token {
            req = req.bearer_auth(token);
        }
        let resp = req.send().await.expect("POST");
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    }

    /// Creates a multipart upload; returns (uploadId, key).
    pub async fn create(&self, filename: &str) -> (String, String) {
        let body = serde_json::json!({ "filename": filename, "type": "application/octet-stream", "metadata": { "a": "b" } });
        let (status, answer) = self.post_json("/s3/multipart", &body.to_string()).await;
        assert_eq!(status, 200, "{answer}");
        (
            answer["uploadId"].as_str().expect("uploadId").to_owned(),
            answer["key"].as_str().expect("key").to_owned(),
        )
    }

    /// PUTs a part to a presigned URL; returns its ETag.
    pub async fn put_part(&self, url: &str, bytes: Vec<u8>) -> String {
        let resp = self
            .http
            .put(url)
            .body(bytes)
            .send()
            .await
            .expect("PUT part");
        assert_eq!(resp.status(), 200);
        resp.headers()
            .get("etag")
            .expect("ETag")
            .to_str()
            .expect("ascii")
            .to_owned()
    }
}

pub async fn get_json(url: &str) -> (u16, Value) {
    get_json_with(url, None).await
}

pub async fn get_json_with(url: &str, token: Option<&str>) -> (u16, Value) {
    let mut req = reqwest::Client::new().get(url);
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let resp = req.send().await.expect("GET");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// `/{p}/get/{id}` with `token` into the companion's S3 destination as a multipart upload: the
/// stored object's bytes equal `data` (sha256); returns the object's key.
pub async fn provider_import_exact(
    env: &Env,
    garage: &Garage,
    p: &str,
    id: &str,
    token: &str,
    data: &[u8],
) -> String {
    let body = json!({"fileId": id, "protocol": "s3-multipart", "size": data.len(),
        "metadata": {"name": "big.bin", "type": "application/octet-stream"}});
    let (status, answer) = post(env, &format!("/{p}/get/{id}"), Some(token), body).await;
    assert_eq!(status, 200, "{answer}");
    let mut ws = super::socket(&env.companion, answer["token"].as_str().expect("token")).await;
    let (last, _) = super::finish(&mut ws).await;
    assert_eq!(last["action"], "success", "{last}");
    let text = last["payload"]["response"]["responseText"]
        .as_str()
        .expect("responseText");
    let key = serde_json::from_str::<Value>(text).expect("json")["key"]
        .as_str()
        .expect("key")
        .to_owned();
    let stored = garage.get_object(&key).await.expect("object");
    assert_eq!(sha256_hex(&stored), sha256_hex(data));
    key
}
