//! One ffprobe per upload: the upload's meta, `/video/encode` and `/video/thumbs` on the same
//! file share one probe (each ffprobe start is on the video's critical path), and a file
//! rewritten in place is probed again. The `ffprobe` the engines see is a wrapper that logs its
//! arguments, then runs the real one; outputs are checked with the real ffprobe.
#![allow(clippy::unwrap_used)]

mod engines_support;

use std::path::Path;

use ferry_process::engines::Limits;
use ferry_process::engines::probe::probe;
use ferry_process::engines::thumbs::{ThumbsParams, thumbs};
use ferry_process::engines::video::{VideoEncodeParams, VideoPreset, encode_video};
use tokio_util::sync::CancellationToken;

use engines_support::{engines, ffprobe, make_video, sh, stream};

/// How many logged ffprobe runs named `file`; the log is emptied.
fn probes_of(log: &Path, file: &Path) -> usize {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    std::fs::write(log, "").unwrap();
    let name = file.to_str().unwrap();
    text.lines().filter(|l| l.contains(name)).count()
}

#[tokio::test]
async fn an_upload_is_probed_once_for_its_meta_and_every_step() {
    let mut engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ffprobe.log");
    let wrapper = dir.path().join("wrapped-ffprobe");
    let real = sh("sh", &["-c", "command -v ffprobe"]);
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.trim()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    engines.ffprobe = Some(wrapper);
    let (limits, cancel) = (Limits::default(), CancellationToken::new());
    let clip = make_video(dir.path(), "clip.mp4", 320, 240, 2);

    let meta = probe(&engines, &clip, &limits, &cancel).await.unwrap();
    assert_eq!((meta.meta.width, meta.meta.height), (Some(320), Some(240)));
    assert_eq!(probes_of(&log, &clip), 1);
    let params = VideoEncodeParams {
        preset: VideoPreset::find("web/mp4/240p").unwrap(),
        ..VideoEncodeParams::default()
    };
    let (web, t) = (dir.path().join("web"), dir.path().join("t"));
    let shot_params = ThumbsParams {
        count: 2,
        ..ThumbsParams::default()
    };
    let mut ignore = |_| {};
    let (encoded, shots) = tokio::join!(
        encode_video(
            &engines,
            &clip,
            &web,
            &params,
            &limits,
            &cancel,
            &mut ignore
        ),
        thumbs(&engines, &clip, &t, &shot_params, &limits, &cancel)
    );
    let encoded = encoded.unwrap();
    let video = ffprobe(&encoded.path);
    assert_eq!(stream(&video, "video")["codec_name"], "h264");
    assert_eq!(shots.unwrap().len(), 2);
    assert_eq!(
        probes_of(&log, &clip),
        0,
        "the clip was probed again after its meta was read"
    );

    // Rewritten in place (a longer clip under the same name): probed again, new meta.
    let longer = make_video(dir.path(), "longer.mp4", 160, 120, 3);
    std::fs::copy(&longer, &clip).unwrap();
    let again = probe(&engines, &clip, &limits, &cancel).await.unwrap();
    assert_eq!(
        (again.meta.width, again.meta.height),
        (Some(160), Some(120))
    );
    assert_eq!(probes_of(&log, &clip), 1);
}
