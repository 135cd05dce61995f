//! tusd's own documented hook payloads (the values of the examples in tusd's
//! `docs/_advanced-topics/hooks.md`, `examples/hooks/http/server.py` and
//! `examples/hooks/file/pre-create`, written out as strict JSON) read as tusd reads them.

use std::collections::BTreeMap;

use ferry_hooks::{HookDecision, HookEvent, HookResponse, HookType};
use http::StatusCode;
use serde_json::{Value, json};

fn decide(hook: HookType, answer: &Value) -> HookDecision {
    let response: HookResponse = serde_json::from_value(answer.clone()).expect("response parses");
    HookDecision::from_response(hook, response).expect("usable response")
}

#[test]
fn the_documented_post_finish_request_round_trips() {
    let request = json!({
        "Type": "post-finish",
        "Event": {
            "Upload": {
                "ID": "5d892c228ec8d0451dfec588697e8930",
                "Size": 432724,
                "SizeIsDeferred": false,
                "Offset": 432724,
                "MetaData": {
                    "filename": "Screenshot 2023-08-17 at 09.00.40 1.png",
                    "filetype": "image/png"
                },
                "IsPartial": false,
                "IsFinal": false,
                "PartialUploads": null,
                "Storage": {
                    "Type": "filestore",
                    "Path": "/my/upload/directory/14b1c4c77771671a8479bc0444bbc5ce",
                    "InfoPath": "/my/upload/directory/14b1c4c77771671a8479bc0444bbc5ce.info"
                }
            },
            "HTTPRequest": {
                "Method": "PATCH",
                "URI": "/files/5d892c228ec8d0451dfec588697e8930",
                "RemoteAddr": "127.0.0.1:59395",
                "Header": {
                    "Host": ["localhost:8080"],
                    "Tus-Resumable": ["1.0.0"],
                    "User-Agent": ["Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:109.0) Gecko/20100101 Firefox/116.0"]
                }
            }
        }
    });
    let event: HookEvent = serde_json::from_value(request.clone()).expect("request parses");
    assert_eq!(event.hook, HookType::PostFinish);
    let upload = event.upload();
    assert_eq!(upload.id, "5d892c228ec8d0451dfec588697e8930");
    assert_eq!((upload.size, upload.offset), (Some(432_724), 432_724));
    assert_eq!(upload.metadata["filetype"], "image/png");
    let storage = upload.storage.as_ref().expect("storage");
    assert_eq!(storage.get("Type"), Some("filestore"));
    assert_eq!(event.request().header_values("host"), ["localhost:8080"]);
    assert_eq!(
        serde_json::to_value(&event).expect("serialize"),
        request,
        "Ferry sends back exactly what tusd sends"
    );
}

#[test]
fn the_documented_null_size_of_a_deferred_upload_is_read() {
    let event: HookEvent = serde_json::from_value(json!({
        "Type": "post-create",
        "Event": {"Upload": {"ID": "x", "Size": null, "SizeIsDeferred": true, "Offset": 0,
            "MetaData": null, "IsPartial": false, "IsFinal": false, "PartialUploads": null,
            "Storage": null},
            "HTTPRequest": {"Method": "POST", "URI": "/files/", "RemoteAddr": "", "Header": null}}
    }))
    .expect("request parses");
    assert_eq!(event.upload().size, None);
    assert!(event.upload().metadata.is_empty());
    assert!(event.request().header.is_empty());
}

