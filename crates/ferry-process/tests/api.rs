//! The Assembly API over real HTTP: an Assembly with files in the form runs its steps and
//! serves its results; the documented error table; cancel stopping running work; the step time
//! limit; notifications; durability across a restart.

mod common;

use common::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const JPEG: &[u8] = b"\xFF\xD8\xFF\xE0 not really a jpeg, but its signature is one";

fn sha(b: &[u8]) -> String {
    ferry_process::id::hex(&Sha256::digest(b))
}

#[tokio::test]
async fn form_files_pass_a_filter_and_results_serve_their_bytes() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let p = params(json!({
        ":original": {"robot": "/upload/handle"},
        "images": {"robot": "/file/filter", "use": ":original", "accepts": [["${file.mime}", "regex", "^image/"]]},
    }));
    let (code, created) = create(
        &s.base,
        form(&p, &[("a.jpg", JPEG), ("notes.txt", b"hello")]),
    )
    .await;
    assert_eq!(code, 200, "{created}");
    let id = created["assembly_id"].as_str().expect("id").to_owned();
    assert_eq!(id.len(), 32);
    assert_eq!(
        created["assembly_ssl_url"],
        format!("{}/assemblies/{id}", s.base)
    );
    assert!(created["results"].is_object() && created["uploads"].is_array());

    let done = settle(&format!("{}/assemblies/{id}", s.base)).await;
    assert_eq!(done["ok"], "ASSEMBLY_COMPLETED", "{done}");
    assert_eq!(done["uploads"].as_array().map(Vec::len), Some(2));
    assert_eq!(done["bytes_received"], JPEG.len() + 5);
    let results = done["results"]["images"].as_array().expect("images");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["name"], "a.jpg");
    assert_eq!(results[0]["mime"], "image/jpeg");
    assert_eq!(results[0]["type"], "image");
    assert!(
        done["results"].get(":original").is_none(),
        "used steps are not exported"
    );
    let bytes = reqwest::get(results[0]["ssl_url"].as_str().expect("url"))
        .await
        .expect("get")
        .bytes()
        .await
        .expect("bytes");
    assert_eq!(sha(&bytes), sha(JPEG));
}

/// Posts `form`; the status code and error code.
async fn refused(base: &str, form: reqwest::multipart::Form) -> (u16, String) {
    let (code, body) = create(base, form).await;
    (code, body["error"].as_str().unwrap_or_default().to_owned())
}

