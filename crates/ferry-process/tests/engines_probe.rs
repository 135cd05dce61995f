//! File meta from the real ffprobe and vipsheader: a video's dimensions, duration, codecs and
//! frame rate; an image's EXIF orientation and date; Transloadit's field names; and hostile
//! inputs (garbage, a truncated MP4, a playlist pointing elsewhere) as clear errors.
#![allow(clippy::unwrap_used)]

mod engines_support;

use ferry_process::engines::probe::{MediaKind, probe};
use ferry_process::engines::{EngineError, Limits};
use tokio_util::sync::CancellationToken;

use engines_support::{engines, make_image, make_video, with_exif};

#[tokio::test]
async fn a_video_has_size_duration_codecs_and_frame_rate() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let clip = make_video(dir.path(), "clip.mp4", 320, 240, 2);
    let probe = probe(
        &engines,
        &clip,
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(probe.kind, Some(MediaKind::Video));
    let meta = &probe.meta;
    assert_eq!((meta.width, meta.height), (Some(320), Some(240)));
    assert_eq!(meta.aspect_ratio, Some(1.333));
    assert_eq!(meta.video_codec.as_deref(), Some("h264"));
    assert_eq!(meta.audio_codec.as_deref(), Some("aac"));
    assert_eq!(meta.framerate, Some(25.0));
    let duration = meta.duration.unwrap();
    assert!((1.9..=2.1).contains(&duration), "duration {duration}");
    assert!(meta.bitrate.is_some_and(|b| b > 0));
    let json = serde_json::to_value(meta).unwrap();
    for key in [
        "width",
        "height",
        "duration",
        "framerate",
        "video_codec",
        "audio_codec",
        "aspect_ratio",
    ] {
        assert!(json.get(key).is_some(), "{key} missing from {json}");
    }
    assert!(
        json.get("orientation").is_none(),
        "absent fields are left out: {json}"
    );
}

#[tokio::test]
async fn an_image_has_its_exif_orientation_and_date() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let plain = make_image(dir.path(), "plain.jpg", 40, 20);
    let photo = dir.path().join("photo.jpg");
    std::fs::write(
        &photo,
        with_exif(&std::fs::read(&plain).unwrap(), 6, "2021:03:04 05:06:07"),
    )
    .unwrap();
    let probe = probe(
        &engines,
        &photo,
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(probe.kind, Some(MediaKind::Image));
    assert_eq!(probe.exif_orientation, Some(6));
    let json = serde_json::to_value(&probe.meta).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "width": 40, "height": 20, "aspect_ratio": 2.0, "video_codec": "mjpeg",
            "orientation": "Rotate 90 CW", "date_recorded": "2021/03/04 05:06:07"
        })
    );
}

#[tokio::test]
async fn garbage_and_truncated_media_are_clear_errors() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.mp4");
    std::fs::write(
        &garbage,
        (0..64 * 1024u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let clip = make_video(dir.path(), "clip.mp4", 160, 120, 2);
    let bytes = std::fs::read(&clip).unwrap();
    let truncated = dir.path().join("truncated.mp4");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    for (path, expected) in [
        (&garbage, "Invalid data found"),
        (&truncated, "moov atom not found"),
    ] {
        let err = probe(
            &engines,
            path,
            &Limits::default(),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
        match &err {
            EngineError::Failed {
                program, stderr, ..
            } => {
                assert_eq!(program, "ffprobe");
                assert!(stderr.contains(expected), "{}: {stderr}", path.display());
            }
            other => panic!("{}: {other:?}", path.display()),
        }
    }
}

#[tokio::test]
async fn a_playlist_cannot_make_ffprobe_read_elsewhere() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    // Both point at a real clip: without the demuxer whitelist, ffprobe would happily read it.
    let clip = make_video(dir.path(), "elsewhere.mp4", 160, 120, 1);
    let playlist = dir.path().join("list.m3u8");
    std::fs::write(
        &playlist,
        format!(
            "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nfile:{}\n#EXT-X-ENDLIST\n",
            clip.display()
        ),
    )
    .unwrap();
    let concat = dir.path().join("list.txt");
    std::fs::write(
        &concat,
        format!("ffconcat version 1.0\nfile {}\n", clip.display()),
    )
    .unwrap();
    for (path, demuxer) in [(&playlist, "hls"), (&concat, "concat")] {
        let err = probe(
            &engines,
            path,
            &Limits::default(),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
        match &err {
            EngineError::Failed { stderr, .. } => assert!(
                stderr.contains(&format!("[{demuxer} @"))
                    && stderr.contains("Format not on whitelist"),
                "{}: {stderr}",
                path.display()
            ),
            other => panic!("{}: {other:?}", path.display()),
        }
    }
}

#[tokio::test]
async fn a_fifo_is_refused_before_any_engine_blocks_on_it() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.mp4");
    engines_support::sh("mkfifo", &[fifo.to_str().unwrap()]);
    let err = probe(
        &engines,
        &fifo,
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{} is not a regular file", fifo.display())
    );
}

#[tokio::test]
async fn stills_get_ffprobes_meta_without_running_ffprobe() {
    let real = engines().await;
    let dir = tempfile::tempdir().unwrap();
    // An ffprobe that cannot start: a still must not need it, a video still must.
    let mut no_ffprobe = real.clone();
    no_ffprobe.ffprobe = Some(dir.path().join("no-such-ffprobe"));
    let (limits, cancel) = (Limits::default(), CancellationToken::new());
    for (name, codec) in [("a.jpg", "mjpeg"), ("b.png", "png"), ("c.webp", "webp")] {
        let image = make_image(dir.path(), name, 48, 36);
        let mut meta = probe(&no_ffprobe, &image, &limits, &cancel)
            .await
            .unwrap()
            .meta;
        // libvips writes orientation 1 into its JPEGs; the EXIF fields are vipsheader's either way.
        let orientation = meta.orientation.take();
        assert!(
            orientation
                .as_deref()
                .is_none_or(|o| o == "Horizontal (normal)"),
            "{name}: {orientation:?}"
        );
        // What ffprobe itself says of the file, read independently.
        let said: serde_json::Value = serde_json::from_str(&engines_support::sh(
            "ffprobe",
            &[
                "-v",
                "error",
                "-print_format",
                "json",
                "-show_streams",
                image.to_str().unwrap(),
            ],
        ))
        .unwrap();
        let stream = &said["streams"][0];
        assert_eq!(stream["codec_name"], codec, "{name}");
        assert_eq!(
            serde_json::to_value(&meta).unwrap(),
            serde_json::json!({
                "width": stream["width"], "height": stream["height"],
                "aspect_ratio": 1.333, "video_codec": codec,
            }),
            "{name}"
        );
    }
    let clip = make_video(dir.path(), "clip.mp4", 160, 120, 1);
    assert!(probe(&no_ffprobe, &clip, &limits, &cancel).await.is_err());
}
