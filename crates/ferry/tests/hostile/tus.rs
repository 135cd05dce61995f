//! `/files/`: the tus endpoint under `--auth-secret` and `--max-size`: malformed headers,
//! lengths and checksums, traversal-shaped ids, and another subject's upload by every verb.

use sha1::Digest;

use crate::probe::{Server, http, run_table, start, token};

const MAX: &str = "1048576";

/// Creates a 10-byte upload as `auth`; returns its path (`/files/<id>`).
async fn create(server: &Server, auth: &str) -> String {
    create_with(server, auth, &[]).await
}

/// Creates a 10-byte upload as `auth` with `headers` added; returns its path.
async fn create_with(server: &Server, auth: &str, headers: &[(&str, &str)]) -> String {
    let bearer = format!("Bearer {auth}");
    let all = [&[("Authorization", bearer.as_str())], headers].concat();
    crate::common::create_with(&reqwest::Client::new(), &server.base, 10, &all).await
}

#[tokio::test]
async fn malformed_tus_requests_get_their_precise_refusal() {
    let server = start(&["--auth-secret", crate::probe::SECRET, "--max-size", MAX]).await;
    let alice = token("alice");
    let upload = create(&server, &alice).await;
    let partial = create_with(&server, &alice, &[("Upload-Concat", "partial")]).await;
    let escaping = ferry_auth::issue(
        crate::probe::SECRET.as_bytes(),
        &ferry_auth::Claims {
            sub: "alice".into(),
            exp: u64::MAX / 2,
            prefix: Some("../../outside/".into()),
            ..ferry_auth::Claims::default()
        },
    );
    let other_sum = base64_sha1(b"other");
    let post = |name: &str| http(name, "POST", "/files/").bearer(&alice);
    let patch = |name: &str| {
        http(name, "PATCH", upload.clone())
            .bearer(&alice)
            .header("Content-Type", "application/offset+octet-stream")
            .header("Upload-Offset", "0")
    };
    run_table(
        &server,
        vec![
            post("no Tus-Resumable")
                .without("Tus-Resumable")
                .header("Upload-Length", "1")
                .expect(412, "unsupported tus version; this server speaks 1.0.0"),
            post("old Tus-Resumable")
                .header("Tus-Resumable", "0.2.2")
                .header("Upload-Length", "1")
                .expect(412, "unsupported tus version; this server speaks 1.0.0"),
            post("no length").expect(400, "Upload-Length or Upload-Defer-Length: 1 is required"),
            post("negative length")
                .header("Upload-Length", "-1")
                .expect(400, "invalid upload-length header"),
            post("exponent length")
                .header("Upload-Length", "1e3")
                .expect(400, "invalid upload-length header"),
            post("length past u64")
                .header("Upload-Length", "99999999999999999999")
                .expect(400, "invalid upload-length header"),
            post("length over --max-size")
                .header("Upload-Length", "1048577")
                .expect(413, "upload is larger than the maximum size"),
            post("defer length 2")
                .header("Upload-Defer-Length", "2")
                .expect(400, "invalid upload-defer-length header"),
            post("metadata not base64")
                .header("Upload-Length", "1")
                .header("Upload-Metadata", "name !!!")
                .expect(400, ""),
            post("concat of nothing known")
                .header(
                    "Upload-Concat",
                    "final;/files/0123456789abcdef0123456789abcdef",
                )
                .expect(400, ""),
            post("concat from another server")
                .header("Upload-Concat", "final;http://evil.example/files/abc")
                .expect(400, ""),
            // Audit finding: one partial named 400 times stored its bytes 400 times.
            post("concat repeating a part")
                .header("Upload-Concat", format!("final;{partial} {partial}"))
                .expect(
                    400,
                    "Upload-Concat names the same partial upload more than once",
                ),
            // Audit finding: a token prefix with `../` wrote outside the tus directory.
            http("token prefix leaving the store", "POST", "/files/")
                .bearer(&escaping)
                .header("Upload-Length", "1")
                .expect(
                    403,
                    "the token's prefix must be a relative path of A-Z a-z 0-9 . _ - segments",
                ),
            post("concat garbage")
                .header("Upload-Concat", "bogus")
                .expect(400, "invalid upload-concat header"),
            http("dotted id", "HEAD", "/files/abc.info")
                .bearer(&alice)
                .expect(404, ""),
            http("encoded traversal", "GET", "/files/..%2F..%2Fetc%2Fpasswd")
                .bearer(&alice)
                .expect(404, "upload not found"),
            // The URL resolves `%2e%2e` before sending: the request is for `/`, no upload.
            http("encoded dot-dot", "GET", "/files/%2e%2e")
                .bearer(&alice)
                .expect(404, "not found"),
            http("id too long", "GET", format!("/files/{}", "a".repeat(129)))
                .bearer(&alice)
                .expect(404, "upload not found"),
            patch("PATCH without Content-Type")
                .without("Content-Type")
                .body(b"0123456789".to_vec())
                .expect(415, "Content-Type must be application/offset+octet-stream"),
            patch("PATCH without Upload-Offset")
                .without("Upload-Offset")
                .body(b"0123456789".to_vec())
                .expect(400, "Upload-Offset is required"),
            patch("PATCH at a wrong offset")
                .header("Upload-Offset", "5")
                .body(b"01234".to_vec())
                .expect(409, "Upload-Offset 5 does not match the upload's offset 0"),
            patch("PATCH offset not a number")
                .header("Upload-Offset", "zero")
                .body(b"0".to_vec())
                .expect(400, "invalid upload-offset header"),
            patch("PATCH past the length")
                .body(b"0123456789X".to_vec())
                .expect(413, "body is longer than the upload's remaining length"),
            patch("PATCH with an unknown checksum algorithm")
                .header("Upload-Checksum", "whirlpool AAAAAAAAAAAAAAAAAAAAAA==")
                .body(b"0".to_vec())
                .expect(400, "Upload-Checksum names an unsupported algorithm"),
            patch("PATCH with a broken checksum")
                .header("Upload-Checksum", "sha1 !!!")
                .body(b"0".to_vec())
                .expect(400, "invalid Upload-Checksum header"),
            patch("PATCH whose checksum does not match")
                .header("Upload-Checksum", format!("sha1 {other_sum}"))
                .body(b"0123456789".to_vec())
                .expect(460, "checksum mismatch"),
            http(
                "POST under an unknown method override",
                "POST",
                upload.clone(),
            )
            .bearer(&alice)
            .header("X-HTTP-Method-Override", "TRACE")
            .expect(405, ""),
        ],
    )
    .await;
}

