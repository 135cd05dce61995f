//! Engine detection: on a provisioned machine every engine, the codecs the presets use and the
//! image formats are found; with an engine missing, its robots are named in the startup message
//! and a call that needs it fails with a clear error instead of trying to run it.
#![allow(clippy::unwrap_used)]

mod engines_support;

use std::path::Path;

use ferry_process::engines::image::{ImageFormat, ResizeParams, resize};
use ferry_process::engines::{EngineError, Engines, Limits};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_provisioned_machine_has_every_engine_codec_and_format() {
    let engines = engines_support::engines().await;
    for encoder in [
        "libx264",
        "aac",
        "libvpx-vp9",
        "libopus",
        "libmp3lame",
        "mjpeg",
        "png",
    ] {
        assert!(engines.encoders.contains(encoder), "ffmpeg lacks {encoder}");
    }
    for format in [ImageFormat::Jpg, ImageFormat::Png, ImageFormat::Webp] {
        assert!(
            engines.image_formats.contains(&format),
            "libvips cannot write {format:?}"
        );
    }
    assert!(engines.ffmpeg_version.is_some() && engines.vips_version.is_some());
}

#[tokio::test]
async fn a_missing_engine_is_named_with_the_robots_it_disables() {
    let gone = Path::new("/nonexistent/bin");
    let engines = Engines::detect_at(
        &gone.join("ffmpeg"),
        &gone.join("ffprobe"),
        &gone.join("vips"),
        &gone.join("vipsheader"),
        &Limits::default(),
    )
    .await;
    let missing = engines.missing();
    assert_eq!(missing.len(), 2, "{missing:?}");
    assert!(missing[0].contains("/video/encode") && missing[0].contains("install ffmpeg"));
    assert!(missing[1].contains("/image/resize") && missing[1].contains("install libvips-tools"));
    let err = resize(
        &engines,
        Path::new("/tmp/in.jpg"),
        Path::new("/tmp/out"),
        &ResizeParams::default(),
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, EngineError::Missing { engine: "vips" }));
    assert_eq!(err.to_string(), "vips is not installed");
}
