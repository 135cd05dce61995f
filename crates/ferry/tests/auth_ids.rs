//! `ferry serve --auth-secret --ietf-draft`: an upload or stored file named by another spelling
//! of its id (`%61` for `a`, one character or all of them) is still its owner's alone. Another
//! subject gets 404 from every verb, the method override and the IETF draft's verbs, and the
//! owner's bytes stay exactly as they were. A token's `prefix` keeps uploads inside the tus
//! directory. Real HTTP on loopback against the whole server.

mod common;

use common::Server;
use ferry_testkit::{random_bytes, sha256_hex};
use reqwest::{Method, StatusCode};

const SECRET: &str = "application-shared-secret";

async fn start() -> Server {
    common::serve(&["--ietf-draft", "--auth-secret", SECRET]).await
}

fn token(sub: &str) -> String {
    common::token(SECRET, sub, |_| {})
}

fn request(method: Method, url: &str, auth: &str) -> reqwest::RequestBuilder {
    common::tus(method, url, Some(auth))
}

/// `id` with the characters at `at` percent-encoded (lower or upper case hex).
fn encoded(id: &str, at: &[usize], upper: bool) -> String {
    id.char_indices()
        .map(|(i, c)| match (at.contains(&i), upper) {
            (false, _) => c.to_string(),
            (true, false) => format!("%{:02x}", u32::from(c)),
            (true, true) => format!("%{:02X}", u32::from(c)),
        })
        .collect()
}

/// The other spellings of `id` a client can send.
fn spellings(id: &str) -> Vec<String> {
    let last = id.len() - 1;
    let all: Vec<usize> = (0..id.len()).collect();
    vec![
        encoded(id, &[0], false),
        encoded(id, &[0], true),
        encoded(id, &[id.len() / 2], false),
        encoded(id, &[last], true),
        encoded(id, &all, false),
    ]
}

/// Every way of reaching an upload, as `(label, request)`.
fn attempts(url: &str, auth: &str) -> Vec<(&'static str, reqwest::RequestBuilder)> {
    let patch = |req: reqwest::RequestBuilder| {
        req.header("Upload-Offset", "5000")
            .header("Content-Type", "application/offset+octet-stream")
            .body(vec![0u8; 10])
    };
    let draft = |method: Method| {
        reqwest::Client::new()
            .request(method, url)
            .header("Upload-Draft-Interop-Version", "8")
            .bearer_auth(auth)
    };
    let overridden = |verb: &str| {
        request(Method::POST, url, auth).header("X-HTTP-Method-Override", verb.to_owned())
    };
    vec![
        ("HEAD", request(Method::HEAD, url, auth)),
        ("GET", request(Method::GET, url, auth)),
        ("PATCH", patch(request(Method::PATCH, url, auth))),
        ("DELETE", request(Method::DELETE, url, auth)),
        ("override PATCH", patch(overridden("PATCH"))),
        ("override HEAD", overridden("HEAD")),
        ("override DELETE", overridden("DELETE")),
        ("draft HEAD", draft(Method::HEAD)),
        (
            "draft PATCH",
            draft(Method::PATCH)
                .header("Upload-Offset", "5000")
                .header("Upload-Complete", "?0")
                .header("Content-Type", "application/partial-upload")
                .body(vec![0u8; 10]),
        ),
        ("draft DELETE", draft(Method::DELETE)),
    ]
}

#[tokio::test]
async fn another_spelling_of_an_upload_id_is_still_its_owners_alone() {
    let server = start().await;
    let alice = token("alice");
    let bob = token("bob");
    let bytes = random_bytes(20_000);
    let res = request(Method::POST, &format!("{}/files/", server.base), &alice)
        .header("Upload-Length", bytes.len().to_string())
        .send()
        .await
        .expect("POST");
    assert_eq!(res.status(), StatusCode::CREATED);
    let location = res.headers()["location"]
        .to_str()
        .expect("ascii")
        .to_owned();
    let upload = format!("{}{location}", server.base);
    let id = location.rsplit('/').next().expect("id").to_owned();
    let res = request(Method::PATCH, &upload, &alice)
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .body(bytes[..5_000].to_vec())
        .send()
        .await
        .expect("PATCH");
    assert_eq!(res.status(), StatusCode::NO_CONTENT);

    for spelling in spellings(&id) {
        let url = format!("{}/files/{spelling}", server.base);
        for (label, req) in attempts(&url, &bob) {
            let res = req.send().await.expect("send");
            assert_eq!(res.status(), StatusCode::NOT_FOUND, "{label} {spelling}");
            let head = label.ends_with("HEAD") && !label.starts_with("override");
            let text = res.text().await.expect("body");
            let want = if head { "" } else { "upload not found" };
            assert_eq!(text.trim_end(), want, "{label} {spelling}");
        }
        // The owner reaches the same upload by any spelling: one id for the check and the verb.
        let res = request(Method::HEAD, &url, &alice)
            .send()
            .await
            .expect("HEAD");
        assert_eq!(res.status(), StatusCode::OK, "{spelling}");
        assert_eq!(res.headers()["upload-offset"], "5000", "{spelling}");
    }

    // Alice's upload is as she left it: she finishes it and gets her exact bytes back.
    let res = request(Method::PATCH, &upload, &alice)
        .header("Upload-Offset", "5000")
        .header("Content-Type", "application/offset+octet-stream")
        .body(bytes[5_000..].to_vec())
        .send()
        .await
        .expect("PATCH");
    assert_eq!(res.status(), StatusCode::NO_CONTENT);
    let got = request(Method::GET, &upload, &alice)
        .send()
        .await
        .expect("GET")
        .bytes()
        .await
        .expect("body");
    assert_eq!(sha256_hex(&got), sha256_hex(&bytes));
}

