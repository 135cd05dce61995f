//! The API's edges over real HTTP: unknown paths and wrong methods under every API prefix are
//! JSON `{message}` 404s and 405s (never the page), the page answers only navigations, `/s3/*`
//! without a bucket says so, and `/openapi.json` describes every route.

mod common;

use reqwest::Method;

/// `ferry serve` with the page (from `ui_dir`, else the embedded one) and `extra` flags.
async fn start(ui_dir: Option<&std::path::Path>, extra: &[&str]) -> common::Server {
    let ui_dir = ui_dir.map(|d| d.display().to_string());
    let mut args = Vec::from(extra);
    if let Some(dir) = &ui_dir {
        args.extend(["--ui-dir", dir]);
    }
    common::configure(&args).await.start()
}

/// A bucket that is never contacted: routing alone is under test.
const BUCKET: &[&str] = &[
    "--s3-endpoint",
    "http://127.0.0.1:9",
    "--s3-bucket",
    "surface",
    "--s3-access-key",
    "key",
    "--s3-secret-key",
    "secret",
    "--s3-force-path-style",
];

/// A server with a cloud provider enabled (never contacted): its routes, the login socket
/// included, are mounted.
async fn start_with_provider() -> common::Server {
    let provider = [
        "--secret",
        "surface-secret",
        "--google-key",
        "key",
        "--google-secret",
        "secret",
        "--assembly-key",
        "surface-key",
    ];
    start(None, &[BUCKET, &provider].concat()).await
}

/// A page directory with an index and one asset.
fn page_dir() -> tempfile::TempDir {
    let ui = tempfile::tempdir().expect("temp dir");
    std::fs::write(ui.path().join("index.html"), "<title>ferry page</title>").expect("write");
    std::fs::create_dir(ui.path().join("assets")).expect("mkdir");
    std::fs::write(ui.path().join("assets/app.js"), "console.log(1)").expect("write");
    ui
}

async fn send(base: &str, method: &str, path: &str, accept: &str) -> reqwest::Response {
    reqwest::Client::new()
        .request(
            Method::from_bytes(method.as_bytes()).expect("method"),
            format!("{base}{path}"),
        )
        .header("accept", accept)
        .send()
        .await
        .expect("request")
}

/// Asserts a JSON `{message}` error with `status`; HEAD answers carry no body, so only their
/// status and content type are checked.
async fn assert_json_error(res: reqwest::Response, method: &str, path: &str, status: u16) {
    assert_eq!(res.status(), status, "{method} {path}");
    assert_eq!(
        res.headers()["content-type"],
        "application/json",
        "{method} {path}"
    );
    if path.starts_with("/files") {
        assert_eq!(res.headers()["tus-resumable"], "1.0.0", "{method} {path}");
    }
    if method == "HEAD" {
        return;
    }
    let body: serde_json::Value = res.json().await.expect("JSON body");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{method} {path}: {body}"
    );
}

#[tokio::test]
async fn unknown_paths_under_every_api_prefix_are_json_404s() {
    let ui = page_dir();
    let server = start(Some(ui.path()), BUCKET).await;
    let cases = [
        ("HEAD", "/files/abc/def"),
        ("GET", "/files/abc/def"),
        ("PATCH", "/files/abc/def/ghi"),
        ("GET", "/upload/a/b"),
        ("POST", "/upload/raw/x"),
        ("GET", "/url"),
        ("POST", "/url/nope"),
        ("GET", "/s3"),
        ("GET", "/s3/nope"),
        ("GET", "/s3/multipart/id/1/extra"),
        ("GET", "/api"),
        ("GET", "/api/token/extra"),
        ("GET", "/api2/nope"),
        ("GET", "/drive"),
        ("GET", "/drive/nope"),
        ("GET", "/instagram/nope/deeper"),
        ("GET", "/providers/x"),
        ("GET", "/metrics/x"),
        ("GET", "/health/x"),
        ("GET", "/openapi.json/x"),
    ];
    for (method, path) in cases {
        // Asked as a browser would: the page must still not answer.
        let res = send(&server.base, method, path, "text/html,*/*;q=0.8").await;
        assert_json_error(res, method, path, 404).await;
    }
}

