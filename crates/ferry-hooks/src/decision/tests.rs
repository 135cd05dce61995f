//! The answers of tusd's hook receivers, checked: what each hook may change or refuse,
//! and how refusals and overrides become the client's answer.

use super::*;

fn parse(hook: HookType, json: &str) -> Result<HookDecision, HookError> {
    HookDecision::from_response(
        hook,
        HookResponse::from_json(json.as_bytes()).expect("json"),
    )
}

#[test]
fn reject_merges_the_receivers_reply_over_the_default() {
    let decision = parse(
        HookType::PreCreate,
        r#"{"RejectUpload": true, "HTTPResponse": {"StatusCode": 403,
            "Body": "{\"message\":\"no\"}", "Header": {"Content-Type": "application/json",
            "X-Reason": "quota", "Content-Length": "999"}}}"#,
    )
    .expect("decision");
    let HookDecision::Reject(reply) = decision else {
        panic!("expected a rejection, got {decision:?}");
    };
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert_eq!(reply.body, r#"{"message":"no"}"#);
    assert_eq!(reply.headers["content-type"], "application/json");
    assert_eq!(reply.headers["x-reason"], "quota");
    assert!(reply.headers.get("content-length").is_none());
}

#[test]
fn bare_reject_is_a_plain_400() {
    let decision = parse(HookType::PreCreate, r#"{"RejectUpload": true}"#).expect("decision");
    let HookDecision::Reject(reply) = decision else {
        panic!("expected a rejection, got {decision:?}");
    };
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.body, "upload rejected by the server\n");
    assert_eq!(reply.headers["content-type"], "text/plain; charset=utf-8");
}

#[test]
fn flags_apply_only_to_their_hooks() {
    // RejectUpload means nothing to pre-finish, RejectTermination nothing to pre-create.
    let json = r#"{"RejectUpload": true, "RejectTermination": true, "StopUpload": true,
        "ChangeFileInfo": {"ID": "bad id!"}}"#;
    assert_eq!(
        parse(HookType::PreFinish, json).ok(),
        Some(HookDecision::proceed())
    );
    let terminate = parse(HookType::PreTerminate, json).expect("decision");
    let HookDecision::Reject(reply) = terminate else {
        panic!("expected a rejection, got {terminate:?}");
    };
    assert_eq!(
        reply.body,
        "deletion of the upload rejected by the server\n"
    );
    let response = HookResponse::from_json(json.as_bytes()).expect("json");
    assert!(
        HookDecision::stop_from_response(HookType::PreCreate, &response)
            .expect("stop")
            .is_none()
    );
    let stop = HookDecision::stop_from_response(HookType::PostReceive, &response)
        .expect("stop")
        .expect("a stop reply");
    assert_eq!(
        (stop.status, stop.body.as_str()),
        (StatusCode::BAD_REQUEST, "upload stopped by the server\n")
    );
}

