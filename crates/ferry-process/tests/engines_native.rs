//! `/image/resize` in process (engines/native) against the real libvips: JPEG in, JPEG or WebP
//! out without starting `vips` or `vipsheader` (counted through wrappers), the same output sizes
//! as `vips thumbnail` for every strategy this path takes, EXIF orientation applied (a red corner
//! read back where the turn puts it) and the tag rewritten or stripped, a pixel bomb refused
//! from its header before decoding, and everything this path declines (PNG in, a truncated
//! JPEG, pad) still answered by libvips.
#![allow(clippy::unwrap_used)]

mod engines_support;

use std::path::{Path, PathBuf};

use ferry_process::engines::image::{
    ImageFormat, ResizeParams, ResizeStrategy, resize, resize_on_libvips,
};
use ferry_process::engines::{EngineError, Engines, Limits};
use tokio_util::sync::CancellationToken;

use engines_support::{engines, pixel, sh, vipsheader, vipsheader_all, with_exif};

/// A `w`×`h` JPEG from ffmpeg (a test pattern with noise, like a photo's entropy), with a red
/// block in its top-left eighth.
fn photo(dir: &Path, name: &str, w: u32, h: u32) -> PathBuf {
    jpeg_of(dir, name, &format!("testsrc2=size={w}x{h}:rate=1"), w, h)
}

/// A `w`×`h` JPEG of ffmpeg's `source`, noise added, a red block in its top-left eighth.
fn jpeg_of(dir: &Path, name: &str, source: &str, w: u32, h: u32) -> PathBuf {
    let path = dir.join(name);
    let filter = format!(
        "noise=alls=12:allf=t,drawbox=x=0:y=0:w={}:h={}:color=red:t=fill",
        w / 8,
        h / 8
    );
    sh(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            source,
            "-vf",
            &filter,
            "-frames:v",
            "1",
            "-q:v",
            "3",
            "-y",
            path.to_str().unwrap(),
        ],
    );
    path
}

/// `engines` with `vips` and `vipsheader` behind wrappers that count their runs in `dir/runs`.
fn counted(mut engines: Engines, dir: &Path) -> (Engines, impl Fn() -> usize) {
    let count = dir.join("runs");
    for name in ["vips", "vipsheader"] {
        let real = sh("sh", &["-c", &format!("command -v {name}")]);
        let wrapper = dir.join(name);
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\necho {name} >> '{}'\nexec '{}' \"$@\"\n",
                count.display(),
                real.trim()
            ),
        )
        .unwrap();
        std::fs::set_permissions(
            &wrapper,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        match name {
            "vips" => engines.vips = Some(wrapper),
            _ => engines.vipsheader = Some(wrapper),
        }
    }
    (engines, move || {
        std::fs::read_to_string(&count).map_or(0, |t| t.lines().count())
    })
}