#[tokio::test]
async fn wrong_methods_on_known_paths_are_json_405s_with_allow() {
    let server = start(None, BUCKET).await;
    // Each path with a method it does not take and every method it does.
    let cases: &[(&str, &str, &[&str])] = &[
        ("PUT", "/files/", &["POST", "OPTIONS"]),
        (
            "PUT",
            "/files/abc",
            &["HEAD", "PATCH", "DELETE", "GET", "POST", "OPTIONS"],
        ),
        ("GET", "/upload", &["POST"]),
        ("GET", "/upload/raw", &["POST", "PUT"]),
        ("DELETE", "/upload/abc", &["GET", "HEAD"]),
        ("GET", "/url/meta", &["POST"]),
        ("GET", "/url/get", &["POST"]),
        ("POST", "/s3/params", &["GET", "HEAD"]),
        ("GET", "/s3/multipart", &["POST"]),
        ("POST", "/s3/multipart/id", &["GET", "HEAD", "DELETE"]),
        ("GET", "/s3/multipart/id/complete", &["POST"]),
        ("POST", "/api/token", &["GET", "HEAD"]),
        ("POST", "/drive/list", &["GET", "HEAD"]),
        ("GET", "/drive/get/file", &["POST"]),
        ("PUT", "/drive/logout", &["GET", "HEAD", "POST"]),
        ("GET", "/drive/refresh-token", &["POST"]),
        ("POST", "/drive/connect", &["GET", "HEAD"]),
        ("POST", "/providers", &["GET", "HEAD"]),
        ("POST", "/metrics", &["GET", "HEAD"]),
        ("DELETE", "/health", &["GET", "HEAD"]),
        ("POST", "/openapi.json", &["GET", "HEAD"]),
    ];
    for (method, path, allowed) in cases {
        let res = send(&server.base, method, path, "application/json").await;
        let allow = res
            .headers()
            .get("allow")
            .unwrap_or_else(|| panic!("{method} {path}: no Allow"))
            .to_str()
            .expect("ascii")
            .to_owned();
        let mut got: Vec<&str> = allow.split(',').map(str::trim).collect();
        got.sort_unstable();
        let mut want = allowed.to_vec();
        want.sort_unstable();
        assert_eq!(got, want, "{method} {path}");
        assert_json_error(res, method, path, 405).await;
    }
}

#[tokio::test]
async fn s3_routes_without_a_bucket_say_so() {
    let server = start(None, &[]).await;
    for (method, path) in [
        ("GET", "/s3/params?filename=a&type=text/plain"),
        ("POST", "/s3/multipart"),
        ("GET", "/s3/multipart/id"),
        ("DELETE", "/s3/multipart/id"),
        ("GET", "/s3/multipart/id/batch?partNumbers=1"),
        ("POST", "/s3/multipart/id/complete"),
        ("GET", "/s3/multipart/id/1"),
        ("GET", "/s3/anything/else"),
    ] {
        let res = send(&server.base, method, path, "*/*").await;
        assert_eq!(res.status(), 404, "{method} {path}");
        assert_eq!(res.headers()["content-type"], "application/json");
        let body: serde_json::Value = res.json().await.expect("JSON");
        assert_eq!(
            body,
            serde_json::json!({ "message": "S3 is not configured" }),
            "{method} {path}"
        );
    }
}

