//! `/image/optimize` through the Assembly API on the real libvips: a loosely compressed PNG
//! comes back smaller with the same pixels and dimensions, a JPEG loses its EXIF with
//! `preserve_meta_data: false` and still decodes, a non-image is passed over, and unsupported
//! parameters are refused when the Assembly is created.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::*;
use ferry_process::RobotEngines;
use ferry_process::engines::{Engines, Limits};
use serde_json::{Value, json};

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

fn run(program: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(program)
        .args(args)
        .output()
        .expect(program);
    assert!(
        out.status.success(),
        "{program}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The decoded pixels of `bytes` (libvips's raw dump), so "same image" is checked exactly.
fn pixels(dir: &Path, name: &str, bytes: &[u8]) -> Vec<u8> {
    let src = dir.join(name);
    std::fs::write(&src, bytes).expect("write");
    let raw = dir.join(format!("{name}.raw"));
    run(
        "vips",
        &[
            "rawsave",
            src.to_str().expect("utf-8"),
            raw.to_str().expect("utf-8"),
        ],
    );
    std::fs::read(raw).expect("raw")
}

async fn fetch(file: &Value) -> Vec<u8> {
    reqwest::get(file["url"].as_str().expect("url"))
        .await
        .expect("get")
        .bytes()
        .await
        .expect("bytes")
        .to_vec()
}

#[tokio::test]
async fn images_get_smaller_or_stay_and_keep_their_pixels() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path();
    let made = d.join("made.png");
    run(
        "vips",
        &[
            "black",
            made.to_str().expect("utf-8"),
            "320",
            "200",
            "--bands",
            "3",
        ],
    );
    let loose = d.join("loose.png");
    run(
        "vips",
        &[
            "copy",
            made.to_str().expect("utf-8"),
            &format!("{}[compression=0]", loose.display()),
        ],
    );
    let png = std::fs::read(&loose).expect("png");
    let jpg_path = d.join("photo.jpg");
    run(
        "vips",
        &[
            "copy",
            made.to_str().expect("utf-8"),
            &format!("{}[Q=90]", jpg_path.display()),
        ],
    );
    // A JPEG with a comment segment, which preserve_meta_data: false drops.
    let plain = std::fs::read(&jpg_path).expect("jpg");
    let comment = b"\xFF\xFE\x00\x20a comment that costs 30 bytes.";
    let jpg = [&plain[..2], &comment[..], &plain[2..]].concat();

    let mut c = config(d, false);
    c.engines = engines().await;
    let s = start(c).await;
    let p = params(json!({
        "small": {"robot": "/image/optimize", "use": ":original", "priority": "conversion-speed", "preserve_meta_data": false, "fix_breaking_images": true, "progressive": false},
    }));
    let (code, created) = create(
        &s.base,
        form(
            &p,
            &[
                ("loose.png", &png),
                ("photo.jpg", &jpg),
                ("notes.txt", b"plain text"),
            ],
        ),
    )
    .await;
    assert_eq!(code, 200, "{created}");
    let done = settle(created["assembly_ssl_url"].as_str().expect("url")).await;
    assert_eq!(done["ok"], "ASSEMBLY_COMPLETED", "{done}");
    let results = done["results"]["small"].as_array().expect("results");
    // The text file is not an image: passed over, as Transloadit's robots do.
    assert_eq!(results.len(), 2, "{done}");

    let out_png = results
        .iter()
        .find(|r| r["name"] == "loose.png")
        .expect("png result");
    assert_eq!(out_png["mime"], "image/png");
    let bytes = fetch(out_png).await;
    assert_eq!(out_png["size"].as_u64(), Some(bytes.len() as u64));
    assert!(bytes.len() < png.len(), "{} !< {}", bytes.len(), png.len());
    assert_eq!(
        (
            out_png["meta"]["width"].as_u64(),
            out_png["meta"]["height"].as_u64()
        ),
        (Some(320), Some(200))
    );
    let size = imagesize::blob_size(&bytes).expect("decodes");
    assert_eq!((size.width, size.height), (320, 200));
    assert_eq!(pixels(d, "a.png", &png), pixels(d, "b.png", &bytes));

    let out_jpg = results
        .iter()
        .find(|r| r["name"] == "photo.jpg")
        .expect("jpg result");
    assert_eq!(out_jpg["mime"], "image/jpeg");
    let bytes = fetch(out_jpg).await;
    assert!(
        bytes.len() <= jpg.len() - comment.len(),
        "{} bytes",
        bytes.len()
    );
    assert!(!bytes.windows(9).any(|w| w == b"a comment"));
    let size = imagesize::blob_size(&bytes).expect("decodes");
    assert_eq!((size.width, size.height), (320, 200));
    assert_eq!(pixels(d, "c.jpg", &jpg), pixels(d, "d.jpg", &bytes));
}

#[tokio::test]
async fn unsupported_optimize_parameters_are_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let mut c = config(dir.path(), false);
    c.engines = engines().await;
    let s = start(c).await;
    for (extra, why) in [
        (
            json!({"progressive": true}),
            "progressive: true is not supported yet",
        ),
        (
            json!({"priority": "fastest"}),
            "priority must be \"conversion-speed\" or \"compression-ratio\", not \"fastest\"",
        ),
        (
            json!({"quality": 80}),
            "/image/optimize takes no parameter \"quality\"",
        ),
    ] {
        let mut step = json!({"robot": "/image/optimize", "use": ":original"});
        if let (Value::Object(s), Value::Object(e)) = (&mut step, extra) {
            s.extend(e);
        }
        let (code, body) = create(&s.base, form(&params(json!({"o": step})), &[])).await;
        assert_eq!(
            (code, body["error"].as_str(), body["message"].as_str()),
            (
                400,
                Some("IMAGE_OPTIMIZE_VALIDATION"),
                Some(format!("Step \"o\": {why}").as_str())
            ),
            "{body}"
        );
    }
    // Without libvips the robot is known but off.
    let off = start(config(&dir.path().join("off"), false)).await;
    let step = json!({"o": {"robot": "/image/optimize", "use": ":original"}});
    let (code, body) = create(&off.base, form(&params(step), &[])).await;
    assert_eq!(
        (code, body["error"].as_str()),
        (400, Some("ASSEMBLY_STEP_INVALID_ROBOT")),
        "{body}"
    );
}
