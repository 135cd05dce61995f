//! `/openapi.json` describes every route the router has, and its schemas match real answers.

use super::*;

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
