//! File hooks with real shell scripts: JSON on stdin, `TUS_*` in the environment, the answer
//! on stdout, failures and timeouts.
//!
//! All scripts are written once, before any test runs one: executing a file another thread
//! is still writing fails with "text file busy".

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use ferry_hooks::{
    EnabledEvents, HookDecision, HookError, HookEvent, HookSender, HookType, Hooks, HooksConfig,
    HttpRequestInfo, Upload,
};
use http::StatusCode;
use tokio::time::Instant;

/// A directory per scenario: `(name, [(hook file, script)])`.
const SCENARIOS: &[(&str, &[(&str, &str)])] = &[
    (
        "decide",
        &[
            (
                "pre-create",
                r#"#!/bin/sh
input=$(cat)
printf '%s' "$input" > stdin.json
printf '%s|%s|%s' "$TUS_ID" "$TUS_SIZE" "$TUS_OFFSET" > env.txt
case "$input" in
  *'"filename"'*) echo '{"ChangeFileInfo": {"ID": "from-script", "MetaData": {"checked": "yes"}}}' ;;
  *) echo '{"RejectUpload": true, "HTTPResponse": {"StatusCode": 403, "Body": "no filename"}}' ;;
esac
"#,
            ),
            (
                "post-finish",
                r#"#!/bin/sh
cat > finished.json
printf '%s|%s|%s' "$TUS_ID" "$TUS_SIZE" "$TUS_OFFSET" > finished-env.txt
"#,
            ),
        ],
    ),
    // tusd's examples/hooks/file/pre-create starts with `exit 0`: no input read, no output.
    ("silent", &[("pre-create", "#!/bin/sh\nexit 0\n")]),
    (
        "failing",
        &[(
            "pre-create",
            "#!/bin/sh\necho 'secret internals' >&2\nexit 3\n",
        )],
    ),
    ("slow", &[("pre-create", "#!/bin/sh\nexec sleep 30\n")]),
    (
        "garbage",
        &[("pre-create", "#!/bin/sh\necho 'this is not JSON'\n")],
    ),
];

fn scripts_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = tempfile::tempdir().expect("tempdir").keep();
        for (scenario, files) in SCENARIOS {
            let dir = root.join(scenario);
            std::fs::create_dir(&dir).expect("scenario dir");
            for (name, script) in *files {
                let path = dir.join(name);
                std::fs::write(&path, script).expect("write script");
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
            }
        }
        root
    })
}

fn sender_for(scenario: &str, timeout: Duration) -> (HookSender, PathBuf) {
    let dir = scripts_root().join(scenario);
    let config = HooksConfig {
        dir: Some(dir.clone()),
        enabled_events: EnabledEvents::all(),
        timeout,
        ..HooksConfig::default()
    };
    let sender = HookSender::from_config(&config)
        .expect("valid config")
        .expect("a sender");
    (sender, dir)
}

fn pre_create(metadata: &[(&str, &str)]) -> HookEvent {
    HookEvent::new(
        HookType::PreCreate,
        Upload {
            size: Some(1024),
            metadata: metadata
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..Upload::default()
        },
        HttpRequestInfo::default(),
    )
}

#[tokio::test]
async fn the_script_reads_json_and_env_and_its_answer_is_the_decision() {
    let (sender, dir) = sender_for("decide", Duration::from_secs(10));
    let event = pre_create(&[("filename", "a.txt")]);
    let decision = sender.blocking(event.clone()).await.expect("decision");
    let HookDecision::Continue { changes, .. } = decision else {
        panic!("expected to continue, got {decision:?}");
    };
    assert_eq!(
        changes.id.as_ref().map(|id| id.as_str()),
        Some("from-script")
    );
    assert_eq!(
        changes.metadata,
        Some(BTreeMap::from([("checked".to_owned(), "yes".to_owned())]))
    );
    let stdin: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("stdin.json")).expect("stdin.json"))
            .expect("stdin is JSON");
    assert_eq!(stdin, serde_json::to_value(&event).expect("serialize"));
    assert_eq!(
        std::fs::read_to_string(dir.join("env.txt")).expect("env.txt"),
        "|1024|0",
        "TUS_ID is empty before the upload exists"
    );

    let decision = sender
        .blocking(pre_create(&[("name", "x")]))
        .await
        .expect("decision");
    let HookDecision::Reject(reply) = decision else {
        panic!("expected a rejection, got {decision:?}");
    };
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert_eq!(reply.body, "no filename");
}

#[tokio::test]
async fn notifications_run_the_script_in_the_background() {
    let (sender, dir) = sender_for("decide", Duration::from_secs(10));
    let event = HookEvent::new(
        HookType::PostFinish,
        Upload {
            id: "abc123".to_owned(),
            size: Some(7),
            offset: 7,
            ..Upload::default()
        },
        HttpRequestInfo::default(),
    );
    sender.notify(event.clone());
    // A hook without an executable is skipped without error, as in tusd.
    sender.notify(event.clone().with_hook(HookType::PostCreate));
    tokio::time::timeout(Duration::from_secs(10), sender.flush())
        .await
        .expect("flushed in time");
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("finished.json")).expect("finished.json"))
            .expect("JSON");
    assert_eq!(written, serde_json::to_value(&event).expect("serialize"));
    assert_eq!(
        std::fs::read_to_string(dir.join("finished-env.txt")).expect("env"),
        "abc123|7|7"
    );
    assert_eq!(sender.stats().failed, 0);
    assert_eq!(sender.stats().sent, 2);
}

#[tokio::test]
async fn a_missing_or_silent_script_lets_the_upload_proceed() {
    let (sender, _) = sender_for("silent", Duration::from_secs(10));
    let decision = sender.blocking(pre_create(&[])).await.expect("decision");
    assert_eq!(decision, HookDecision::proceed());
    let decision = sender
        .blocking(pre_create(&[]).with_hook(HookType::PreFinish))
        .await
        .expect("no pre-finish executable");
    assert_eq!(decision, HookDecision::proceed());
}

#[tokio::test]
async fn a_failing_script_is_unavailable_without_leaking_its_output() {
    let (sender, _) = sender_for("failing", Duration::from_secs(10));
    let err = sender.blocking(pre_create(&[])).await.expect_err("exit 3");
    assert!(matches!(err, HookError::Unavailable { .. }), "{err:?}");
    assert_eq!(err.to_string(), "hook receiver unavailable");
    assert!(err.detail().contains("exit status: 3"), "{}", err.detail());

    let (sender, _) = sender_for("garbage", Duration::from_secs(10));
    let err = sender
        .blocking(pre_create(&[]))
        .await
        .expect_err("not JSON");
    assert!(matches!(err, HookError::InvalidResponse { .. }), "{err:?}");
}

#[tokio::test]
async fn a_slow_script_is_killed_at_the_timeout() {
    let (sender, _) = sender_for("slow", Duration::from_millis(300));
    let started = Instant::now();
    let err = sender.blocking(pre_create(&[])).await.expect_err("timeout");
    let elapsed = started.elapsed();
    assert!(matches!(err, HookError::Timeout { .. }), "{err:?}");
    assert!(
        elapsed >= Duration::from_millis(300) && elapsed < Duration::from_secs(5),
        "{elapsed:?}"
    );
}

#[test]
fn a_hooks_dir_that_is_not_a_directory_is_refused() {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    let config = HooksConfig {
        dir: Some(file.path().to_owned()),
        ..HooksConfig::default()
    };
    let err = HookSender::from_config(&config).expect_err("not a dir");
    assert!(err.to_string().ends_with("is not a directory"), "{err}");
}