#[tokio::test]
async fn bad_requests_get_their_documented_error() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), true)).await;
    let filter = json!({"f": {"robot": "/file/filter", "use": ":original"}});
    let signed = |p: Value| {
        let raw = p.to_string();
        form(&raw, &[])
    };
    let expires = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1)).to_string();
    let past = (jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1)).to_string();
    let with = |steps: Value| json!({"auth": {"key": KEY, "expires": expires}, "steps": steps});
    let many: serde_json::Map<String, Value> = (0..200)
        .map(|i| {
            (
                format!("s{i}"),
                json!({"robot": "/file/filter", "use": ":original"}),
            )
        })
        .collect();
    let deep = format!(
        "{{\"auth\":{{\"key\":\"{KEY}\",\"expires\":\"{expires}\"}},\"steps\":{},\"x\":{}1{}}}",
        filter,
        "[".repeat(64),
        "]".repeat(64)
    );
    let cases: Vec<(&str, reqwest::multipart::Form, u16, &str)> = vec![
        (
            "no params",
            reqwest::multipart::Form::new().text("x", "y"),
            400,
            "NO_PARAMS_FIELD",
        ),
        (
            "not JSON",
            reqwest::multipart::Form::new().text("params", "{nope"),
            400,
            "INVALID_PARAMS_FIELD",
        ),
        (
            "no auth",
            signed(json!({"steps": filter})),
            400,
            "NO_AUTH_PARAMETER",
        ),
        (
            "unknown key",
            signed(json!({"auth": {"key": "other", "expires": expires}, "steps": filter})),
            401,
            "GET_ACCOUNT_UNKNOWN_AUTH_KEY",
        ),
        (
            "no expires",
            signed(json!({"auth": {"key": KEY}, "steps": filter})),
            400,
            "NO_AUTH_EXPIRES_PARAMETER",
        ),
        (
            "bad expires",
            signed(json!({"auth": {"key": KEY, "expires": "soon"}, "steps": filter})),
            400,
            "INVALID_AUTH_EXPIRES_PARAMETER",
        ),
        (
            "unsigned",
            reqwest::multipart::Form::new().text("params", with(filter.clone()).to_string()),
            401,
            "NO_SIGNATURE_FIELD",
        ),
        (
            "badly signed",
            reqwest::multipart::Form::new()
                .text("params", with(filter.clone()).to_string())
                .text("signature", format!("sha384:{}", "0".repeat(96))),
            401,
            "INVALID_SIGNATURE",
        ),
        (
            "expired",
            signed(json!({"auth": {"key": KEY, "expires": past}, "steps": filter})),
            401,
            "AUTH_EXPIRED",
        ),
        (
            "no steps",
            signed(json!({"auth": {"key": KEY, "expires": expires}})),
            400,
            "ASSEMBLY_NO_STEPS",
        ),
        (
            "unknown robot",
            signed(with(json!({"a": {"robot": "/nope/nope"}}))),
            400,
            "ASSEMBLY_STEP_UNKNOWN_ROBOT",
        ),
        (
            "uses itself",
            signed(with(json!({"a": {"robot": "/file/filter", "use": "a"}}))),
            400,
            "ASSEMBLY_STEP_INVALID_USE",
        ),
        (
            "cycle",
            signed(with(
                json!({"a": {"robot": "/file/filter", "use": "b"}, "b": {"robot": "/file/filter", "use": "a"}}),
            )),
            400,
            "ASSEMBLY_STEP_INVALID_USE",
        ),
        (
            "thousands of steps",
            signed(with(Value::Object(many))),
            400,
            "ASSEMBLY_INVALID_STEPS",
        ),
        ("deep JSON", form(&deep, &[]), 400, "INVALID_PARAMS_FIELD"),
        (
            "huge fields",
            signed(
                json!({"auth": {"key": KEY, "expires": expires}, "steps": filter, "fields": {"x": "a".repeat(100_000)}}),
            ),
            400,
            "INVALID_PARAMS_FIELD",
        ),
        (
            "huge params",
            signed(
                json!({"auth": {"key": KEY, "expires": expires}, "steps": filter, "pad": "a".repeat(300_000)}),
            ),
            400,
            "INVALID_PARAMS_FIELD",
        ),
        (
            "unknown template",
            signed(json!({"auth": {"key": KEY, "expires": expires}, "template_id": "nope"})),
            400,
            "INVALID_TEMPLATE_FIELD",
        ),
        (
            "loopback import",
            signed(with(
                json!({"i": {"robot": "/http/import", "url": "http://127.0.0.1:1/x"}}),
            )),
            403,
            "HTTP_IMPORT_ACCESS_DENIED",
        ),
        (
            "engine missing",
            signed(with(
                json!({"v": {"robot": "/video/encode", "use": ":original"}}),
            )),
            400,
            "ASSEMBLY_STEP_INVALID_ROBOT",
        ),
        (
            "bad filter operator",
            signed(with(
                json!({"f": {"robot": "/file/filter", "use": ":original", "accepts": [["${file.size}", "~", "1"]]}}),
            )),
            400,
            "FILE_FILTER_INVALID_OPERATOR",
        ),
        (
            "bad notify_url",
            signed(
                json!({"auth": {"key": KEY, "expires": expires}, "steps": filter, "notify_url": "file:///etc/passwd"}),
            ),
            400,
            "ASSEMBLY_INVALID_NOTIFY_URL",
        ),
        (
            "bad expected count",
            signed(with(filter.clone())).text("num_expected_upload_files", "lots"),
            400,
            "ASSEMBLY_INVALID_NUM_EXPECTED_UPLOAD_FILES_PARAM",
        ),
        (
            "file before params",
            reqwest::multipart::Form::new()
                .part(
                    "file",
                    reqwest::multipart::Part::bytes(b"x".to_vec()).file_name("x"),
                )
                .text("params", with(filter.clone()).to_string()),
            400,
            "NO_PARAMS_FIELD",
        ),
    ];
    for (what, f, status, code) in cases {
        assert_eq!(
            refused(&s.base, f).await,
            (status, code.to_owned()),
            "{what}"
        );
    }
    // Not a multipart form at all.
    let res = reqwest::Client::new()
        .post(format!("{}/assemblies", s.base))
        .body("{}")
        .send()
        .await
        .expect("post");
    assert_eq!(res.status(), 400);
    assert_eq!(
        res.json::<Value>().await.expect("json")["error"],
        "INVALID_FORM_DATA"
    );
    // Unknown and malformed ids.
    for path in [
        "0123456789abcdef0123456789abcdef",
        "nope",
        "0123456789abcdef0123456789abcdef/files/0123456789abcdef0123456789abcdef",
    ] {
        let res = reqwest::get(format!("{}/assemblies/{path}", s.base))
            .await
            .expect("get");
        assert_eq!(res.status(), 404, "{path}");
        assert_eq!(
            res.json::<Value>().await.expect("json")["error"],
            "ASSEMBLY_NOT_FOUND"
        );
    }
    // Refused requests left nothing behind.
    assert_eq!(
        std::fs::read_dir(dir.path().join("assemblies"))
            .expect("dir")
            .count(),
        0
    );
}