/// The page answers navigations only, for a `--ui-dir` page and for the embedded one.
#[tokio::test]
async fn the_page_answers_navigations_only() {
    let ui = page_dir();
    let dir = start(Some(ui.path()), &[]).await;
    let html = "text/html,application/xhtml+xml,*/*;q=0.8";
    for path in ["/", "/some/client/route"] {
        let res = send(&dir.base, "GET", path, html).await;
        assert_eq!(res.status(), 200, "{path}");
        assert_eq!(res.text().await.expect("body"), "<title>ferry page</title>");
    }
    let asset = send(&dir.base, "GET", "/assets/app.js", "*/*").await;
    assert_eq!(asset.status(), 200);
    assert_eq!(asset.text().await.expect("body"), "console.log(1)");
    for (path, accept) in [
        ("/some/client/route", "application/json"),
        ("/some/client/route", "text/html;q=0"),
        ("/missing.js", html),
        ("/assets/x.css", html),
        ("/assets/app.js.map", "*/*"),
    ] {
        let res = send(&dir.base, "GET", path, accept).await;
        assert_eq!(res.status(), 404, "{path} {accept}");
        assert_eq!(res.headers()["content-type"], "application/json");
    }
    let post = send(&dir.base, "POST", "/some/client/route", html).await;
    assert_ne!(post.status(), 200);

    // A --ui-dir with no page in it: the "not built" placeholder, for navigations only.
    let empty = tempfile::tempdir().expect("temp dir");
    let placeholder = start(Some(empty.path()), &[]).await;
    let page = send(&placeholder.base, "GET", "/some/client/route", html).await;
    assert_eq!(page.status(), 200);
    assert!(
        page.text()
            .await
            .expect("body")
            .contains("The upload page is not built")
    );
    let asset = send(&placeholder.base, "GET", "/missing.js", html).await;
    assert_eq!(asset.status(), 404);

    let embedded = start(None, &[]).await;
    let dist = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps/demo/dist");
    let built = dist.join("index.html").is_file();
    let page = send(&embedded.base, "GET", "/some/client/route", html).await;
    assert_eq!(page.status(), 200);
    if built {
        assert_eq!(page.headers()["content-type"], "text/html");
    }
    for (path, accept) in [
        ("/some/client/route", "application/json"),
        ("/missing.js", html),
        ("/assets/x.css", html),
    ] {
        let res = send(&embedded.base, "GET", path, accept).await;
        assert_eq!(res.status(), 404, "{path}");
    }
}

#[tokio::test]
async fn openapi_document_describes_every_route() {
    let server = start(None, &[]).await;
    let res = send(&server.base, "GET", "/openapi.json", "application/json").await;
    assert_eq!(res.status(), 200);
    assert!(
        res.headers()["content-type"]
            .to_str()
            .expect("ascii")
            .starts_with("application/json")
    );
    let doc: serde_json::Value = res.json().await.expect("JSON");
    assert!(
        doc["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1.")),
        "{}",
        doc["openapi"]
    );
    let paths = doc["paths"].as_object().expect("paths");
    for path in [
        "/files/",
        "/files/{id}",
        "/upload",
        "/upload/raw",
        "/upload/{id}",
        "/url/meta",
        "/url/get",
        "/api/{token}",
        "/s3/params",
        "/s3/multipart",
        "/s3/multipart/{uploadId}",
        "/s3/multipart/{uploadId}/batch",
        "/s3/multipart/{uploadId}/complete",
        "/s3/multipart/{uploadId}/{partNumber}",
        "/providers",
        "/{provider}/list/{path}",
        "/{provider}/get/{id}",
        "/{provider}/logout",
        "/{provider}/refresh-token",
        "/{provider}/thumbnail/{id}",
        "/{provider}/connect",
        "/{provider}/redirect",
        "/{provider}/callback",
        "/{provider}/send-token",
        "/api2/auth-callback/token/{id}",
        "/health",
        "/metrics",
        "/openapi.json",
        "/assemblies",
        "/assemblies/{id}",
        "/assemblies/{id}/files/{file}",
        "/assemblies/{id}/stream",
    ] {
        assert!(paths.contains_key(path), "{path} missing from the document");
    }
    // Every tus verb on an upload, each with its headers described.
    let upload = &paths["/files/{id}"];
    for verb in ["head", "patch", "delete", "get", "options"] {
        assert!(upload.get(verb).is_some(), "/files/{{id}} {verb}");
    }
    assert!(paths["/files/"].get("post").is_some());
    for verb in ["post", "get", "delete"] {
        assert!(
            paths["/assemblies/{id}"].get(verb).is_some(),
            "/assemblies/{{id}} {verb}"
        );
    }
    let scheme = &doc["components"]["securitySchemes"]["bearerAuth"];
    assert_eq!(scheme["type"], "http");
    assert_eq!(scheme["scheme"], "bearer");
    assert_eq!(scheme["bearerFormat"], "JWT");
    assert!(doc["components"]["schemas"]["ErrorMessage"].is_object());
    // Protected and open routes as `--auth-secret` will treat them.
    let secured = |path: &str, verb: &str| {
        paths[path][verb]["security"]
            .as_array()
            .is_some_and(|s| s.iter().any(|r| r.get("bearerAuth").is_some()))
    };
    for (path, verb) in [
        ("/files/", "post"),
        ("/files/{id}", "patch"),
        ("/upload", "post"),
        ("/url/get", "post"),
        ("/s3/params", "get"),
        ("/{provider}/list/{path}", "get"),
    ] {
        assert!(secured(path, verb), "{verb} {path} should need a token");
    }
    for (path, verb) in [
        ("/files/", "options"),
        ("/health", "get"),
        ("/metrics", "get"),
        ("/{provider}/connect", "get"),
        ("/{provider}/send-token", "get"),
    ] {
        assert!(!secured(path, verb), "{verb} {path} should be open");
    }
}

