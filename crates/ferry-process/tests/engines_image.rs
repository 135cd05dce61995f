//! `/image/resize` and `/image/optimize` on the real libvips: every strategy's output size read
//! back with vipsheader, padding colour read with `vips getpoint`, EXIF rotation applied and
//! metadata stripped, WebP/AVIF written where libvips can, a missing encoder and a
//! decompression bomb refused before any decoding, a truncated JPEG failing cleanly, and the
//! optimizer never changing a pixel.
#![allow(clippy::unwrap_used)]

mod engines_support;

use std::path::Path;

use ferry_process::engines::image::{
    CropArea, Gravity, ImageFormat, ResizeParams, ResizeStrategy, Rgba, resize,
};
use ferry_process::engines::optimize::{OptimizeParams, optimize};
use ferry_process::engines::vips;
use ferry_process::engines::{EngineError, Engines, Limits};
use tokio_util::sync::CancellationToken;

use engines_support::{
    engines, make_image, pixel, png_header_only, sh, vipsheader, vipsheader_all, with_exif,
};

fn size(path: &Path) -> (u64, u64) {
    (
        vipsheader(path, "width").parse().unwrap(),
        vipsheader(path, "height").parse().unwrap(),
    )
}

async fn run(
    engines: &Engines,
    input: &Path,
    name: &str,
    params: ResizeParams,
) -> Result<(std::path::PathBuf, (u64, u64)), EngineError> {
    let base = input.parent().unwrap().join(name);
    let out = resize(
        engines,
        input,
        &base,
        &params,
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await?;
    let read = size(&out.path);
    assert_eq!(
        (out.width, out.height),
        read,
        "reported size differs from the file's"
    );
    Ok((out.path, read))
}

#[tokio::test]
async fn each_strategy_reaches_its_documented_size() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let input = make_image(dir.path(), "in.jpg", 400, 300);
    let box_of = |strategy| ResizeParams {
        width: Some(100),
        height: Some(100),
        strategy,
        ..ResizeParams::default()
    };
    let (fit, fit_size) = run(&engines, &input, "fit", box_of(ResizeStrategy::Fit))
        .await
        .unwrap();
    assert_eq!(fit_size, (100, 75));
    assert_eq!(fit.extension().unwrap(), "jpg", "format kept");
    assert_eq!(
        run(
            &engines,
            &input,
            "fillcrop",
            box_of(ResizeStrategy::FillCrop)
        )
        .await
        .unwrap()
        .1,
        (100, 100)
    );
    let top = ResizeParams {
        gravity: Gravity::Left,
        ..box_of(ResizeStrategy::FillCrop)
    };
    assert_eq!(
        run(&engines, &input, "fillcrop-left", top).await.unwrap().1,
        (100, 100)
    );
    let (w, h) = run(&engines, &input, "minfit", box_of(ResizeStrategy::MinFit))
        .await
        .unwrap()
        .1;
    assert!(h == 100 && (100..=134).contains(&w), "min_fit gave {w}x{h}");
    let stretch = ResizeParams {
        width: Some(50),
        height: Some(200),
        strategy: ResizeStrategy::Stretch,
        ..ResizeParams::default()
    };
    assert_eq!(
        run(&engines, &input, "stretch", stretch).await.unwrap().1,
        (50, 200)
    );
    let crop = ResizeParams {
        strategy: ResizeStrategy::Crop,
        crop: Some(CropArea {
            x1: 10,
            y1: 10,
            x2: 110,
            y2: 60,
        }),
        ..ResizeParams::default()
    };
    assert_eq!(
        run(&engines, &input, "crop", crop).await.unwrap().1,
        (100, 50)
    );
    let no_zoom = ResizeParams {
        width: Some(800),
        zoom: false,
        ..ResizeParams::default()
    };
    assert_eq!(
        run(&engines, &input, "nozoom", no_zoom).await.unwrap().1,
        (400, 300)
    );
}

#[tokio::test]
async fn pad_fills_with_the_background_colour() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let input = make_image(dir.path(), "in.png", 400, 100);
    let params = ResizeParams {
        width: Some(200),
        height: Some(200),
        strategy: ResizeStrategy::Pad,
        background: Rgba::parse("#ff0000").unwrap(),
        ..ResizeParams::default()
    };
    let (out, dims) = run(&engines, &input, "pad", params).await.unwrap();
    assert_eq!(dims, (200, 200));
    assert_eq!(pixel(&out, 0, 0), [255.0, 0.0, 0.0]);
    assert_eq!(pixel(&out, 199, 199), [255.0, 0.0, 0.0]);
}

