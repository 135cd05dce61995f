//! Execution progress: in the status, and streamed only when asked for (a completed Assembly
//! asked for it streams its 100 before the end).

use super::*;

#[tokio::test]
async fn execution_progress_is_in_the_status_and_streamed_when_asked_for() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    s.service.live().set_limits(StreamLimits {
        progress: Duration::from_millis(20),
        ..Default::default()
    });
    // Three steps: two end at once, the import hangs on its origin, so the figure stays at 2/3.
    let (origin, _events) = origin(b"").await;
    let expires = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1);
    let p = json!({
        "auth": {"key": KEY, "expires": expires.to_string()},
        "emit_execution_progress": true,
        "steps": {
            ":original": {"robot": "/upload/handle"},
            "kept": {"robot": "/file/filter", "use": ":original", "accepts": [["${file.size}", ">", "0"]]},
            "slow": {"robot": "/http/import", "url": format!("http://{origin}/hang")},
        },
    })
    .to_string();
    let (_, created) = create(&s.base, form(&p, &[("a.txt", b"aaa")])).await;
    let id = created["assembly_id"].as_str().expect("id").to_owned();
    let url = format!("{}/assemblies/{id}", s.base);
    let (_, reader, _) = open(&s.base, &id, None).await;
    let mut reader = reader.expect("reader");
    let mut seen = Vec::new();
    loop {
        let e = reader.next_update().await.expect("an update");
        if e.event.as_deref() != Some("assembly_execution_progress") {
            continue;
        }
        let data: Value = serde_json::from_str(&e.data).expect("json");
        let combined = data["progress_combined"].as_f64().expect("a number");
        seen.push(combined);
        if combined >= 66.7 {
            assert_eq!(combined, 66.7, "{data}");
            let per = data["progress_per_original_file"]
                .as_array()
                .expect("per file");
            assert_eq!(per.len(), 1);
            assert_eq!(per[0]["progress"], 66.7);
            assert_eq!(per[0]["original_id"], created_upload(&url).await);
            break;
        }
    }
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    let status: Value = reqwest::get(&url)
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(status["ok"], "ASSEMBLY_EXECUTING");
    assert_eq!(status["progress_combined"], 66.7);
    reqwest::Client::new()
        .delete(&url)
        .send()
        .await
        .expect("cancel");
}

#[tokio::test]
async fn a_completed_assembly_asked_for_progress_streams_its_100_before_the_end() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let expires = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1);
    let p = json!({
        "auth": {"key": KEY, "expires": expires.to_string()},
        "emit_execution_progress": true,
        "steps": {"kept": {"robot": "/file/filter", "use": ":original"}},
    })
    .to_string();
    let (_, created) = create(&s.base, form(&p, &[("a.txt", b"aaa")])).await;
    let id = created["assembly_id"].as_str().expect("id").to_owned();
    let done = settle(&format!("{}/assemblies/{id}", s.base)).await;
    let (_, reader, _) = open(&s.base, &id, None).await;
    let got = names(&reader.expect("reader").rest().await);
    let n = got.len();
    assert!(n >= 2, "{got:?}");
    assert_eq!(got[n - 1].0, "assembly_finished");
    assert_eq!(got[n - 2].0, "assembly_execution_progress");
    assert_eq!(
        got[n - 2].1,
        json!({"progress_combined": 100.0,
               "progress_per_original_file": [{"original_id": done["uploads"][0]["id"], "progress": 100.0}]})
    );
}

/// The id of the first upload of the Assembly at `url`.
async fn created_upload(url: &str) -> Value {
    let status: Value = reqwest::get(url)
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    status["uploads"][0]["id"].clone()
}

#[tokio::test]
async fn a_completed_assembly_reports_all_of_its_progress_and_streams_none_unasked() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    let id = waiting(&s.base, 1).await;
    let (_, reader, _) = open(&s.base, &id, None).await;
    let mut reader = reader.expect("reader");
    upload(&s, dir.path(), &id, "one.txt", b"1").await;
    let kinds: Vec<String> = names(&reader.rest().await)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(
        !kinds.iter().any(|k| k == "assembly_execution_progress"),
        "{kinds:?}"
    );
    let done = settle(&format!("{}/assemblies/{id}", s.base)).await;
    assert_eq!(done["progress_combined"], 100.0);
    assert_eq!(
        done["progress_per_original_file"],
        json!([{"original_id": done["uploads"][0]["id"], "progress": 100.0}])
    );
}
