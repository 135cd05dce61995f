//! Contract tests of the `zoom` provider against the testkit's fake Zoom over real HTTP:
//! sign-in (app credentials as HTTP Basic), the root's years, a year listed one month's date
//! range per Zoom call with `next_page_token` paging inside a month and paging to the client,
//! a meeting's files (double-encoded UUIDs with `/` and `+`), byte-exact imports into tus
//! resumed with `Range` after a dropped download, server-side refresh with rotating refresh
//! tokens, logout of the newest tokens, rate limits (`Retry-After` waited out, listing and
//! import) and bad input.

mod common;

use std::sync::atomic::Ordering;

use common::providers::*;
use common::ratelimit;
use common::rotating;
use ferry_testkit::fake::zoom::ZoomFile;
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::Value;

/// A meeting UUID starting with `/` and holding `//`, which Zoom wants double-encoded.
const SLASHED: &str = "/B3dE//fGh+1jKlMnOpQrS==";
/// [`SLASHED`] in a request path (encoded once; ferry encodes it again for Zoom).
const SLASHED_PATH: &str = "%2FB3dE%2F%2FfGh%2B1jKlMnOpQrS%3D%3D";

fn tokens(token: &str) -> (String, String) {
    rotating::tokens("zoom", token)
}

fn this_year() -> i16 {
    jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .year()
}

async fn import(env: &Env, request_path: &str, token: &str, size: usize) -> (u16, Value) {
    post(
        env,
        &format!("/zoom/get/{request_path}"),
        Some(token),
        tus_body(env, "recording.mp4", size),
    )
    .await
}

#[tokio::test]
async fn years_then_a_year_by_month_ranges_with_paging_then_a_meetings_files() {
    let env = start().await;
    let z = &env.zoom.state;
    let (now, last) = (this_year(), this_year() - 1);
    *z.created_at.lock().expect("lock") = format!("{}-06-01T08:00:00Z", now - 2);
    // November of last year: seven meetings, two Zoom pages of five.
    for day in 1..=7 {
        z.add_meeting(
            &format!("nov{day}AAAAAAAAAAAAAAAAAA=="),
            &format!("Nov {day}"),
            &format!("{last}-11-{day:02}T09:00:00Z"),
            vec![ZoomFile::new("MP4", vec![day; 10])],
        );
    }
    z.add_meeting(
        "julAAAAAAAAAAAAAAAAAAA==",
        "July",
        &format!("{last}-07-15T09:00:00Z"),
        vec![ZoomFile::new("M4A", b"audio".to_vec())],
    );
    // Still processing: not listed.
    z.add_meeting(
        "mayAAAAAAAAAAAAAAAAAAA==",
        "May",
        &format!("{last}-05-15T09:00:00Z"),
        vec![ZoomFile::new("MP4", b"x".to_vec()).processing()],
    );
    let ids = z.add_meeting(
        SLASHED,
        "Planning",
        &format!("{last}-03-02T10:30:00Z"),
        vec![
            ZoomFile::new("MP4", b"video".to_vec()),
            ZoomFile::new("TRANSCRIPT", b"WEBVTT".to_vec()),
            ZoomFile::new("TIMELINE", b"{}".to_vec()),
            ZoomFile::new("CHAT", b"hi".to_vec()).processing(),
        ],
    );
    let login = login(&env, "zoom", APP, None).await;
    assert_eq!(session_of("zoom", &login.token)["username"], z.email);

    let (root, pages) = list_all(&env, "zoom", "", &login.token).await;
    assert_eq!(pages, 1);
    let years: Vec<String> = (now - 2..=now).rev().map(|y| y.to_string()).collect();
    assert_eq!(names(&root), years);
    assert_eq!(
        (
            root[1]["isFolder"].as_bool(),
            root[1]["requestPath"].as_str()
        ),
        (Some(true), Some(last.to_string().as_str()))
    );

    // Last year, newest month first; Zoom is asked one calendar month per call.
    let (items, pages) = list_all(&env, "zoom", &last.to_string(), &login.token).await;
    let mut want: Vec<String> = (1..=7).rev().map(|d| format!("Nov {d}")).collect();
    want.extend(["July".into(), "Planning".into()]);
    let topics: Vec<&str> = items
        .iter()
        .map(|i| i["custom"]["topic"].as_str().expect("topic"))
        .collect();
    assert_eq!(topics, want);
    assert!(pages >= 3, "paged to the client: {pages}");
    let ranges = z.ranges.lock().expect("ranges").clone();
    let mut months: Vec<&str> = ranges.iter().map(|(from, _)| from.as_str()).collect();
    months.dedup();
    let all: Vec<String> = (1..=12)
        .rev()
        .map(|m| format!("{last}-{m:02}-01"))
        .collect();
    assert_eq!(months, all);
    assert!(ranges.iter().all(|(from, to)| from[..7] == to[..7]));
    assert_eq!(
        ranges
            .iter()
            .filter(|(from, _)| from.ends_with("-11-01"))
            .count(),
        2,
        "November took two Zoom pages"
    );
    let planning = items.last().expect("planning");
    assert_eq!(
        (
            planning["name"].as_str(),
            planning["requestPath"].as_str(),
            planning["size"].as_u64()
        ),
        (
            Some(format!("Planning ({last}-03-02, 10:30)").as_str()),
            Some(SLASHED_PATH),
            Some(5 + 6 + 2 + 2)
        )
    );

    // The meeting (its UUID double-encoded to Zoom): finished files, no timeline.
    let path = planning["requestPath"].as_str().expect("path");
    let (files, _) = list_all(&env, "zoom", path, &login.token).await;
    assert_eq!(
        names(&files),
        [
            format!("Planning - shared screen with speaker view ({last}-03-02, 10:30).mp4"),
            format!("Planning - audio transcript ({last}-03-02, 10:30).vtt"),
        ]
    );
    assert_eq!(
        (
            files[0]["isFolder"].as_bool(),
            files[0]["mimeType"].as_str(),
            files[0]["icon"].as_str(),
            files[0]["size"].as_u64(),
            files[0]["requestPath"].as_str(),
        ),
        (
            Some(false),
            Some("video/mp4"),
            Some("video"),
            Some(5),
            Some(format!("{SLASHED_PATH}~{}", ids[0]).as_str())
        )
    );
    assert_eq!(files[1]["mimeType"], "text/vtt");
}