/// `ferry serve --help` lists every route of the OpenAPI document (so it lists every route the
/// handlers declare), and `docs/server.md`'s copy of the table is the same table.
#[test]
fn help_and_server_docs_list_every_route() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--help"])
        .output()
        .expect("run ferry");
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).expect("utf-8");
    let operations = ferry::openapi::operations();
    assert!(operations.len() >= 28, "{operations:?}");
    for (path, methods) in &operations {
        assert!(!methods.is_empty(), "{path}");
        for method in methods {
            let row = format!("| {method} | {path} | ");
            assert!(help.contains(&row), "`{row}` missing from serve --help");
        }
    }
    let table = ferry::openapi::route_table();
    assert!(help.contains(table.trim_end()), "help holds the table");
    let mut docs = Docs::read();
    docs.keep_equal("docs/server.md", "routes", &table);
    docs.finish();
}

/// Every option of `ferry serve` is in the docs: each options struct's table (made from clap's
/// declarations, as `--help` is) stands once in `docs/*.md`, equal to what the code declares.
#[test]
fn docs_list_every_option() {
    let tables = ferry::reference::option_tables();
    assert!(tables.len() >= 6, "{tables:?}");
    let mut docs = Docs::read();
    for (group, table) in &tables {
        let file = docs
            .file_with(&format!("<!-- options:{group}:begin -->"))
            .unwrap_or_else(|| {
                panic!("no docs/*.md has a table for {group}: add `<!-- options:{group}:begin -->` and `<!-- options:{group}:end -->` where its options belong, then bless")
            });
        docs.keep_equal(&file, &format!("options:{group}"), table);
    }
    docs.finish();
}

/// `docs/*.md` with generated blocks between `<!-- NAME:begin -->` and `<!-- NAME:end -->`:
/// compared with the code's tables, or rewritten with `FERRY_BLESS_DOCS=1`.
struct Docs {
    files: Vec<(String, String)>,
    /// Blocks that differ, as `file: block`.
    stale: Vec<String>,
    bless: bool,
}

