//! The in-process resize's decode sharing between sibling steps, on a JPEG made here: a
//! thumbnail step told of a larger sibling decodes once at the sibling's size and the sibling
//! reuses it, where alone it would decode at its own, smaller size.

use std::path::Path;

use super::*;

/// A `w`×`h` JPEG of noisy colour (a photo's entropy) at `path`.
fn jpeg(path: &Path, w: u16, h: u16) {
    let mut seed = 0x2545_f491_u32;
    let data: Vec<u8> = (0..usize::from(w) * usize::from(h) * 3)
        .map(|i| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (i % 251) as u8 ^ (seed as u8 & 0x1f)
        })
        .collect();
    let mut out = Vec::new();
    jpeg_encoder::Encoder::new(&mut out, 85)
        .encode(&data, w, h, jpeg_encoder::ColorType::Rgb)
        .expect("encode");
    std::fs::write(path, out).expect("write");
}

fn engines() -> Engines {
    Engines {
        image_formats: [ImageFormat::Jpg, ImageFormat::Webp].into(),
        ..Engines::default()
    }
}

fn fit(width: u32, format: ImageFormat) -> ResizeParams {
    ResizeParams {
        width: Some(width),
        format: Some(format),
        quality: 80,
        ..ResizeParams::default()
    }
}

async fn resized(input: &Path, name: &str, params: &ResizeParams, siblings: &[ResizeParams]) {
    let base = input.with_file_name(name);
    let out = resize(
        &engines(),
        input,
        &base,
        params,
        siblings,
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await
    .expect("resize")
    .expect("taken in process");
    assert_eq!(out.width, u64::from(params.width.unwrap_or_default()));
}

#[tokio::test]
async fn a_thumbnail_decodes_once_at_its_larger_siblings_size_and_shares_it() {
    let dir = tempfile::tempdir().expect("dir");
    let input = dir.path().join("in.jpg");
    jpeg(&input, 2560, 1920);
    let file = FileIdentity::of(&input).await.expect("identity");
    let (thumb, large, webp) = (
        fit(320, ImageFormat::Jpg),
        fit(1280, ImageFormat::Jpg),
        fit(1280, ImageFormat::Webp),
    );
    // Alone, the thumbnail would decode at 1/8 (320x240); beside the 1280 px steps, at 1/2.
    resized(&input, "thumb", &thumb, &[large.clone(), webp.clone()]).await;
    assert_eq!(shared::offered(&file), [2]);
    resized(&input, "large", &large, &[thumb.clone(), webp.clone()]).await;
    resized(&input, "webp", &webp, &[thumb, large]).await;
    assert_eq!(shared::offered(&file), [2], "a second decode was made");
}

#[tokio::test]
async fn alone_a_thumbnail_decodes_at_its_own_size() {
    let dir = tempfile::tempdir().expect("dir");
    let input = dir.path().join("in.jpg");
    jpeg(&input, 2560, 1920);
    let file = FileIdentity::of(&input).await.expect("identity");
    resized(&input, "thumb", &fit(320, ImageFormat::Jpg), &[]).await;
    assert_eq!(shared::offered(&file), [8]);
    // A sibling whose decode would not fit the shared budget (the whole of 3600x2400, 26 MB)
    // leaves the thumbnail its own.
    let big = dir.path().join("big.jpg");
    jpeg(&big, 3600, 2400);
    let file = FileIdentity::of(&big).await.expect("identity");
    let whole = fit(3600, ImageFormat::Jpg);
    resized(&big, "big-thumb", &fit(320, ImageFormat::Jpg), &[whole]).await;
    assert_eq!(shared::offered(&file), [8]);
}