#[tokio::test]
async fn every_signature_form_is_accepted() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), true)).await;
    let slash = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1))
        .strftime("%Y/%m/%d %H:%M:%S+00:00")
        .to_string();
    let raw = json!({"auth": {"key": KEY, "expires": slash}, "steps": {"f": {"robot": "/file/filter", "use": ":original"}}}).to_string();
    use hmac::{Hmac, Mac};
    let mut sha1 = Hmac::<sha1::Sha1>::new_from_slice(SECRET.as_bytes()).expect("key");
    sha1.update(raw.as_bytes());
    let legacy = ferry_process::id::hex(&sha1.finalize().into_bytes());
    let mut sha256 = Hmac::<sha2::Sha256>::new_from_slice(SECRET.as_bytes()).expect("key");
    sha256.update(raw.as_bytes());
    let prefixed = format!(
        "sha256:{}",
        ferry_process::id::hex(&sha256.finalize().into_bytes())
    );
    for sig in [sign(&raw), legacy, prefixed] {
        let f = reqwest::multipart::Form::new()
            .text("params", raw.clone())
            .text("signature", sig.clone());
        let (code, body) = create(&s.base, f).await;
        assert_eq!(code, 200, "{sig}: {body}");
        assert_eq!(body["ok"], "ASSEMBLY_EXECUTING");
    }
    // The same params re-serialised (other spacing) no longer match the signature.
    let spaced = raw.replacen("{", "{ ", 1);
    let f = reqwest::multipart::Form::new()
        .text("params", spaced)
        .text("signature", sign(&raw));
    assert_eq!(
        refused(&s.base, f).await,
        (401, "INVALID_SIGNATURE".to_owned())
    );
}

#[tokio::test]
async fn browsers_from_configured_origins_may_send_the_transloadit_headers() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), true)).await;
    let preflight = |origin: &'static str| {
        reqwest::Client::new()
            .request(reqwest::Method::OPTIONS, format!("{}/assemblies", s.base))
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "POST")
            .header(
                "Access-Control-Request-Headers",
                "transloadit-client,x-request-id",
            )
            .send()
    };
    let res = preflight("https://app.example").await.expect("options");
    assert_eq!(res.status(), 200);
    let h = |n: &str| {
        res.headers()
            .get(n)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(h("access-control-allow-origin"), "https://app.example");
    let allowed = h("access-control-allow-headers");
    assert!(
        allowed.contains("transloadit-client") && allowed.contains("x-request-id"),
        "{allowed}"
    );
    let other = preflight("https://evil.example").await.expect("options");
    assert!(other.headers().get("access-control-allow-origin").is_none());
}