#[tokio::test]
async fn exif_orientation_is_applied_and_metadata_stripped() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let plain = make_image(dir.path(), "plain.jpg", 40, 20);
    let photo = dir.path().join("photo.jpg");
    std::fs::write(
        &photo,
        with_exif(&std::fs::read(&plain).unwrap(), 6, "2021:03:04 05:06:07"),
    )
    .unwrap();
    let params = ResizeParams {
        strip: true,
        ..ResizeParams::default()
    };
    let (out, dims) = run(&engines, &photo, "upright", params).await.unwrap();
    assert_eq!(dims, (20, 40), "stored 40x20 turned 90° is 20x40");
    let header = vipsheader_all(&out);
    assert!(
        !header.contains("exif-"),
        "metadata left in the output:\n{header}"
    );
    assert!(!header.contains("orientation: 6"), "{header}");
}

#[tokio::test]
async fn webp_and_avif_are_written_where_libvips_can() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let input = make_image(dir.path(), "in.jpg", 64, 48);
    for (format, loader) in [
        (ImageFormat::Webp, "webpload"),
        (ImageFormat::Avif, "heifload"),
        (ImageFormat::Png, "pngload"),
    ] {
        assert!(
            engines.image_formats.contains(&format),
            "this libvips cannot write {format:?}"
        );
        let params = ResizeParams {
            width: Some(32),
            format: Some(format),
            quality: 60,
            ..ResizeParams::default()
        };
        let (out, dims) = run(
            &engines,
            &input,
            &format!("out-{}", format.extension()),
            params,
        )
        .await
        .unwrap();
        assert_eq!(dims, (32, 24));
        assert_eq!(vipsheader(&out, "vips-loader"), loader);
    }
}

#[tokio::test]
async fn a_format_libvips_cannot_write_is_a_clear_error() {
    let mut engines = engines().await;
    engines.image_formats.remove(&ImageFormat::Avif);
    let dir = tempfile::tempdir().unwrap();
    let input = make_image(dir.path(), "in.jpg", 64, 48);
    let params = ResizeParams {
        format: Some(ImageFormat::Avif),
        ..ResizeParams::default()
    };
    let err = run(&engines, &input, "out", params).await.unwrap_err();
    assert!(matches!(err, EngineError::Unsupported(_)));
    assert_eq!(err.to_string(), "the installed libvips cannot write avif");
    assert!(!dir.path().join("out.avif").exists());
}

#[tokio::test]
async fn a_decompression_bomb_is_refused_from_its_header() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.png");
    std::fs::write(&bomb, png_header_only(60_000, 60_000)).unwrap();
    let err = run(&engines, &bomb, "out", ResizeParams::default())
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
    assert!(!dir.path().join("out.png").exists());
    let err = optimize(
        &engines,
        &bomb,
        &dir.path().join("opt.png"),
        OptimizeParams::default(),
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, EngineError::TooManyPixels { .. }), "{err:?}");
}

#[tokio::test]
async fn a_truncated_jpeg_fails_without_leaving_an_output() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let whole = make_image(dir.path(), "whole.jpg", 640, 480);
    let bytes = std::fs::read(&whole).unwrap();
    let cut = dir.path().join("cut.jpg");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let params = ResizeParams {
        width: Some(100),
        ..ResizeParams::default()
    };
    let err = run(&engines, &cut, "out", params).await.unwrap_err();
    assert!(
        matches!(&err, EngineError::Failed { program, .. } if program == "vips"),
        "{err:?}"
    );
    assert!(!dir.path().join("out.jpg").exists());
}