#[tokio::test]
async fn another_subject_cannot_reach_an_upload_by_any_verb() {
    let server = start(&["--auth-secret", crate::probe::SECRET]).await;
    let alice = token("alice");
    let bob = token("bob");
    let upload = create(&server, &alice).await;
    let as_bob = |name: &str, method: &str| {
        http(name, method, upload.clone())
            .bearer(&bob)
            .header("Content-Type", "application/offset+octet-stream")
            .header("Upload-Offset", "0")
    };
    // The audit's bypass: the same id with one character percent-encoded (`a` is `%61`).
    let encoded = {
        let (dir, id) = upload.rsplit_once('/').expect("/files/<id>");
        let first = id.chars().next().expect("an id");
        format!("{dir}/%{:02X}{}", first as u32, &id[1..])
    };
    let encoded_as_bob = |name: &str, method: &str| {
        http(name, method, encoded.clone())
            .bearer(&bob)
            .header("Content-Type", "application/offset+octet-stream")
            .header("Upload-Offset", "0")
    };
    run_table(
        &server,
        vec![
            encoded_as_bob("encoded id: HEAD", "HEAD").expect(404, ""),
            encoded_as_bob("encoded id: GET", "GET").expect(404, "upload not found"),
            encoded_as_bob("encoded id: PATCH", "PATCH")
                .body(b"evil".to_vec())
                .expect(404, "upload not found"),
            encoded_as_bob("encoded id: DELETE", "DELETE").expect(404, "upload not found"),
            encoded_as_bob("encoded id: DELETE by override", "POST")
                .header("X-HTTP-Method-Override", "DELETE")
                .expect(404, "upload not found"),
            as_bob("HEAD", "HEAD").expect(404, ""),
            as_bob("GET", "GET").expect(404, "upload not found"),
            as_bob("PATCH", "PATCH")
                .body(b"evil".to_vec())
                .expect(404, "upload not found"),
            as_bob("DELETE", "DELETE").expect(404, "upload not found"),
            as_bob("DELETE by override", "POST")
                .header("X-HTTP-Method-Override", "DELETE")
                .expect(404, "upload not found"),
            http("final of her partial", "POST", "/files/")
                .bearer(&bob)
                .header("Upload-Concat", format!("final;{upload}"))
                .expect(400, ""),
        ],
    )
    .await;
    // Nothing bob sent reached alice's upload.
    let res = reqwest::Client::new()
        .head(format!("{}{upload}", server.base))
        .header("Tus-Resumable", "1.0.0")
        .bearer_auth(&alice)
        .send()
        .await
        .expect("HEAD");
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["upload-offset"], "0");
}

fn base64_sha1(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(sha1::Sha1::digest(bytes))
}
