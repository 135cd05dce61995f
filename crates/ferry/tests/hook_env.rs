//! A file hook run by the real `ferry` process sees a clean environment: `PATH` and the `TUS_*`
//! variables, none of the server's secrets (`FERRY_*`, `COMPANION_*`, or anything else the
//! operator set for the server).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::sync::Arc;

use ferry_auth::Claims;
use ferry_testkit::process::{FerryProcess, Wrap};

const AUTH_SECRET: &str = "auth-secret-must-not-leak";

/// Secrets in the server's environment, by name and value.
const SECRETS: &[(&str, &str)] = &[
    ("FERRY_AUTH_SECRET", AUTH_SECRET),
    ("COMPANION_SECRET", "companion-secret-must-not-leak"),
    ("COMPANION_AWS_SECRET", "aws-secret-must-not-leak"),
    ("FERRY_S3_AUTH_SECRET", "s3-auth-secret-must-not-leak"),
    ("APP_DATABASE_PASSWORD", "app-password-must-not-leak"),
];

/// What the hook may see: what ferry passes, and what `sh` sets for itself.
const ALLOWED: &[&str] = &[
    "PATH",
    "TUS_ID",
    "TUS_SIZE",
    "TUS_OFFSET",
    "PWD",
    "OLDPWD",
    "SHLVL",
    "_",
];

#[tokio::test]
async fn a_file_hook_sees_no_secret_of_the_server() {
    let hooks = tempfile::tempdir().expect("hooks dir");
    let script = hooks.path().join("pre-create");
    std::fs::write(&script, "#!/bin/sh\nenv > env.txt\n").expect("write hook");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let data = tempfile::tempdir().expect("data dir");
    let hooks_dir = hooks.path().display().to_string();
    let data_dir = data.path().display().to_string();
    // The server's environment gets the secrets, as an operator's deployment would.
    let with_secrets: Wrap = Arc::new(|command: &Command| {
        let mut wrapped = Command::new(command.get_program());
        wrapped
            .args(command.get_args())
            .envs(SECRETS.iter().copied());
        wrapped
    });
    let server = FerryProcess::start_wrapped(
        env!("CARGO_BIN_EXE_ferry"),
        [
            "--data-dir",
            &data_dir,
            "--no-ui",
            "--hooks-dir",
            &hooks_dir,
        ],
        with_secrets,
    )
    .await;

    let token = ferry_auth::issue(
        AUTH_SECRET.as_bytes(),
        &Claims {
            sub: "alice".to_owned(),
            exp: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .expect("clock")
                .as_secs()
                + 600,
            ..Claims::default()
        },
    );
    let created = reqwest::Client::new()
        .post(format!("{}/files/", server.base))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", "5")
        .bearer_auth(token)
        .send()
        .await
        .expect("POST /files/");
    assert_eq!(created.status(), 201, "the server took FERRY_AUTH_SECRET");

    // pre-create blocks the creation, so its dump is complete once the 201 is here.
    let dump = std::fs::read_to_string(hooks.path().join("env.txt")).expect("env.txt");
    let env: BTreeMap<&str, &str> = dump.lines().filter_map(|l| l.split_once('=')).collect();
    for (name, value) in SECRETS {
        assert!(!dump.contains(value), "{name}'s value reached the hook");
    }
    let extra: Vec<&str> = env
        .keys()
        .copied()
        .filter(|name| !ALLOWED.contains(name))
        .collect();
    assert!(extra.is_empty(), "the hook inherited {extra:?}");
    assert_eq!(env.get("TUS_SIZE"), Some(&"5"));
    assert!(
        env.contains_key("PATH"),
        "the hook needs PATH for its tools"
    );
}