#[tokio::test]
async fn a_path_that_names_no_upload_is_404_with_a_message() {
    let server = start().await;
    let alice = token("alice");
    for segment in ["%2e%2e%2Fetc", "a%2Fb", "%FF", "abc.info", "a%20b"] {
        let url = format!("{}/files/{segment}", server.base);
        for (label, req) in attempts(&url, &alice) {
            let res = req.send().await.expect("send");
            assert_eq!(res.status(), StatusCode::NOT_FOUND, "{label} {segment}");
            if !label.ends_with("HEAD") || label.starts_with("override") {
                let text = res.text().await.expect("body");
                assert_eq!(text.trim_end(), "upload not found", "{label} {segment}");
            }
        }
    }
}

#[tokio::test]
async fn another_spelling_of_a_stored_file_id_is_still_its_owners_alone() {
    let server = start().await;
    let alice = token("alice");
    let bob = token("bob");
    let bytes = random_bytes(20_000);
    let res = reqwest::Client::new()
        .put(format!("{}/upload/raw?name=b.bin", server.base))
        .bearer_auth(&alice)
        .body(bytes.clone())
        .send()
        .await
        .expect("PUT");
    assert_eq!(res.status(), StatusCode::OK);
    let stored: serde_json::Value = res.json().await.expect("json");
    let url = stored["url"].as_str().expect("url");
    let id = url.rsplit('/').next().expect("id").to_owned();
    for spelling in spellings(&id) {
        let url = format!("{}/upload/{spelling}", server.base);
        let res = request(Method::GET, &url, &bob).send().await.expect("GET");
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{spelling}");
        let body: serde_json::Value = res.json().await.expect("json");
        assert_eq!(body["message"], "No such file", "{spelling}");
        let got = request(Method::GET, &url, &alice)
            .send()
            .await
            .expect("GET")
            .bytes()
            .await
            .expect("body");
        assert_eq!(sha256_hex(&got), sha256_hex(&bytes), "{spelling}");
    }
}

/// Every file under `dir`, relative to it.
fn tree(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at).expect("list") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let rel = path.strip_prefix(dir).expect("under dir");
                out.push(rel.display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// A token's `prefix` places uploads under the tus directory and nowhere else: one that would
/// climb out of it (or is not a relative path) is refused with 403 and a message, on tus and on
/// the IETF draft's creation, and nothing is written.
#[tokio::test]
async fn a_token_prefix_is_held_inside_the_tus_directory() {
    let server = start().await;
    let files = format!("{}/files/", server.base);
    let with_prefix =
        |prefix: &str| common::token(SECRET, "mallory", |c| c.prefix = Some(prefix.to_owned()));
    let before = tree(server.data_dir());
    for prefix in ["../", "../escape/", "x/../../", "x//y/", "/abs/", "./../"] {
        let auth = with_prefix(prefix);
        let res = request(Method::POST, &files, &auth)
            .header("Upload-Length", "4")
            .send()
            .await
            .expect("POST");
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{prefix:?}");
        assert_eq!(
            res.text().await.expect("body"),
            "the token's prefix must be a relative path of A-Z a-z 0-9 . _ - segments\n",
            "{prefix:?}"
        );
        let res = reqwest::Client::new()
            .post(&files)
            .bearer_auth(&auth)
            .header("Upload-Draft-Interop-Version", "8")
            .header("Upload-Complete", "?1")
            .body("abcd")
            .send()
            .await
            .expect("draft POST");
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "draft {prefix:?}");
    }
    assert_eq!(tree(server.data_dir()), before, "a refused prefix wrote");

    // A prefix inside the directory works as before.
    let bytes = random_bytes(1_000);
    let auth = with_prefix("users/alice/");
    let res = request(Method::POST, &files, &auth)
        .header("Upload-Length", bytes.len().to_string())
        .header("Content-Type", "application/offset+octet-stream")
        .body(bytes.clone())
        .send()
        .await
        .expect("POST");
    assert_eq!(res.status(), StatusCode::CREATED);
    let location = res.headers()["location"]
        .to_str()
        .expect("ascii")
        .to_owned();
    let id = location.rsplit('/').next().expect("id");
    let placed = server.data_dir().join("tus/users/alice").join(id);
    let stored = std::fs::read(&placed).expect("bytes under the prefix");
    assert_eq!(sha256_hex(&stored), sha256_hex(&bytes));
}