impl Docs {
    fn root() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    fn read() -> Self {
        let mut files: Vec<(String, String)> = std::fs::read_dir(Self::root().join("docs"))
            .expect("docs/")
            .map(|entry| {
                entry
                    .expect("entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|name| name.ends_with(".md"))
            .map(|name| {
                let rel = format!("docs/{name}");
                let text = std::fs::read_to_string(Self::root().join(&rel)).expect("read");
                (rel, text)
            })
            .collect();
        files.sort();
        Docs {
            files,
            stale: Vec::new(),
            bless: std::env::var_os("FERRY_BLESS_DOCS").is_some(),
        }
    }

    /// The one file holding `marker`.
    fn file_with(&self, marker: &str) -> Option<String> {
        let holders: Vec<&String> = self
            .files
            .iter()
            .filter(|(_, text)| text.contains(marker))
            .map(|(name, _)| name)
            .collect();
        assert!(holders.len() <= 1, "{marker} in several files: {holders:?}");
        holders.first().map(|name| (*name).clone())
    }

    /// The block `name` of `file` equals `want` (or becomes it when blessing).
    fn keep_equal(&mut self, file: &str, name: &str, want: &str) {
        let (begin, end) = (
            format!("<!-- {name}:begin -->\n"),
            format!("<!-- {name}:end -->"),
        );
        let text = &mut self
            .files
            .iter_mut()
            .find(|(f, _)| f == file)
            .unwrap_or_else(|| panic!("{file} missing"))
            .1;
        let start = text
            .find(&begin)
            .unwrap_or_else(|| panic!("{file}: no {begin}"))
            + begin.len();
        let stop = start
            + text[start..]
                .find(&end)
                .unwrap_or_else(|| panic!("{file}: no {end}"));
        if &text[start..stop] == want {
            return;
        }
        if self.bless {
            text.replace_range(start..stop, want);
        }
        self.stale.push(format!("{file}: {name}"));
    }

    /// Writes blessed files back (only those that changed: the two tests bless different
    /// blocks, one at a time with `--test-threads=1`), or fails naming every stale block.
    fn finish(self) {
        if self.bless {
            for (file, text) in &self.files {
                if self
                    .stale
                    .iter()
                    .any(|s| s.starts_with(&format!("{file}: ")))
                {
                    std::fs::write(Self::root().join(file), text).expect("write");
                }
            }
            return;
        }
        assert!(
            self.stale.is_empty(),
            "stale generated tables (run FERRY_BLESS_DOCS=1 cargo test -p ferry --test surface -- docs --test-threads=1): {:?}",
            self.stale
        );
    }
}

/// The document and the router agree path by path: every documented path is routed, and the
/// methods the router allows there (its `Allow` on a method nobody takes) are the documented
/// ones. A route added without its annotation, or an annotation without a route, fails here.
#[tokio::test]
async fn the_document_matches_the_router() {
    let server = start_with_provider().await;
    for (path, documented) in ferry::openapi::operations() {
        let concrete: String = path
            .replace("{provider}", "drive")
            .split('/')
            .map(|segment| {
                if segment.starts_with('{') {
                    "x1"
                } else {
                    segment
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        let res = send(&server.base, "TRACE", &concrete, "application/json").await;
        assert_eq!(res.status(), 405, "{path} is not routed");
        let allow = res.headers()["allow"].to_str().expect("ascii").to_owned();
        let mut routed: Vec<&str> = allow.split(',').map(str::trim).collect();
        let mut documented = documented.clone();
        // axum answers HEAD wherever GET is; the document lists HEAD only where it differs.
        for methods in [&mut routed, &mut documented] {
            if methods.contains(&"GET") && !methods.contains(&"HEAD") {
                methods.push("HEAD");
            }
            methods.sort_unstable();
        }
        assert_eq!(routed, documented, "{path}");
    }
}

/// The schemas say what the handlers send: real answers have exactly the properties their
/// schema lists (an upload, the provider list, an error).
#[tokio::test]
async fn schemas_match_real_answers() {
    let server = start(None, &[]).await;
    let doc: serde_json::Value = send(&server.base, "GET", "/openapi.json", "*/*")
        .await
        .json()
        .await
        .expect("JSON");
    let schemas = &doc["components"]["schemas"];
    let keys_of = |schema: &str| {
        let mut keys: Vec<String> = schemas[schema]["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{schema} has properties"))
            .keys()
            .cloned()
            .collect();
        keys.sort();
        keys
    };
    let keys = |value: &serde_json::Value| {
        let mut keys: Vec<String> = value.as_object().expect("object").keys().cloned().collect();
        keys.sort();
        keys
    };
    let client = reqwest::Client::new();
    let uploaded: serde_json::Value = client
        .put(format!("{}/upload/raw?name=a.txt", server.base))
        .header("content-type", "text/plain")
        .body("hello")
        .send()
        .await
        .expect("upload")
        .json()
        .await
        .expect("JSON");
    assert_eq!(keys(&uploaded), keys_of("Uploaded"), "{uploaded}");
    assert_eq!(keys(&uploaded["files"][0]), keys_of("StoredFile"));
    assert_eq!(uploaded["files"][0]["size"], 5);

    let providers: serde_json::Value = send(&server.base, "GET", "/providers", "*/*")
        .await
        .json()
        .await
        .expect("JSON");
    assert_eq!(keys(&providers), keys_of("Providers"), "{providers}");

    for (method, path) in [("GET", "/upload/nope"), ("POST", "/url/meta")] {
        let error: serde_json::Value = send(&server.base, method, path, "*/*")
            .await
            .json()
            .await
            .expect("JSON");
        assert_eq!(
            keys(&error),
            keys_of("ErrorMessage"),
            "{method} {path}: {error}"
        );
    }
}
