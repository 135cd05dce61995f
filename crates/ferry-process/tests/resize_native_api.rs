//! The in-process `/image/resize` through the Assembly API: a JPEG upload to the three outputs of
//! bench/processing (320 px JPEG thumbnail, 1280 px JPEG, 1280 px WebP) with each result's
//! fields (mime, size, meta) checked against the stored bytes, and a truncated JPEG ending the
//! Assembly with the documented error JSON.

mod common;

use std::sync::Arc;

use common::*;
use ferry_process::RobotEngines;
use ferry_process::engines::{Engines, Limits};
use serde_json::json;

async fn engines() -> RobotEngines {
    let limits = Limits::default();
    let programs = Engines::detect(&limits).await;
    assert!(programs.vips.is_some(), "libvips is needed (make tools)");
    RobotEngines {
        programs: Arc::new(programs),
        clamd: None,
        limits,
    }
}

/// A 1600x1200 JPEG from ffmpeg's test pattern with noise.
fn photo(dir: &std::path::Path) -> Vec<u8> {
    let out = dir.join("photo.jpg");
    let status = std::process::Command::new("ffmpeg")
        .args([
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
        ])
        .args([
            "testsrc2=size=1600x1200:rate=1",
            "-vf",
            "noise=alls=12:allf=t",
        ])
        .args(["-frames:v", "1", "-q:v", "3"])
        .arg(&out)
        .status()
        .expect("ffmpeg");
    assert!(status.success());
    std::fs::read(out).expect("fixture")
}

fn steps() -> serde_json::Value {
    json!({
        "thumb": {"robot": "/image/resize", "use": ":original", "width": 320, "height": 320,
                  "resize_strategy": "fit", "format": "jpg", "quality": 80},
        "large": {"robot": "/image/resize", "use": ":original", "width": 1280, "format": "jpg", "quality": 80},
        "webp": {"robot": "/image/resize", "use": ":original", "width": 1280, "format": "webp", "quality": 80},
    })
}

#[tokio::test]
async fn a_jpeg_becomes_three_outputs_with_their_fields() {
    let dir = tempfile::tempdir().expect("dir");
    let jpeg = photo(dir.path());
    let mut c = config(dir.path(), false);
    c.engines = engines().await;
    let s = start(c).await;
    let (code, created) = create(&s.base, form(&params(steps()), &[("photo.jpg", &jpeg)])).await;
    assert_eq!(code, 200, "{created}");
    let done = settle(created["assembly_ssl_url"].as_str().expect("url")).await;
    assert_eq!(done["ok"], "ASSEMBLY_COMPLETED", "{done}");
    let upload = &done["uploads"][0];
    assert_eq!(
        (
            upload["meta"]["width"].as_u64(),
            upload["meta"]["height"].as_u64()
        ),
        (Some(1600), Some(1200))
    );
    for (step, mime, name, width, height, magic) in [
        (
            "thumb",
            "image/jpeg",
            "photo.jpg",
            320,
            240,
            &b"\xFF\xD8\xFF"[..],
        ),
        (
            "large",
            "image/jpeg",
            "photo.jpg",
            1280,
            960,
            &b"\xFF\xD8\xFF"[..],
        ),
        ("webp", "image/webp", "photo.webp", 1280, 960, &b"RIFF"[..]),
    ] {
        let results = done["results"][step].as_array().expect("results");
        assert_eq!(results.len(), 1, "{step}: {done}");
        let r = &results[0];
        assert_eq!(
            (r["mime"].as_str(), r["name"].as_str()),
            (Some(mime), Some(name))
        );
        assert_eq!(
            r["meta"],
            json!({"width": width, "height": height}),
            "{step}"
        );
        let bytes = reqwest::get(r["url"].as_str().expect("url"))
            .await
            .expect("get")
            .bytes()
            .await
            .expect("bytes");
        assert!(bytes.starts_with(magic), "{step}");
        assert_eq!(r["size"].as_u64(), Some(bytes.len() as u64), "{step}");
        let size = imagesize::blob_size(&bytes).expect("image");
        assert_eq!((size.width, size.height), (width, height), "{step}");
        assert_eq!(r["original_id"], upload["id"]);
    }
}

#[tokio::test]
async fn a_truncated_jpeg_ends_the_assembly_with_the_documented_error() {
    let dir = tempfile::tempdir().expect("dir");
    let jpeg = photo(dir.path());
    let cut = &jpeg[..jpeg.len() / 2];
    let mut c = config(dir.path(), false);
    c.engines = engines().await;
    let s = start(c).await;
    let (code, created) = create(&s.base, form(&params(steps()), &[("cut.jpg", cut)])).await;
    assert_eq!(code, 200, "{created}");
    let done = settle(created["assembly_ssl_url"].as_str().expect("url")).await;
    assert_ne!(done["ok"], "ASSEMBLY_COMPLETED", "{done}");
    assert_eq!(done["error"], "IMAGE_RESIZE_ERROR", "{done}");
    let message = done["message"].as_str().expect("message");
    // libvips's own answer: the in-process decoder hands a file it cannot read to libvips.
    assert!(message.starts_with("vips failed"), "{message}");
}
