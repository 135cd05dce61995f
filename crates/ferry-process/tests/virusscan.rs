//! `/file/virusscan` end to end through the Assembly API, against a real clamd (see
//! `clamd_support`): a clean file and the EICAR test file in one Assembly. Without
//! `error_on_decline` the infected file is dropped and the clean one passes on byte for byte;
//! with it the Assembly fails with `FILE_VIRUSSCAN_DECLINED_FILE` and the step's `error_msg`.

mod clamd_support;
mod common;

use std::sync::Arc;

use clamd_support::{eicar, ready, start_clamd};
use common::*;
use ferry_process::RobotEngines;
use serde_json::json;
use sha2::{Digest, Sha256};

#[tokio::test]
async fn the_infected_file_is_declined_and_the_clean_one_passes() {
    let dir = tempfile::tempdir().expect("dir");
    let (mut clamd, clamd_config) = start_clamd(dir.path());
    ready(&clamd_config, &mut clamd, dir.path()).await;
    let mut c = config(dir.path(), false);
    c.engines = RobotEngines {
        programs: Arc::default(),
        clamd: Some(clamd_config),
        limits: Default::default(),
    };
    let s = start(c).await;
    let clean = "nothing to see here\n".repeat(1000).into_bytes();
    let infected = eicar();
    let files: [(&str, &[u8]); 2] = [("clean.txt", &clean), ("eicar.com", &infected)];

    // Dropped: the Assembly completes with the clean file only.
    let p = params(json!({"scanned": {"robot": "/file/virusscan", "use": ":original"}}));
    let (code, created) = create(&s.base, form(&p, &files)).await;
    assert_eq!(code, 200, "{created}");
    let done = settle(created["assembly_ssl_url"].as_str().expect("url")).await;
    assert_eq!(done["ok"], "ASSEMBLY_COMPLETED", "{done}");
    let passed = done["results"]["scanned"].as_array().expect("results");
    assert_eq!(passed.len(), 1, "{done}");
    assert_eq!(passed[0]["name"], "clean.txt");
    let bytes = reqwest::get(passed[0]["url"].as_str().expect("url"))
        .await
        .expect("get")
        .bytes()
        .await
        .expect("bytes");
    assert_eq!(Sha256::digest(&bytes), Sha256::digest(&clean));

    // error_on_decline: the Assembly fails with the documented code and the step's message.
    let p = params(json!({"scanned": {
        "robot": "/file/virusscan", "use": ":original",
        "error_on_decline": true, "error_msg": "An infected file was refused."
    }}));
    let (code, created) = create(&s.base, form(&p, &files)).await;
    assert_eq!(code, 200, "{created}");
    let done = settle(created["assembly_ssl_url"].as_str().expect("url")).await;
    assert_eq!(
        (
            done["error"].as_str(),
            done["message"].as_str(),
            done["step"].as_str()
        ),
        (
            Some("FILE_VIRUSSCAN_DECLINED_FILE"),
            Some("An infected file was refused."),
            Some("scanned")
        ),
        "{done}"
    );
    assert!(done.get("ok").is_none(), "{done}");
}