async fn run(
    engines: &Engines,
    input: &Path,
    name: &str,
    params: &ResizeParams,
) -> Result<(PathBuf, (u64, u64)), EngineError> {
    let base = input.parent().unwrap().join(name);
    let out = resize(
        engines,
        input,
        &base,
        params,
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await?;
    let read = (
        vipsheader(&out.path, "width").parse().unwrap(),
        vipsheader(&out.path, "height").parse().unwrap(),
    );
    assert_eq!(
        (out.width, out.height),
        read,
        "reported size differs from the file's"
    );
    Ok((out.path, read))
}

fn fit(width: u32, format: ImageFormat) -> ResizeParams {
    ResizeParams {
        width: Some(width),
        format: Some(format),
        quality: 80,
        ..ResizeParams::default()
    }
}

#[tokio::test]
async fn a_jpeg_is_resized_to_jpeg_and_webp_without_starting_libvips() {
    let dir = tempfile::tempdir().unwrap();
    let (engines, runs) = counted(engines().await, dir.path());
    let input = photo(dir.path(), "in.jpg", 1600, 1200);
    for (format, loader, magic) in [
        (ImageFormat::Jpg, "jpegload", &b"\xFF\xD8\xFF"[..]),
        (ImageFormat::Webp, "webpload", &b"RIFF"[..]),
    ] {
        let base = dir.path().join(format!("out-{}", format.extension()));
        let out = resize(
            &engines,
            &input,
            &base,
            &fit(640, format),
            &Limits::default(),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        assert_eq!(runs(), 0, "a libvips program ran for {format:?}");
        assert_eq!((out.width, out.height, out.format), (640, 480, format));
        assert!(std::fs::read(&out.path).unwrap().starts_with(magic));
        assert_eq!(vipsheader(&out.path, "vips-loader"), loader);
        assert_eq!(vipsheader(&out.path, "width"), "640");
        assert_eq!(vipsheader(&out.path, "height"), "480");
    }
    // A PNG is libvips's: the header and the thumbnail run there.
    let png = dir.path().join("in.png");
    sh(
        "vips",
        &["copy", input.to_str().unwrap(), png.to_str().unwrap()],
    );
    let (_, dims) = run(&engines, &png, "from-png", &fit(320, ImageFormat::Jpg))
        .await
        .unwrap();
    assert_eq!(dims, (320, 240));
    assert!(runs() >= 2, "the PNG did not go to libvips");
}

#[tokio::test]
async fn sizes_are_the_ones_vips_thumbnail_writes_for_every_strategy_taken() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    // Sizes where rounding the free side differs between the stored and the loaded aspect.
    let inputs = [(1001, 2333), (2773, 897), (640, 480), (37, 23)];
    let boxes = [
        (Some(320), Some(320)),
        (None, Some(45)),
        (Some(594), Some(45)),
        (Some(100), Some(100)),
    ];
    let strategies = [
        ResizeStrategy::Fit,
        ResizeStrategy::FillCrop,
        ResizeStrategy::MinFit,
        ResizeStrategy::Stretch,
    ];
    let mut compared = 0;
    for (i, (w, h)) in inputs.into_iter().enumerate() {
        let input = photo(dir.path(), &format!("in{i}.jpg"), w, h);
        for (j, (bw, bh)) in boxes.into_iter().enumerate() {
            for (k, strategy) in strategies.into_iter().enumerate() {
                {
                    let zoom = (j + k) % 2 == 0;
                    let params = ResizeParams {
                        width: bw,
                        height: bh,
                        strategy,
                        zoom,
                        ..ResizeParams::default()
                    };
                    let name = format!("o{i}-{j}-{k}-{zoom}");
                    let (limits, cancel) = (Limits::default(), CancellationToken::new());
                    let base = dir.path().join(format!("{name}-native"));
                    let native = resize(&engines, &input, &base, &params, &limits, &cancel)
                        .await
                        .unwrap();
                    let base = dir.path().join(format!("{name}-vips"));
                    let vips =
                        resize_on_libvips(&engines, &input, &base, &params, &limits, &cancel)
                            .await
                            .unwrap();
                    assert_eq!(
                        (native.width, native.height),
                        (vips.width, vips.height),
                        "{w}x{h} into {bw:?}x{bh:?} by {strategy:?}, zoom {zoom}"
                    );
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, 64);
}

#[tokio::test]
async fn exif_orientation_turns_the_pixels_and_the_tag_says_upright() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    // Blue but for the red block, so only the block reads as red.
    let plain = jpeg_of(
        dir.path(),
        "plain.jpg",
        "color=c=0x2040C0:size=400x200",
        400,
        200,
    );
    let turned = dir.path().join("turned.jpg");
    std::fs::write(
        &turned,
        with_exif(&std::fs::read(&plain).unwrap(), 6, "2021:03:04 05:06:07"),
    )
    .unwrap();
    // Stored 400x200 with its red block top-left; orientation 6 (turn 90° clockwise) shows it
    // 200x400 with the block top-right.
    let (out, dims) = run(&engines, &turned, "kept", &fit(100, ImageFormat::Jpg))
        .await
        .unwrap();
    assert_eq!(dims, (100, 200));
    let red = |p: Vec<f64>| p[0] > 180.0 && p[1] < 80.0 && p[2] < 80.0;
    assert!(
        red(pixel(&out, 95, 3)),
        "top-right is {:?}",
        pixel(&out, 95, 3)
    );
    assert!(
        !red(pixel(&out, 3, 3)),
        "top-left is {:?}",
        pixel(&out, 3, 3)
    );
    assert!(!red(pixel(&out, 95, 195)));
    // Metadata kept (strip off), the orientation now upright.
    let header = vipsheader_all(&out);
    assert!(header.contains("orientation: 1"), "{header}");
    assert!(header.contains("2021:03:04 05:06:07"), "{header}");

    let stripped = ResizeParams {
        strip: true,
        ..fit(100, ImageFormat::Jpg)
    };
    let (out, _) = run(&engines, &turned, "stripped", &stripped).await.unwrap();
    let header = vipsheader_all(&out);
    assert!(!header.contains("2021:03:04"), "metadata left:\n{header}");
    assert!(red(pixel(&out, 95, 3)));

    // rotation: false keeps the stored pixels and the tag.
    let unturned = ResizeParams {
        auto_orient: false,
        ..fit(100, ImageFormat::Jpg)
    };
    let (out, dims) = run(&engines, &turned, "unturned", &unturned).await.unwrap();
    assert_eq!(dims, (100, 50));
    assert!(red(pixel(&out, 3, 3)));
    assert!(vipsheader_all(&out).contains("orientation: 6"));
}

#[tokio::test]
async fn a_pixel_bomb_is_refused_from_its_header_before_any_decoding() {
    let dir = tempfile::tempdir().unwrap();
    let (engines, runs) = counted(engines().await, dir.path());
    let small = photo(dir.path(), "small.jpg", 64, 48);
    // The same JPEG claiming 60000x60000 in its frame header: 3.6 Gpx, over the cap.
    let mut bomb = std::fs::read(&small).unwrap();
    let sof = bomb.windows(2).position(|w| w == [0xFF, 0xC0]).unwrap();
    bomb[sof + 5..sof + 9].copy_from_slice(&[0xEA, 0x60, 0xEA, 0x60]);
    let path = dir.path().join("bomb.jpg");
    std::fs::write(&path, &bomb).unwrap();
    let err = run(&engines, &path, "out", &fit(100, ImageFormat::Jpg))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::TooManyPixels {
                width: 60_000,
                height: 60_000,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.is_validation());
    assert_eq!(
        runs(),
        0,
        "refused by a libvips program, not from the header read here"
    );
    assert!(!dir.path().join("out.jpg").exists());
}

#[tokio::test]
async fn a_truncated_jpeg_gets_libvips_error_and_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let (engines, runs) = counted(engines().await, dir.path());
    let whole = photo(dir.path(), "whole.jpg", 640, 480);
    let bytes = std::fs::read(&whole).unwrap();
    let cut = dir.path().join("cut.jpg");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    for format in [ImageFormat::Jpg, ImageFormat::Webp] {
        let err = run(&engines, &cut, "out", &fit(100, format))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, EngineError::Failed { program, .. } if program == "vips"),
            "{err:?}"
        );
        assert!(
            !dir.path()
                .join(format!("out.{}", format.extension()))
                .exists()
        );
    }
    assert!(runs() >= 2, "the cut file was not handed to libvips");
}