#[test]
fn the_documented_full_response_is_read_per_hook() {
    let answer = json!({
        "HTTPResponse": {
            "StatusCode": 400,
            "Body": "{\"message\":\"the upload is too big\"}",
            "Header": {"Content-Type": "application/json"}
        },
        "RejectUpload": false,
        "RejectTermination": false,
        "ChangeFileInfo": {
            "ID": "my-custom-upload-id",
            "MetaData": {"my-custom-field": "..."},
            "Storage": {"Path": "./upload-e7a036dc-33f4-451f-9520-49032b87e952/presentation.pdf"}
        },
        "StopUpload": true
    });
    let HookDecision::Continue { response, changes } = decide(HookType::PreCreate, &answer) else {
        panic!("RejectUpload is false: the upload goes on");
    };
    assert_eq!(response.status, Some(StatusCode::BAD_REQUEST));
    assert_eq!(
        response.body.as_deref(),
        Some(r#"{"message":"the upload is too big"}"#)
    );
    assert_eq!(
        changes.id.as_ref().map(|id| id.as_str()),
        Some("my-custom-upload-id")
    );
    assert_eq!(
        changes.metadata,
        Some(BTreeMap::from([(
            "my-custom-field".to_owned(),
            "...".to_owned()
        )]))
    );
    assert_eq!(
        changes.storage_key.as_ref().map(|key| key.as_str()),
        Some("upload-e7a036dc-33f4-451f-9520-49032b87e952/presentation.pdf")
    );
    // The same answer to post-receive stops the upload with its HTTPResponse.
    let response: HookResponse = serde_json::from_value(answer).expect("parses");
    let stop = HookDecision::stop_from_response(HookType::PostReceive, &response)
        .expect("usable")
        .expect("stops");
    assert_eq!(stop.status, StatusCode::BAD_REQUEST);
    assert_eq!(stop.headers["content-type"], "application/json");
}

#[test]
fn the_documented_rejections_reach_the_client() {
    for (answer, status, body) in [
        (
            json!({"HTTPResponse": {"StatusCode": 400,
                "Body": "{\"message\":\"no project with ID 1234 found\"}",
                "Header": {"Content-Type": "application/json"}}, "RejectUpload": true}),
            StatusCode::BAD_REQUEST,
            r#"{"message":"no project with ID 1234 found"}"#,
        ),
        (
            json!({"HTTPResponse": {"StatusCode": 403,
                "Body": "{\"message\":\"authentication failed\"}",
                "Header": {"Content-Type": "application/json"}}, "RejectUpload": true}),
            StatusCode::FORBIDDEN,
            r#"{"message":"authentication failed"}"#,
        ),
        // examples/hooks/file/pre-create: no Header, so the default text/plain stays.
        (
            json!({"RejectUpload": true,
                "HTTPResponse": {"StatusCode": 400, "Body": "no filename provided"}}),
            StatusCode::BAD_REQUEST,
            "no filename provided",
        ),
    ] {
        let HookDecision::Reject(reply) = decide(HookType::PreCreate, &answer) else {
            panic!("expected a rejection for {answer}");
        };
        assert_eq!((reply.status, reply.body.as_str()), (status, body));
        assert!(reply.headers.contains_key("content-type"));
    }
}

#[test]
fn the_python_example_answer_is_read_as_tusd_reads_it() {
    // examples/hooks/http/server.py sends "Headers", which Go ignores as an unknown key.
    let answer = json!({"HTTPResponse": {"Headers": {"X-Some-Header": "yes"},
        "StatusCode": 400, "Body": "no filename provided"}, "RejectUpload": true});
    let HookDecision::Reject(reply) = decide(HookType::PreCreate, &answer) else {
        panic!("expected a rejection");
    };
    assert!(reply.headers.get("x-some-header").is_none());
    assert_eq!(reply.headers["content-type"], "text/plain; charset=utf-8");

    let accepted = json!({"HTTPResponse": {"Headers": {}},
        "ChangeFileInfo": {"ID": "prefix-0f6b5f3e-3a40-4b8e-9b53-0d2f0d6c2a11",
            "MetaData": {"filename": "a.txt", "creation_time": "Thu Aug 17 09:00:40 2023"}}});
    let HookDecision::Continue { changes, .. } = decide(HookType::PreCreate, &accepted) else {
        panic!("expected to continue");
    };
    assert_eq!(
        changes.id.as_ref().map(|id| id.as_str()),
        Some("prefix-0f6b5f3e-3a40-4b8e-9b53-0d2f0d6c2a11")
    );
}

#[test]
fn the_documented_pre_finish_answer_adds_a_link_header() {
    let answer = json!({"HTTPResponse": {"Header": {
        "Link": "<https://example.com/files/12345>; rel=\"related\""}}, "StopUpload": true});
    let HookDecision::Continue { response, changes } = decide(HookType::PreFinish, &answer) else {
        panic!("pre-finish cannot reject");
    };
    assert!(changes.is_empty());
    assert_eq!(response.status, None);
    assert_eq!(
        response.headers["link"],
        "<https://example.com/files/12345>; rel=\"related\""
    );
}
