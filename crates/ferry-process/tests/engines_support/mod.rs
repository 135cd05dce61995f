//! Shared by the `engines_*` tests: the real engines (found on PATH, provisioned by
//! `scripts/ensure-apt-tools.sh`), fixtures made at test time with those engines, and independent
//! readers of the outputs (the ffprobe and vipsheader command lines, not the code under test).
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use ferry_process::engines::{Engines, Limits};

/// The engines on this machine; a test fails, naming the missing ones, when any is absent.
pub async fn engines() -> Engines {
    let engines = Engines::detect(&Limits::default()).await;
    assert!(
        engines.missing().is_empty(),
        "engines missing (run scripts/ensure-apt-tools.sh): {:?}",
        engines.missing()
    );
    engines
}

/// Runs a fixture-making command; panics with its stderr when it fails.
pub fn sh(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A test clip: `testsrc2` video (and a sine tone) of `secs` seconds, H.264/AAC in MP4.
pub fn make_video(dir: &Path, name: &str, w: u32, h: u32, secs: u32) -> PathBuf {
    let path = dir.join(name);
    let size = format!("testsrc2=size={w}x{h}:rate=25");
    let t = secs.to_string();
    sh(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            &size,
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440",
            "-t",
            &t,
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
            "-y",
            path.to_str().unwrap(),
        ],
    );
    path
}

/// A `w`×`h` image made by libvips (a gradient, so encoders have something to do).
pub fn make_image(dir: &Path, name: &str, w: u32, h: u32) -> PathBuf {
    let path = dir.join(name);
    let xyz = dir.join(format!("{name}.xyz.v"));
    sh(
        "vips",
        &["xyz", xyz.to_str().unwrap(), &w.to_string(), &h.to_string()],
    );
    // xyz has two bands (x, y); three colour bands from x, y and x again.
    let x = dir.join(format!("{name}.x.v"));
    sh(
        "vips",
        &[
            "extract_band",
            xyz.to_str().unwrap(),
            x.to_str().unwrap(),
            "0",
        ],
    );
    let colour = dir.join(format!("{name}.colour.v"));
    sh(
        "vips",
        &[
            "bandjoin",
            &format!("{} {}", xyz.display(), x.display()),
            colour.to_str().unwrap(),
        ],
    );
    let cast = dir.join(format!("{name}.cast.v"));
    sh(
        "vips",
        &[
            "cast",
            colour.to_str().unwrap(),
            cast.to_str().unwrap(),
            "uchar",
        ],
    );
    sh(
        "vips",
        &["copy", cast.to_str().unwrap(), path.to_str().unwrap()],
    );
    path
}

/// `jpeg` with an EXIF APP1 segment holding Orientation and DateTime spliced in after SOI.
pub fn with_exif(jpeg: &[u8], orientation: u16, date: &str) -> Vec<u8> {
    assert_eq!(date.len(), 19);
    let mut tiff = b"MM\x00\x2a\x00\x00\x00\x08".to_vec();
    tiff.extend_from_slice(&2u16.to_be_bytes());
    tiff.extend_from_slice(&[0x01, 0x12, 0x00, 0x03, 0, 0, 0, 1]);
    tiff.extend_from_slice(&orientation.to_be_bytes());
    tiff.extend_from_slice(&[0, 0]);
    tiff.extend_from_slice(&[0x01, 0x32, 0x00, 0x02, 0, 0, 0, 20]);
    tiff.extend_from_slice(&(8u32 + 2 + 24 + 4).to_be_bytes());
    tiff.extend_from_slice(&0u32.to_be_bytes());
    tiff.extend_from_slice(date.as_bytes());
    tiff.push(0);
    let mut app1 = b"Exif\x00\x00".to_vec();
    app1.extend_from_slice(&tiff);
    let mut out = jpeg[..2].to_vec();
    out.extend_from_slice(&[0xFF, 0xE1]);
    out.extend_from_slice(&u16::try_from(app1.len() + 2).unwrap().to_be_bytes());
    out.extend_from_slice(&app1);
    out.extend_from_slice(&jpeg[2..]);
    out
}

/// ffprobe's JSON for a file's streams and format.
pub fn ffprobe(path: &Path) -> serde_json::Value {
    let text = sh(
        "ffprobe",
        &[
            "-v",
            "error",
            "-print_format",
            "json",
            "-show_streams",
            "-show_format",
            "-count_frames",
            path.to_str().unwrap(),
        ],
    );
    serde_json::from_str(&text).unwrap()
}

/// The first stream of `kind` (`video`, `audio`) in ffprobe's JSON.
pub fn stream<'a>(probe: &'a serde_json::Value, kind: &str) -> &'a serde_json::Value {
    probe["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["codec_type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} stream in {probe}"))
}

/// One field of `vipsheader -f`.
pub fn vipsheader(path: &Path, field: &str) -> String {
    sh("vipsheader", &["-f", field, path.to_str().unwrap()])
        .trim()
        .to_owned()
}

/// All of `vipsheader -a`.
pub fn vipsheader_all(path: &Path) -> String {
    sh("vipsheader", &["-a", path.to_str().unwrap()])
}

/// A pixel's values as `vips getpoint` prints them.
pub fn pixel(path: &Path, x: u32, y: u32) -> Vec<f64> {
    sh(
        "vips",
        &[
            "getpoint",
            path.to_str().unwrap(),
            &x.to_string(),
            &y.to_string(),
        ],
    )
    .split_whitespace()
    .map(|v| v.parse().unwrap())
    .collect()
}

/// A PNG whose header claims `w`×`h` but whose data is a few bytes: a decompression bomb's header.
pub fn png_header_only(w: u32, h: u32) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&u32::try_from(data.len()).unwrap().to_be_bytes());
        let mut crc = crc32fast::Hasher::new();
        crc.update(kind);
        crc.update(data);
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&crc.finalize().to_be_bytes());
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &[0x78, 0x9c, 0x03, 0x00]);
    chunk(&mut out, b"IEND", &[]);
    out
}
