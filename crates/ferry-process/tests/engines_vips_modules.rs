//! libvips's dynamic modules (heif, jxl, magick, openslide, poppler) are loaded only when an
//! image needs one: JPEG/PNG in and JPEG/PNG/WebP out run libvips without them (its start-up is
//! most of a `vips` run on a small image), AVIF out and AVIF in keep them and still work. The
//! `vips`/`vipsheader` seen by the engines are wrappers that log the `VIPSHOME` each call ran
//! with, then run the real program; outputs are read back with the real vipsheader, and the
//! "no modules" environment is checked against libvips itself (`vips -l foreign`). The jobs go
//! to the libvips path directly ([`resize_on_libvips`]): the in-process resize would take the
//! JPEG ones.
#![allow(clippy::unwrap_used)]

mod engines_support;

use std::path::{Path, PathBuf};

use ferry_process::engines::image::{ImageFormat, ResizeParams, resize_on_libvips};
use ferry_process::engines::{Engines, Limits};
use tokio_util::sync::CancellationToken;

use engines_support::{engines, make_image, sh, vipsheader};

/// Engines whose `vips` and `vipsheader` log `NAME VIPSHOME` (or `NAME -` when unset) to the
/// returned log file before running the real program.
async fn logged_engines(dir: &Path) -> (Engines, PathBuf) {
    let mut engines = engines().await;
    let log = dir.join("calls.log");
    for name in ["vips", "vipsheader"] {
        let real = sh("sh", &["-c", &format!("command -v {name}")]);
        let wrapper = dir.join(format!("wrapped-{name}"));
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\necho \"{name} ${{VIPSHOME:--}}\" >> '{}'\nexec '{}' \"$@\"\n",
                log.display(),
                real.trim()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        match name {
            "vips" => engines.vips = Some(wrapper),
            _ => engines.vipsheader = Some(wrapper),
        }
    }
    (engines, log)
}

/// The calls logged since the last take, as (program, VIPSHOME or "-").
fn take_calls(log: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    std::fs::write(log, "").unwrap();
    text.lines()
        .map(|l| {
            let (p, h) = l.split_once(' ').unwrap();
            (p.to_owned(), h.to_owned())
        })
        .collect()
}

async fn resize_to(engines: &Engines, input: &Path, name: &str, format: ImageFormat) -> PathBuf {
    let params = ResizeParams {
        width: Some(32),
        format: Some(format),
        quality: 60,
        ..ResizeParams::default()
    };
    // The libvips path itself: a JPEG to JPEG or WebP would otherwise be resized in process
    // (engines/native), and this is about how libvips is started for what it is given.
    let out = resize_on_libvips(
        engines,
        input,
        &input.parent().unwrap().join(name),
        &params,
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!((out.width, out.height), (32, 24), "{format:?}");
    out.path
}

#[tokio::test]
async fn core_formats_run_without_the_modules() {
    let dir = tempfile::tempdir().unwrap();
    let (engines, log) = logged_engines(dir.path()).await;
    let jpeg = make_image(dir.path(), "in.jpg", 64, 48);
    let png = make_image(dir.path(), "in.png", 64, 48);
    for (input, format, loader) in [
        (&jpeg, ImageFormat::Jpg, "jpegload"),
        (&jpeg, ImageFormat::Webp, "webpload"),
        (&png, ImageFormat::Png, "pngload"),
        (&png, ImageFormat::Jpg, "jpegload"),
    ] {
        let name = format!(
            "{}-{:?}",
            input.file_stem().unwrap().to_str().unwrap(),
            format
        );
        let out = resize_to(&engines, input, &name, format).await;
        assert_eq!(vipsheader(&out, "vips-loader"), loader);
        assert_eq!(vipsheader(&out, "width"), "32");
        let calls = take_calls(&log);
        assert!(
            calls.iter().any(|(p, _)| p == "vips"),
            "no vips call logged: {calls:?}"
        );
        for (program, home) in &calls {
            assert_ne!(
                home, "-",
                "{program} ran with the modules for {name}: {calls:?}"
            );
            // libvips itself, started with that VIPSHOME, finds no module.
            let savers = std::process::Command::new("vips")
                .args(["-l", "foreign"])
                .env("VIPSHOME", home)
                .output()
                .unwrap();
            let savers = String::from_utf8_lossy(&savers.stdout);
            assert!(savers.contains("(jpegload)"), "{savers}");
            assert!(!savers.contains("heif"), "modules found under {home}");
        }
    }
}

#[tokio::test]
async fn avif_in_and_out_still_work_with_the_modules() {
    let dir = tempfile::tempdir().unwrap();
    let (engines, log) = logged_engines(dir.path()).await;
    assert!(
        engines.image_formats.contains(&ImageFormat::Avif),
        "this libvips cannot write AVIF (libheif with an AV1 encoder is part of the tools)"
    );
    let jpeg = make_image(dir.path(), "in.jpg", 64, 48);
    let avif = resize_to(&engines, &jpeg, "out", ImageFormat::Avif).await;
    assert_eq!(vipsheader(&avif, "vips-loader"), "heifload");
    let calls = take_calls(&log);
    let vips_calls: Vec<_> = calls.iter().filter(|(p, _)| p == "vips").collect();
    assert!(!vips_calls.is_empty(), "{calls:?}");
    assert!(
        vips_calls.iter().all(|(_, home)| home == "-"),
        "an AVIF was written without the modules: {calls:?}"
    );

    // An AVIF upload (read by the heif module) resized to JPEG: header and resize with modules.
    let bigger = dir.path().join("big.avif");
    sh(
        "vips",
        &[
            "copy",
            make_image(dir.path(), "big.png", 64, 48).to_str().unwrap(),
            &format!("{}[compression=av1,Q=60]", bigger.display()),
        ],
    );
    let out = resize_to(&engines, &bigger, "from-avif", ImageFormat::Jpg).await;
    assert_eq!(vipsheader(&out, "vips-loader"), "jpegload");
    let calls = take_calls(&log);
    assert!(
        calls.iter().any(|(p, _)| p == "vipsheader"),
        "the AVIF's header was not read: {calls:?}"
    );
    assert!(
        calls.iter().all(|(_, home)| home == "-"),
        "an AVIF was read without the modules: {calls:?}"
    );
}