#[tokio::test]
async fn optimize_shrinks_without_changing_a_pixel() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let made = make_image(dir.path(), "made.png", 300, 200);
    let loose = dir.path().join("loose.png");
    sh(
        "vips",
        &[
            "copy",
            made.to_str().unwrap(),
            &format!("{}[compression=0]", loose.display()),
        ],
    );
    let out = dir.path().join("tight.png");
    let result = optimize(
        &engines,
        &loose,
        &out,
        OptimizeParams::default(),
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert!(result.size_after < result.size_before, "{result:?}");
    assert_eq!(std::fs::metadata(&out).unwrap().len(), result.size_after);
    let raw = |p: &Path, name: &str| {
        let target = dir.path().join(name);
        sh(
            "vips",
            &["rawsave", p.to_str().unwrap(), target.to_str().unwrap()],
        );
        std::fs::read(target).unwrap()
    };
    assert_eq!(raw(&loose, "a.raw"), raw(&out, "b.raw"));

    let plain = make_image(dir.path(), "plain.jpg", 40, 20);
    let photo = dir.path().join("photo.jpg");
    let with = with_exif(&std::fs::read(&plain).unwrap(), 1, "2021:03:04 05:06:07");
    std::fs::write(&photo, &with).unwrap();
    let stripped = dir.path().join("stripped.jpg");
    let params = OptimizeParams {
        preserve_meta_data: false,
    };
    let result = optimize(
        &engines,
        &photo,
        &stripped,
        params,
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert!(result.size_after < result.size_before);
    assert!(!vipsheader_all(&stripped).contains("exif-"));
    assert_eq!(raw(&photo, "c.raw"), raw(&stripped, "d.raw"));
}

#[tokio::test]
async fn transparency_is_flattened_for_jpeg_and_kept_for_png() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let opaque = make_image(dir.path(), "opaque.png", 80, 40);
    let clear = dir.path().join("clear.png");
    // An alpha band of 0: every pixel fully transparent.
    sh(
        "vips",
        &[
            "bandjoin_const",
            opaque.to_str().unwrap(),
            clear.to_str().unwrap(),
            "0",
        ],
    );
    let to_jpeg = ResizeParams {
        format: Some(ImageFormat::Jpg),
        background: Rgba::parse("#00ff00").unwrap(),
        ..ResizeParams::default()
    };
    let (jpeg, _) = run(&engines, &clear, "flat", to_jpeg).await.unwrap();
    let green = pixel(&jpeg, 10, 10);
    assert!(
        green[0] < 8.0 && green[1] > 247.0 && green[2] < 8.0,
        "not flattened onto green: {green:?}"
    );
    let padded = ResizeParams {
        width: Some(80),
        height: Some(80),
        strategy: ResizeStrategy::Pad,
        background: Rgba::parse("none").unwrap(),
        ..ResizeParams::default()
    };
    let (png, dims) = run(&engines, &opaque, "padded", padded).await.unwrap();
    assert_eq!(dims, (80, 80));
    assert_eq!(pixel(&png, 0, 0)[3], 0.0, "padding should be transparent");
    assert_eq!(
        pixel(&png, 40, 40)[3],
        255.0,
        "the image itself stays opaque"
    );
}

#[tokio::test]
async fn a_header_is_read_once_per_file_and_again_once_the_file_changes() {
    let dir = tempfile::tempdir().unwrap();
    let image = make_image(dir.path(), "in.jpg", 64, 48);
    // A vipsheader that counts its runs, then runs the real one.
    let count = dir.path().join("runs");
    let wrapper = dir.path().join("vipsheader");
    let real = sh("sh", &["-c", "command -v vipsheader"]);
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho run >> '{}'\nexec '{}' \"$@\"\n",
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
    let mut engines = engines().await;
    engines.vipsheader = Some(wrapper);
    let runs = || std::fs::read_to_string(&count).map_or(0, |t| t.lines().count());
    let (limits, cancel) = (Limits::default(), CancellationToken::new());

    let first = vips::header(&engines, &image, &limits, &cancel)
        .await
        .unwrap();
    let second = vips::header(&engines, &image, &limits, &cancel)
        .await
        .unwrap();
    assert_eq!((first.width, first.height), (64, 48));
    assert_eq!(first, second);
    assert_eq!(
        runs(),
        1,
        "the second read of an unchanged file must come from the cache"
    );

    // Rewritten in place with other dimensions: read again, and the new size is seen.
    let other = make_image(dir.path(), "other.jpg", 32, 16);
    std::fs::copy(&other, &image).unwrap();
    let third = vips::header(&engines, &image, &limits, &cancel)
        .await
        .unwrap();
    assert_eq!((third.width, third.height), (32, 16));
    assert_eq!(runs(), 2);
}
