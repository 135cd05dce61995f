//! The engine robots through the Assembly API on this machine's real engines (ffmpeg, ffprobe,
//! libvips; `make tools` installs them): fixtures are made with ffmpeg, outputs checked by their
//! reported and re-read sizes.

mod common;

use std::sync::Arc;

use common::*;
use ferry_process::RobotEngines;
use ferry_process::engines::{Engines, Limits};
use serde_json::json;

async fn engines() -> RobotEngines {
    let limits = Limits::default();
    let programs = Engines::detect(&limits).await;
    assert!(
        programs.ffmpeg.is_some() && programs.vips.is_some(),
        "ffmpeg and libvips are needed (make tools)"
    );
    RobotEngines {
        programs: Arc::new(programs),
        clamd: None,
        limits,
    }
}

/// Runs ffmpeg with `args` into `out` (a test fixture).
fn make(args: &[&str], out: &std::path::Path) -> Vec<u8> {
    let status = std::process::Command::new("ffmpeg")
        .args(["-hide_banner", "-loglevel", "error", "-y"])
        .args(args)
        .arg(out)
        .status()
        .expect("ffmpeg");
    assert!(status.success());
    std::fs::read(out).expect("fixture")
}

#[tokio::test]
async fn images_are_resized_and_videos_thumbnailed_on_real_engines() {
    let dir = tempfile::tempdir().expect("dir");
    let png = make(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=640x480",
            "-frames:v",
            "1",
        ],
        &dir.path().join("in.png"),
    );
    let mp4 = make(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=320x240:rate=10:duration=3",
            "-pix_fmt",
            "yuv420p",
            "-c:v",
            "libx264",
        ],
        &dir.path().join("in.mp4"),
    );
    let mut c = config(dir.path(), false);
    c.engines = engines().await;
    let s = start(c).await;
    let p = params(json!({
        "small": {"robot": "/image/resize", "use": ":original", "width": 100, "height": 100, "format": "jpg"},
        "thumbs": {"robot": "/video/thumbs", "use": ":original", "count": 3, "width": 160, "height": 120},
    }));
    let (code, created) = create(&s.base, form(&p, &[("in.png", &png), ("in.mp4", &mp4)])).await;
    assert_eq!(code, 200, "{created}");
    let done = settle(created["assembly_ssl_url"].as_str().expect("url")).await;
    assert_eq!(done["ok"], "ASSEMBLY_COMPLETED", "{done}");

    // Uploads carry their meta from ffprobe.
    let uploads = done["uploads"].as_array().expect("uploads");
    let image = uploads.iter().find(|u| u["name"] == "in.png").expect("png");
    assert_eq!(
        (
            image["meta"]["width"].as_u64(),
            image["meta"]["height"].as_u64()
        ),
        (Some(640), Some(480))
    );
    let video = uploads.iter().find(|u| u["name"] == "in.mp4").expect("mp4");
    assert!(
        video["meta"]["duration"]
            .as_f64()
            .is_some_and(|d| (2.5..3.5).contains(&d)),
        "{video}"
    );

    // Only the image was resized (the video is skipped), to fit 100x100: 100x75.
    let small = done["results"]["small"].as_array().expect("small");
    assert_eq!(small.len(), 1);
    assert_eq!(
        (small[0]["mime"].as_str(), small[0]["name"].as_str()),
        (Some("image/jpeg"), Some("in.jpg"))
    );
    assert_eq!(
        (
            small[0]["meta"]["width"].as_u64(),
            small[0]["meta"]["height"].as_u64()
        ),
        (Some(100), Some(75))
    );
    let bytes = reqwest::get(small[0]["url"].as_str().expect("url"))
        .await
        .expect("get")
        .bytes()
        .await
        .expect("bytes");
    assert_eq!(&bytes[..3], b"\xFF\xD8\xFF");
    assert_eq!(small[0]["size"].as_u64(), Some(bytes.len() as u64));

    // Three thumbnails of the video only, each a JPEG of 160x120.
    let thumbs = done["results"]["thumbs"].as_array().expect("thumbs");
    assert_eq!(thumbs.len(), 3, "{done}");
    for t in thumbs {
        let bytes = reqwest::get(t["url"].as_str().expect("url"))
            .await
            .expect("get")
            .bytes()
            .await
            .expect("bytes");
        let size = imagesize::blob_size(&bytes).expect("image");
        assert_eq!((size.width, size.height), (160, 120));
        assert_eq!(t["original_id"], video["id"]);
    }
}