#[tokio::test]
async fn a_canceled_job_stops_and_leaves_no_output() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let input = photo(dir.path(), "in.jpg", 1600, 1200);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = resize(
        &engines,
        &input,
        &dir.path().join("out"),
        &fit(320, ImageFormat::Jpg),
        &Limits::default(),
        &cancel,
    )
    .await
    .unwrap_err();
    assert!(matches!(&err, EngineError::Canceled { .. }), "{err:?}");
    assert!(!dir.path().join("out.jpg").exists());
}

#[tokio::test]
async fn a_jpeg_uploads_meta_is_read_without_starting_an_engine() {
    let dir = tempfile::tempdir().unwrap();
    let (mut engines, runs) = counted(engines().await, dir.path());
    engines.ffprobe = Some(dir.path().join("no-such-ffprobe"));
    let plain = photo(dir.path(), "plain.jpg", 400, 200);
    let turned = dir.path().join("turned.jpg");
    std::fs::write(
        &turned,
        with_exif(&std::fs::read(&plain).unwrap(), 6, "2021:03:04 05:06:07"),
    )
    .unwrap();
    let probed = ferry_process::engines::probe::probe(
        &engines,
        &turned,
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(runs(), 0, "an engine ran for the meta of a JPEG");
    assert_eq!(probed.exif_orientation, Some(6));
    assert_eq!(
        serde_json::to_value(&probed.meta).unwrap(),
        serde_json::json!({
            "width": 400, "height": 200, "aspect_ratio": 2.0, "video_codec": "mjpeg",
            "orientation": "Rotate 90 CW", "date_recorded": "2021/03/04 05:06:07",
        })
    );
    // What libvips reads of the same file.
    let header = vipsheader_all(&turned);
    for line in [
        "width: 400",
        "height: 200",
        "orientation: 6",
        "2021:03:04 05:06:07",
    ] {
        assert!(header.contains(line), "{line} not in\n{header}");
    }
}
