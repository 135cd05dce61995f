//! `/video/encode`, `/video/thumbs` and `/audio/encode` on the real ffmpeg, outputs checked with
//! the ffprobe command line: codecs, sizes, frame counts, sample rates; progress reported to the
//! end; the `ffmpeg` object's allowed set enforced before anything runs; a canceled encode
//! leaves no partial file; a truncated input is a clear error.
#![allow(clippy::unwrap_used)]

mod engines_support;

use ferry_process::engines::audio::{AudioEncodeParams, AudioPreset, encode_audio};
use ferry_process::engines::ffmpeg::Progress;
use ferry_process::engines::ffopts::FfmpegOptions;
use ferry_process::engines::thumbs::{Offset, ThumbFormat, ThumbsParams, thumbs};
use ferry_process::engines::video::{VideoEncodeParams, VideoPreset, encode_video};
use ferry_process::engines::{EngineError, Limits};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use engines_support::{engines, ffprobe, make_video, stream};

fn options(value: serde_json::Value) -> Result<FfmpegOptions, EngineError> {
    FfmpegOptions::parse(value.as_object().unwrap())
}

#[tokio::test]
async fn web_mp4_is_h264_aac_at_the_asked_size_with_progress_to_the_end() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let clip = make_video(dir.path(), "clip.mp4", 320, 240, 2);
    let params = VideoEncodeParams {
        preset: VideoPreset::find("ipad-high").unwrap(),
        width: Some(240),
        height: Some(240),
        ffmpeg: options(json!({"crf": 30})).unwrap(),
        ..VideoEncodeParams::default()
    };
    let mut reports: Vec<Progress> = Vec::new();
    let out = encode_video(
        &engines,
        &clip,
        &dir.path().join("web"),
        &params,
        &Limits::default(),
        &CancellationToken::new(),
        &mut |p| reports.push(p),
    )
    .await
    .unwrap();
    assert_eq!(out.path, dir.path().join("web.mp4"));
    assert_eq!(out.mime, "video/mp4");
    let probe = ffprobe(&out.path);
    let video = stream(&probe, "video");
    assert_eq!(video["codec_name"], "h264");
    assert_eq!(video["profile"], "Main");
    assert_eq!(
        (video["width"].as_u64(), video["height"].as_u64()),
        (Some(240), Some(240)),
        "padded to the box"
    );
    assert_eq!(video["nb_read_frames"], "50");
    assert_eq!(stream(&probe, "audio")["codec_name"], "aac");
    assert_eq!(stream(&probe, "audio")["sample_rate"], "44100");
    assert_eq!(out.meta.width, Some(240));
    let last = reports.last().unwrap();
    assert!(last.done && last.fraction == Some(1.0), "{reports:?}");
}

#[tokio::test]
async fn webm_is_vp9_opus() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let clip = make_video(dir.path(), "clip.mp4", 320, 240, 1);
    let params = VideoEncodeParams {
        preset: VideoPreset::find("web_webm_240p".replace('_', "/").as_str()).unwrap(),
        width: Some(160),
        ffmpeg: options(json!({"cpu-used": 8, "deadline": "realtime"})).unwrap(),
        ..VideoEncodeParams::default()
    };
    let out = encode_video(
        &engines,
        &clip,
        &dir.path().join("v"),
        &params,
        &Limits::default(),
        &CancellationToken::new(),
        &mut |_| {},
    )
    .await
    .unwrap();
    assert_eq!(out.path.extension().unwrap(), "webm");
    let probe = ffprobe(&out.path);
    assert!(
        probe["format"]["format_name"]
            .as_str()
            .unwrap()
            .contains("webm")
    );
    let video = stream(&probe, "video");
    assert_eq!(video["codec_name"], "vp9");
    assert_eq!(
        (video["width"].as_u64(), video["height"].as_u64()),
        (Some(160), Some(120))
    );
    assert_eq!(stream(&probe, "audio")["codec_name"], "opus");
}

#[test]
fn options_outside_the_allowed_set_are_refused_by_name() {
    let err = options(json!({"vf": "movie=/etc/passwd"})).unwrap_err();
    assert!(err.is_validation());
    assert!(
        err.to_string()
            .starts_with("ffmpeg option \"vf\" is not in the allowed set"),
        "{err}"
    );
    assert!(VideoPreset::find("no-such-preset").is_err());
    assert!(
        VideoPreset::find("web_mp4_720p").is_err(),
        "only - and _ swap, not /"
    );
    assert_eq!(VideoPreset::find("ipad_high").unwrap().name, "ipad-high");
}