#[test]
fn changes_are_validated() {
    let decision = parse(
        HookType::PreCreate,
        r#"{"ChangeFileInfo": {"ID": "user-42_file", "MetaData": {"filename": "x.pdf"},
            "Storage": {"Path": "./uploads/user-42/x.pdf"}},
           "HTTPResponse": {"Header": {"X-Upload-Owner": "42"}}}"#,
    )
    .expect("decision");
    let HookDecision::Continue { response, changes } = decision else {
        panic!("expected to continue, got {decision:?}");
    };
    assert_eq!(
        changes.id.as_ref().map(CustomId::as_str),
        Some("user-42_file")
    );
    assert_eq!(
        changes.metadata,
        Some(BTreeMap::from([("filename".into(), "x.pdf".into())]))
    );
    assert_eq!(
        changes.storage_key.as_ref().map(StorageKey::as_str),
        Some("uploads/user-42/x.pdf")
    );
    assert_eq!(response.headers["x-upload-owner"], "42");
    assert_eq!(response.status, None);

    let long = "a".repeat(MAX_ID_LEN + 1);
    for (json, detail) in [
        (
            r#"{"ChangeFileInfo": {"ID": "../etc"}}"#,
            "pre-create: ChangeFileInfo.ID may only contain A-Z a-z 0-9 _ -, got \"../etc\"",
        ),
        (
            r#"{"ChangeFileInfo": {"ID": "a/b"}}"#,
            "pre-create: ChangeFileInfo.ID may only contain A-Z a-z 0-9 _ -, got \"a/b\"",
        ),
        (
            &format!(r#"{{"ChangeFileInfo": {{"ID": "{long}"}}}}"#),
            "pre-create: ChangeFileInfo.ID must be 1 to 128 characters, got 129",
        ),
        (
            r#"{"ChangeFileInfo": {"MetaData": {"bad key": "v"}}}"#,
            "pre-create: ChangeFileInfo.MetaData key \"bad key\" must be non-empty, visible ASCII without commas",
        ),
        (
            r#"{"ChangeFileInfo": {"Storage": {"Path": "/etc/passwd"}}}"#,
            "pre-create: ChangeFileInfo.Storage key must be a relative path of A-Z a-z 0-9 . _ - segments, got \"/etc/passwd\"",
        ),
        (
            r#"{"ChangeFileInfo": {"Storage": {"Key": "a/../../b"}}}"#,
            "pre-create: ChangeFileInfo.Storage key must be a relative path of A-Z a-z 0-9 . _ - segments, got \"a/../../b\"",
        ),
        (
            r#"{"HTTPResponse": {"StatusCode": 99}}"#,
            "pre-create: HTTPResponse.StatusCode 99",
        ),
        (
            r#"{"RejectUpload": true, "HTTPResponse": {"StatusCode": 200}}"#,
            "pre-create: a refusal needs a 4xx or 5xx status, got 200 OK",
        ),
        (
            r#"{"HTTPResponse": {"Header": {"X-Bad": "a\nb"}}}"#,
            "pre-create: value of header x-bad",
        ),
    ] {
        let err = parse(HookType::PreCreate, json).expect_err(json);
        assert_eq!(err.detail(), detail, "{json}");
        assert_eq!(err.status_code(), StatusCode::BAD_GATEWAY);
    }
}

#[test]
fn pre_finish_can_change_the_final_answer() {
    let decision = parse(
        HookType::PreFinish,
        r#"{"HTTPResponse": {"StatusCode": 200, "Body": "done",
            "Header": {"Link": "<https://example.com/files/12345>; rel=\"related\""}}}"#,
    )
    .expect("decision");
    let HookDecision::Continue { response, changes } = decision else {
        panic!("expected to continue, got {decision:?}");
    };
    assert!(changes.is_empty());
    assert_eq!(response.status, Some(StatusCode::OK));
    assert_eq!(response.body.as_deref(), Some("done"));
    assert_eq!(
        response.headers["link"],
        "<https://example.com/files/12345>; rel=\"related\""
    );
    let mut answer = http::Response::new(());
    *answer.status_mut() = StatusCode::NO_CONTENT;
    answer
        .headers_mut()
        .insert("upload-offset", HeaderValue::from_static("10"));
    response.apply_head(&mut answer);
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(answer.headers()["upload-offset"], "10");
    assert!(
        answer.headers()["link"]
            .to_str()
            .is_ok_and(|v| v.contains("12345"))
    );
}

#[test]
fn a_reply_becomes_an_http_response() {
    let decision = parse(
        HookType::PreCreate,
        r#"{"RejectUpload": true, "HTTPResponse": {"StatusCode": 413, "Body": "too big"}}"#,
    )
    .expect("decision");
    let HookDecision::Reject(reply) = decision else {
        panic!("expected a rejection, got {decision:?}");
    };
    let response = reply.into_http_response();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        response.headers()["content-type"],
        "text/plain; charset=utf-8"
    );
    assert_eq!(response.body(), "too big");
}