#[tokio::test]
async fn imports_are_byte_exact_and_a_dropped_download_resumes() {
    let env = start().await;
    let z = &env.zoom.state;
    let data = random_bytes(700_000);
    let ids = z.add_meeting(
        SLASHED,
        "Demo",
        "2025-02-03T04:05:06Z",
        vec![ZoomFile::new("MP4", data.clone())],
    );
    let path = format!("{SLASHED_PATH}~{}", ids[0]);
    let login = login(&env, "zoom", APP, None).await;
    let (status, answer) = import(&env, &path, &login.token, data.len()).await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));

    z.faults.cut_after.store(250_000, Ordering::SeqCst);
    let (status, answer) = import(&env, &path, &login.token, data.len()).await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));
    assert_eq!(
        z.faults.cut_after.load(Ordering::SeqCst),
        0,
        "the cut happened"
    );
}

#[tokio::test]
async fn an_expired_access_token_is_refreshed_once_and_the_rotation_remembered() {
    let env = start().await;
    let z = &env.zoom.state;
    let files: Vec<ZoomFile> = (0..4u8)
        .map(|i| ZoomFile::new("MP4", vec![i; 30_000]))
        .collect();
    let ids = z.add_meeting(SLASHED, "Batch", "2025-02-03T04:05:06Z", files);
    let login = login(&env, "zoom", APP, None).await;
    let (a1, r1) = tokens(&login.token);

    // The hour passes: the server refreshes, and Zoom rotates the refresh token.
    z.expire(&a1);
    let (status, body) = get(&env, "/zoom/list/", Some(&login.token)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(z.refreshes.load(Ordering::SeqCst), 1);
    assert!(!z.refresh_token_live(&r1), "r1 is spent");

    // The client keeps its original token: listings and four imports at once use the rotated
    // tokens, with no second refresh (which Zoom would refuse).
    let (status, _) = get(&env, "/zoom/list/2025", Some(&login.token)).await;
    assert_eq!(status, 200);
    let (env_ref, token) = (&env, login.token.as_str());
    let imports = ids.iter().map(|id| {
        let path = format!("{SLASHED_PATH}~{id}");
        async move { import(env_ref, &path, token, 30_000).await }
    });
    for (status, answer) in futures_util::future::join_all(imports).await {
        assert_eq!(status, 200, "{answer}");
        transfer(&env, answer["token"].as_str().expect("token")).await;
    }
    assert_eq!(z.refreshes.load(Ordering::SeqCst), 1);

    // `/zoom/refresh-token` hands out a token holding the live refresh token.
    rotating::the_refresh_route_hands_out_the_live_tokens(&env, "zoom", &**z, &login.token, 2)
        .await;
}

#[tokio::test]
async fn a_refused_refresh_is_authorization_required() {
    let env = start().await;
    rotating::a_refused_refresh_is_authorization_required(&env, "zoom", &*env.zoom.state).await;
}

#[tokio::test]
async fn logout_revokes_the_newest_tokens_of_a_rotated_session() {
    let env = start().await;
    let z = &*env.zoom.state;
    rotating::logout_revokes_the_newest_tokens_of_a_rotated_session(&env, "zoom", z).await;
}

#[tokio::test]
async fn rate_limits_back_off_then_answer_429() {
    let env = start().await;
    let f = &env.zoom.state.faults;
    rotating::rate_limits_back_off_then_answer_429(&env, "zoom", "Zoom", f).await;
}

/// A meeting titled `topic` with one 300 KB recording, and a signed-in session: the
/// recording's item id, its bytes and the login.
async fn one_recording(env: &Env, topic: &str) -> (String, Vec<u8>, Login) {
    let data = random_bytes(300_000);
    let ids = env.zoom.state.add_meeting(
        SLASHED,
        topic,
        "2025-02-03T04:05:06Z",
        vec![ZoomFile::new("MP4", data.clone())],
    );
    let login = login(env, "zoom", APP, None).await;
    (format!("{SLASHED_PATH}~{}", ids[0]), data, login)
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_waited_out_within_the_cap_and_reported_beyond_it() {
    let env = start().await;
    let z = &env.zoom.state;
    let (id, data, login) = one_recording(&env, "Limited").await;
    ratelimit::list_waits_out_retry_after(&env, "zoom", "", &login.token, &z.faults).await;
    ratelimit::list_over_the_cap_is_429(&env, "zoom", "Zoom", "", &login.token, &z.faults).await;
    ratelimit::import_waits_out_retry_after(
        &env,
        "zoom",
        "Zoom",
        &id,
        &login.token,
        &z.faults,
        &data,
    )
    .await;
}

/// Zoom's recording storage answers the reopened download 503 with `Retry-After` twice: the
/// import waits both out, says so on its socket, and completes byte-exact.
#[tokio::test(start_paused = true)]
async fn a_503_with_retry_after_from_the_download_host_is_waited_out() {
    let env = start().await;
    let z = &env.zoom.state;
    let (id, data, login) = one_recording(&env, "Throttled").await;
    ratelimit::import_waits_out_unavailable(
        &env,
        "zoom",
        "Zoom",
        &id,
        &login.token,
        &z.faults,
        &data,
    )
    .await;
}

#[tokio::test]
async fn bad_input_is_refused_with_a_message_before_zoom_is_asked() {
    let env = start().await;
    let z = &env.zoom.state;
    let ids = z.add_meeting(
        SLASHED,
        "Known",
        "2025-02-03T04:05:06Z",
        vec![ZoomFile::new("MP4", b"v".to_vec())],
    );
    let login = login(&env, "zoom", APP, None).await;
    let calls = z.api_calls.load(Ordering::SeqCst);
    for (path, message) in [
        ("/zoom/list/..%2F1", "Invalid folder id"),
        ("/zoom/list/a%20b", "Invalid folder id"),
        ("/zoom/list/2025?cursor=13", "Invalid cursor"),
        ("/zoom/list/2025?cursor=3%3Aa%20b", "Invalid cursor"),
        (
            "/zoom/thumbnail/x?t=bad",
            "Zoom recordings have no thumbnails",
        ),
    ] {
        let (status, body) = get(&env, path, Some(&login.token)).await;
        assert_eq!(
            (status, body["message"].as_str()),
            (400, Some(message)),
            "{path}"
        );
    }
    for path in ["no-file-part", "abc~x.y", "~f1", "a%3Fb~f1"] {
        let (status, body) = import(&env, path, &login.token, 1).await;
        assert_eq!(
            (status, body["message"].as_str()),
            (400, Some("Invalid file id")),
            "{path}"
        );
    }
    assert_eq!(
        z.api_calls.load(Ordering::SeqCst),
        calls,
        "nothing reached Zoom"
    );

    // Well-formed ids Zoom does not know.
    let (status, body) = get(
        &env,
        "/zoom/list/unknownAAAAAAAAAAAAAAA%3D%3D",
        Some(&login.token),
    )
    .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (424, Some("HTTP 404: This recording does not exist."))
    );
    let (status, body) = import(&env, &format!("{SLASHED_PATH}~f-404"), &login.token, 1).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (
            424,
            Some("HTTP 404: No downloadable recording file with this id")
        )
    );
    assert!(!ids.is_empty());
    let (status, _) = get(&env, "/zoom/list/", None).await;
    assert_eq!(status, 401);
}
