//! Property tests of what a hook receiver answers (untrusted: any program or service an
//! operator points at): any document parses or is refused without a panic, any parsed answer is
//! checked or refused for every hook without a panic, and what a check lets through is safe to
//! apply (headers and status on a real response; ids and storage keys that cannot leave their
//! directory).

use ferry_hooks::{CustomId, HookDecision, HookReply, HookResponse, HookType, StorageKey};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const HOOKS: [HookType; 5] = [
    HookType::PreCreate,
    HookType::PostCreate,
    HookType::PostReceive,
    HookType::PreFinish,
    HookType::PreTerminate,
];

/// Any JSON value, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "\\PC{0,30}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("\\PC{0,12}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Answers shaped like tusd's, with hostile values where a receiver could put them.
fn answer() -> impl Strategy<Value = Value> {
    (
        any::<i64>(),
        prop_oneof![100i64..700, Just(0)],
        "\\PC{0,40}",
        proptest::collection::btree_map("\\PC{0,16}", "\\PC{0,40}", 0..4),
        any::<[bool; 3]>(),
        "\\PC{0,140}",
        proptest::collection::btree_map("\\PC{0,10}", "\\PC{0,20}", 0..3),
        "[a-zA-Z0-9./_-]{0,40}|\\PC{0,40}",
        any_json(),
    )
        .prop_map(|(wild, status, body, header, flags, id, meta, path, extra)| {
            json!({
                "HTTPResponse": { "StatusCode": if wild % 3 == 0 { wild } else { status }, "Body": body, "Header": header },
                "RejectUpload": flags[0],
                "RejectTermination": flags[1],
                "StopUpload": flags[2],
                "ChangeFileInfo": { "ID": id, "MetaData": meta, "Storage": { "Path": path } },
                "Extra": extra,
            })
        })
}

fn apply(reply: HookReply) {
    let response = reply.into_http_response();
    assert!((100..=599).contains(&response.status().as_u16()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_bytes_parse_or_are_refused(raw in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = HookResponse::from_json(&raw);
    }

    #[test]
    fn any_json_document_parses_or_is_refused(doc in any_json()) {
        if let Ok(parsed) = HookResponse::from_json(doc.to_string().as_bytes()) {
            for hook in HOOKS {
                let _ = HookDecision::from_response(hook, parsed.clone());
            }
        }
    }

    #[test]
    fn checked_answers_are_safe_to_apply(doc in answer()) {
        let Ok(parsed) = HookResponse::from_json(doc.to_string().as_bytes()) else {
            return Ok(());
        };
        for hook in HOOKS {
            match HookDecision::from_response(hook, parsed.clone()) {
                Ok(HookDecision::Reject(reply)) => apply(reply),
                Ok(HookDecision::Continue { response, .. }) => {
                    let mut answer = http::Response::new(());
                    response.apply_head(&mut answer);
                }
                Err(_) => {}
            }
            if let Ok(Some(reply)) = HookDecision::stop_from_response(hook, &parsed) {
                apply(reply);
            }
        }
    }

    #[test]
    fn ids_are_exactly_the_safe_alphabet(raw in "[A-Za-z0-9_-]{0,140}|\\PC{0,40}") {
        let safe = (1..=128).contains(&raw.len())
            && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        prop_assert_eq!(CustomId::parse(&raw).is_ok(), safe, "{:?}", raw);
    }

    #[test]
    fn storage_keys_never_leave_their_directory(raw in "(\\./)?([a-zA-Z0-9._-]{0,6}/?){0,6}|\\PC{0,40}") {
        if let Ok(key) = StorageKey::parse(&raw) {
            let key = key.as_str();
            prop_assert!(!key.starts_with('/'), "{:?}", key);
            prop_assert!(key.split('/').all(|s| !s.is_empty() && s != "." && s != ".."), "{:?}", key);
            let joined = std::path::Path::new("/data/tus").join(key);
            prop_assert!(joined.components().all(|c| !matches!(c, std::path::Component::ParentDir)));
            prop_assert!(joined.starts_with("/data/tus"));
        }
    }
}