#[tokio::test]
async fn bad_engine_parameters_are_refused_when_the_assembly_is_created() {
    let dir = tempfile::tempdir().expect("dir");
    let mut c = config(dir.path(), false);
    c.engines = engines().await;
    let s = start(c).await;
    for (steps, want) in [
        (
            json!({"r": {"robot": "/image/resize", "use": ":original", "width": 0}}),
            "IMAGE_RESIZE_VALIDATION",
        ),
        (
            json!({"v": {"robot": "/video/encode", "use": ":original", "ffmpeg": {"i": "/etc/passwd"}}}),
            "VIDEO_ENCODE_VALIDATION",
        ),
        (
            json!({"a": {"robot": "/audio/encode", "use": ":original", "preset": "wma"}}),
            "AUDIO_ENCODE_VALIDATION",
        ),
        (
            json!({"s": {"robot": "/file/virusscan", "use": ":original"}}),
            "ASSEMBLY_STEP_INVALID_ROBOT",
        ),
    ] {
        let (code, body) = create(&s.base, form(&params(steps.clone()), &[])).await;
        assert_eq!(
            (code, body["error"].as_str()),
            (400, Some(want)),
            "{steps}: {body}"
        );
    }
}

#[tokio::test]
async fn video_and_audio_are_encoded_on_real_engines() {
    let dir = tempfile::tempdir().expect("dir");
    let mp4 = make(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=320x240:rate=10:duration=2",
            "-f",
            "lavfi",
            "-i",
            "sine=duration=2",
            "-shortest",
            "-pix_fmt",
            "yuv420p",
            "-c:v",
            "libx264",
            "-c:a",
            "aac",
        ],
        &dir.path().join("in.mp4"),
    );
    let mut c = config(dir.path(), false);
    c.engines = engines().await;
    let s = start(c).await;
    let p = params(json!({
        "web": {"robot": "/video/encode", "use": ":original", "width": 160, "height": 120, "ffmpeg": {"crf": 30}},
        "sound": {"robot": "/audio/encode", "use": ":original", "preset": "mp3"},
    }));
    let (_, created) = create(&s.base, form(&p, &[("clip.mp4", &mp4)])).await;
    let done = settle(created["assembly_ssl_url"].as_str().expect("url")).await;
    assert_eq!(done["ok"], "ASSEMBLY_COMPLETED", "{done}");
    let web = &done["results"]["web"][0];
    assert_eq!(
        (
            web["mime"].as_str(),
            web["meta"]["width"].as_u64(),
            web["meta"]["height"].as_u64()
        ),
        (Some("video/mp4"), Some(160), Some(120)),
        "{web}"
    );
    assert_eq!(web["meta"]["video_codec"], "h264");
    let sound = &done["results"]["sound"][0];
    assert_eq!(
        (
            sound["mime"].as_str(),
            sound["meta"]["audio_codec"].as_str()
        ),
        (Some("audio/mpeg"), Some("mp3")),
        "{sound}"
    );
    assert!(
        sound["meta"]["duration"]
            .as_f64()
            .is_some_and(|d| (1.5..2.5).contains(&d)),
        "{sound}"
    );
}

/// Whether an `ffmpeg` process whose command line mentions `needle` is running (ffprobe, which
/// reads each upload's meta first, does not count).
fn running(needle: &str) -> bool {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
                let line = String::from_utf8_lossy(&c);
                let argv0 = line.split('\0').next().unwrap_or_default();
                argv0.ends_with("ffmpeg") && line.contains(needle)
            })
        })
}

#[tokio::test]
async fn cancel_kills_the_running_encoder() {
    let dir = tempfile::tempdir().expect("dir");
    let mp4 = make(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=1280x720:rate=30:duration=20",
            "-pix_fmt",
            "yuv420p",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
        ],
        &dir.path().join("long.mp4"),
    );
    let mut c = config(dir.path(), false);
    c.engines = engines().await;
    let s = start(c).await;
    // VP9 at its slowest setting: minutes of work for 20 s of 720p, far past the waits below.
    let p = params(json!({"slow": {
        "robot": "/video/encode", "use": ":original", "preset": "webm",
        "ffmpeg": {"deadline": "best", "cpu-used": 0},
    }}));
    let (_, created) = create(&s.base, form(&p, &[("long.mp4", &mp4)])).await;
    let id = created["assembly_id"].as_str().expect("id").to_owned();
    // ffmpeg's command line names the Assembly's directory.
    let mut seen = false;
    for _ in 0..500 {
        if running(&id) {
            seen = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(seen, "the encoder never started");
    let canceled: serde_json::Value = reqwest::Client::new()
        .delete(format!("{}/assemblies/{id}", s.base))
        .send()
        .await
        .expect("delete")
        .json()
        .await
        .expect("json");
    assert_eq!(canceled["ok"], "ASSEMBLY_CANCELED");
    let mut gone = false;
    for _ in 0..500 {
        if !running(&id) {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(gone, "the encoder still runs after cancel");
}