#[tokio::test]
async fn a_canceled_encode_leaves_no_partial_output() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let clip = make_video(dir.path(), "long.mp4", 640, 480, 20);
    let params = VideoEncodeParams {
        preset: VideoPreset::find("webm").unwrap(),
        ffmpeg: options(json!({"deadline": "best", "cpu-used": 0})).unwrap(),
        ..VideoEncodeParams::default()
    };
    let cancel = CancellationToken::new();
    let on_first = cancel.clone();
    let result = encode_video(
        &engines,
        &clip,
        &dir.path().join("out"),
        &params,
        &Limits::default(),
        &cancel,
        &mut |_| on_first.cancel(),
    )
    .await;
    assert!(
        matches!(&result, Err(EngineError::Canceled { program }) if program == "ffmpeg"),
        "{result:?}"
    );
    assert!(
        !dir.path().join("out.webm").exists(),
        "partial output left behind"
    );
}

#[tokio::test]
async fn a_truncated_video_is_a_clear_error() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let clip = make_video(dir.path(), "clip.mp4", 160, 120, 2);
    let bytes = std::fs::read(&clip).unwrap();
    let cut = dir.path().join("cut.mp4");
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).unwrap();
    let err = encode_video(
        &engines,
        &cut,
        &dir.path().join("o"),
        &VideoEncodeParams::default(),
        &Limits::default(),
        &CancellationToken::new(),
        &mut |_| {},
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("ffprobe failed (exit status 1):"),
        "{err}"
    );
    assert!(!dir.path().join("o.mp4").exists());
}

#[tokio::test]
async fn thumbs_by_count_and_by_offsets() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let clip = make_video(dir.path(), "clip.mp4", 320, 240, 4);
    let params = ThumbsParams {
        count: 3,
        width: Some(160),
        height: Some(160),
        ..ThumbsParams::default()
    };
    let shots = thumbs(
        &engines,
        &clip,
        &dir.path().join("t"),
        &params,
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let positions: Vec<f64> = shots.iter().map(|s| s.position).collect();
    assert_eq!(positions, [1.0, 2.0, 3.0]);
    for shot in &shots {
        let probe = ffprobe(&shot.path);
        let image = stream(&probe, "video");
        assert_eq!(image["codec_name"], "mjpeg");
        assert_eq!(
            (image["width"].as_u64(), image["height"].as_u64()),
            (Some(160), Some(160))
        );
    }
    let params = ThumbsParams {
        offsets: Some(vec![
            Offset::Seconds(3.5),
            Offset::Percent(25.0),
            Offset::Seconds(60.0),
        ]),
        format: ThumbFormat::Png,
        ..ThumbsParams::default()
    };
    let shots = thumbs(
        &engines,
        &clip,
        &dir.path().join("o"),
        &params,
        &Limits::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(
        shots.iter().map(|s| s.position).collect::<Vec<_>>(),
        [1.0, 3.5],
        "sorted, 60 s ignored"
    );
    let probe = ffprobe(&shots[0].path);
    let image = stream(&probe, "video");
    assert_eq!(image["codec_name"], "png");
    assert_eq!(
        (image["width"].as_u64(), image["height"].as_u64()),
        (Some(320), Some(240))
    );
    assert_eq!(shots[0].path, dir.path().join("o_0.png"));
}

#[tokio::test]
async fn audio_presets_write_their_codecs() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let clip = make_video(dir.path(), "clip.mp4", 160, 120, 1);
    for (preset, codec, rate, ext) in [
        ("mp3", "mp3", "22050", "mp3"),
        ("opus", "opus", "48000", "opus"),
        ("aac", "aac", "44100", "m4a"),
    ] {
        let params = AudioEncodeParams {
            preset: AudioPreset::find(preset).unwrap(),
            sample_rate: (preset == "mp3").then_some(22_050),
            bitrate: Some(64_000),
            ..AudioEncodeParams::default()
        };
        let out = encode_audio(
            &engines,
            &clip,
            &dir.path().join(preset),
            &params,
            &Limits::default(),
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
        .unwrap();
        assert_eq!(out.path.extension().unwrap(), ext);
        let probe = ffprobe(&out.path);
        let audio = stream(&probe, "audio");
        assert_eq!(audio["codec_name"], codec, "{preset}");
        assert_eq!(audio["sample_rate"], rate, "{preset}");
        assert!(
            probe["streams"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["codec_type"] != "video"),
            "{preset} kept video"
        );
    }
}
