//! The child-process runner against real engines: a hanging ffmpeg is stopped at its time
//! limit, a canceled job's process is killed, stderr is kept as a capped tail, exit statuses and
//! missing programs become clear errors, and paths engines would misread are refused.
#![allow(clippy::unwrap_used)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ferry_process::engines::limits::{self, check_path};
use ferry_process::engines::{EngineError, Limits};
use tokio_util::sync::CancellationToken;

fn args(list: &[&str]) -> Vec<OsString> {
    list.iter().map(OsString::from).collect()
}

/// ffmpeg reading an endless generated source: it never finishes on its own.
const ENDLESS: &[&str] = &[
    "-nostdin",
    "-loglevel",
    "error",
    "-re",
    "-f",
    "lavfi",
    "-i",
    "nullsrc",
    "-f",
    "null",
    "-",
];

#[tokio::test(start_paused = true)]
async fn a_hanging_engine_is_stopped_at_its_time_limit() {
    let limits = Limits {
        time_limit: Duration::from_secs(30),
        ..Limits::default()
    };
    let result = limits::run(
        Path::new("ffmpeg"),
        &args(ENDLESS),
        &[],
        &limits,
        &CancellationToken::new(),
    )
    .await;
    match result {
        Err(EngineError::TimedOut { program, limit }) => {
            assert_eq!(program, "ffmpeg");
            assert_eq!(limit, Duration::from_secs(30));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
}

/// Whether `pid` is gone or a zombie (killed, not yet reaped).
fn dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(") ")
            .next()
            .is_some_and(|rest| rest.starts_with('Z')),
    }
}

#[tokio::test]
async fn canceling_a_job_kills_its_engine() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file: PathBuf = dir.path().join("pid");
    // The test (not the product) uses a shell to learn the PID; `exec` makes it ffmpeg's.
    let script = format!(
        "echo $$ > {}; exec ffmpeg {}",
        pid_file.display(),
        ENDLESS.join(" ")
    );
    let cancel = CancellationToken::new();
    let watcher = {
        let cancel = cancel.clone();
        let pid_file = pid_file.clone();
        tokio::spawn(async move {
            for _ in 0..1000 {
                if let Ok(text) = std::fs::read_to_string(&pid_file)
                    && let Ok(pid) = text.trim().parse::<u32>()
                {
                    cancel.cancel();
                    return pid;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            panic!("ffmpeg never started");
        })
    };
    let result = limits::run(
        Path::new("sh"),
        &args(&["-c", &script]),
        &[],
        &Limits::default(),
        &cancel,
    )
    .await;
    assert!(
        matches!(&result, Err(EngineError::Canceled { program }) if program == "sh"),
        "{result:?}"
    );
    let pid = watcher.await.unwrap();
    let gone = (0..500).any(|_| {
        if dead(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
        false
    });
    assert!(
        gone,
        "ffmpeg (pid {pid}) still runs after the job was canceled"
    );
}

#[tokio::test]
async fn a_failing_engine_reports_its_status_and_the_tail_of_its_stderr() {
    let limits = Limits {
        stderr_cap: 64,
        ..Limits::default()
    };
    let result = limits::run(
        Path::new("ffmpeg"),
        &args(&[
            "-nostdin",
            "-hide_banner",
            "-i",
            "file:/nonexistent/input.mp4",
        ]),
        &[],
        &limits,
        &CancellationToken::new(),
    )
    .await;
    match result {
        Err(EngineError::Failed {
            program,
            status,
            stderr,
        }) => {
            assert_eq!(program, "ffmpeg");
            assert_eq!(status, "exit status 1");
            assert!(
                stderr.len() <= 64,
                "stderr not capped: {} bytes",
                stderr.len()
            );
            assert!(stderr.contains("No such file or directory"), "{stderr}");
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[tokio::test]
async fn a_missing_program_is_a_clear_error() {
    let result = limits::run(
        Path::new("/nonexistent/ffmpeg"),
        &[],
        &[],
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await;
    let message = result.unwrap_err().to_string();
    assert_eq!(
        message,
        "ffmpeg failed (not started): /nonexistent/ffmpeg was not found"
    );
}

#[tokio::test]
async fn too_much_stdout_is_an_error_not_a_buffer() {
    let limits = Limits {
        stdout_cap: 1024,
        ..Limits::default()
    };
    let result = limits::run(
        Path::new("ffmpeg"),
        &args(&["-hide_banner", "-encoders"]),
        &[],
        &limits,
        &CancellationToken::new(),
    )
    .await;
    assert!(
        matches!(result, Err(EngineError::BadOutput { ref detail, .. }) if detail == "more than 1024 bytes on stdout"),
        "{result:?}"
    );
}

#[tokio::test]
async fn engines_see_no_environment_but_path_and_what_they_are_given() {
    // The test process has HOME, CARGO_* and more; none of it may reach an engine.
    let out = limits::run(
        Path::new("env"),
        &[],
        &[("VIPS_BLOCK_UNTRUSTED", "1")],
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let mut names: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_owned()))
        .collect();
    names.sort();
    assert_eq!(names, ["LC_ALL", "PATH", "VIPS_BLOCK_UNTRUSTED"]);
}

#[test]
fn paths_engines_would_misread_are_refused() {
    assert!(check_path(Path::new("/tmp/job/in.mp4")).is_ok());
    for bad in [
        "relative.mp4",
        "-i.mp4",
        "/tmp/img%03d.jpg",
        "/tmp/in.jpg[shrink=2]",
        "/tmp/a\nb",
    ] {
        assert!(
            matches!(check_path(Path::new(bad)), Err(EngineError::Invalid(_))),
            "{bad} accepted"
        );
    }
}
