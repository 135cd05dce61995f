//! The engine robots' parameters: a step's JSON checked and turned into the engine adapters'
//! parameter types ([`crate::engines`]). Unknown parameters are refused, as Transloadit's robot
//! schemas are strict; the ones not supported yet are listed in `docs/processing.md`.

use serde_json::{Map, Value};

use super::Robot;
use crate::engines::EngineError;
use crate::engines::audio::{AudioEncodeParams, AudioPreset};
use crate::engines::ffopts::{FfmpegOptions, check_ffmpeg_stack};
use crate::engines::image::{Gravity, ImageFormat, ResizeParams, ResizeStrategy, Rgba};
use crate::engines::optimize::OptimizeParams;
use crate::engines::thumbs::{Offset, ThumbFormat, ThumbsParams};
use crate::engines::video::{VideoEncodeParams, VideoPreset, VideoResize};

/// One engine robot's checked parameters.
#[derive(Debug, Clone)]
pub enum MediaParams {
    Resize(ResizeParams),
    Video(VideoEncodeParams),
    Thumbs(ThumbsParams),
    Audio(AudioEncodeParams),
    Optimize(OptimizeParams),
    Scan,
}

/// Parameters each engine robot takes, besides the common ones.
fn own(robot: Robot) -> &'static [&'static str] {
    match robot {
        Robot::ImageResize => &[
            "width",
            "height",
            "resize_strategy",
            "zoom",
            "gravity",
            "format",
            "quality",
            "background",
            "strip",
            "rotation",
            "progressive",
            "imagemagick_stack",
        ],
        Robot::VideoEncode => &[
            "preset",
            "width",
            "height",
            "resize_strategy",
            "background",
            "ffmpeg",
            "ffmpeg_stack",
        ],
        Robot::VideoThumbs => &[
            "count",
            "offsets",
            "format",
            "width",
            "height",
            "resize_strategy",
            "background",
            "ffmpeg_stack",
        ],
        Robot::AudioEncode => &["preset", "bitrate", "sample_rate", "ffmpeg", "ffmpeg_stack"],
        Robot::FileVirusscan => &["error_on_decline", "error_msg"],
        Robot::ImageOptimize => &[
            "priority",
            "progressive",
            "preserve_meta_data",
            "fix_breaking_images",
        ],
        _ => &[],
    }
}

/// The robot's `*_VALIDATION` code.
pub fn validation_code(robot: Robot) -> &'static str {
    match robot {
        Robot::ImageResize => "IMAGE_RESIZE_VALIDATION",
        Robot::VideoEncode => "VIDEO_ENCODE_VALIDATION",
        Robot::VideoThumbs => "VIDEO_THUMBS_VALIDATION",
        Robot::AudioEncode => "AUDIO_ENCODE_VALIDATION",
        Robot::ImageOptimize => "IMAGE_OPTIMIZE_VALIDATION",
        _ => "FILE_VIRUSSCAN_VALIDATION",
    }
}

/// Checks `params` for `robot` and builds the adapter's parameters.
pub fn parse(robot: Robot, params: &Map<String, Value>) -> Result<MediaParams, String> {
    for key in params.keys() {
        if !own(robot).contains(&key.as_str()) && !super::BASE_PARAMS.contains(&key.as_str()) {
            return Err(format!("{} takes no parameter {key:?}", robot.name()));
        }
    }
    let e = |e: EngineError| e.to_string();
    if let Some(stack) = params.get("ffmpeg_stack") {
        check_ffmpeg_stack(text(stack, "ffmpeg_stack")?).map_err(e)?;
    }
    Ok(match robot {
        Robot::ImageResize => {
            let mut p = ResizeParams {
                width: side(params, "width")?,
                height: side(params, "height")?,
                ..ResizeParams::default()
            };
            if let Some(v) = params.get("resize_strategy") {
                p.strategy = ResizeStrategy::parse(text(v, "resize_strategy")?).map_err(e)?;
            }
            if let Some(v) = params.get("gravity") {
                p.gravity = Gravity::parse(text(v, "gravity")?).map_err(e)?;
            }
            if let Some(v) = params.get("format").filter(|v| !v.is_null()) {
                p.format = Some(ImageFormat::parse(text(v, "format")?).map_err(e)?);
            }
            if let Some(v) = params.get("background") {
                p.background = Rgba::parse(text(v, "background")?).map_err(e)?;
            }
            if let Some(q) = params.get("quality") {
                p.quality = q
                    .as_u64()
                    .and_then(|q| u8::try_from(q).ok())
                    .ok_or("quality must be 1..=100")?;
            }
            p.zoom = flag(params, "zoom", p.zoom)?;
            p.strip = flag(params, "strip", p.strip)?;
            p.auto_orient = flag(params, "rotation", p.auto_orient)?;
            p.progressive = flag(params, "progressive", p.progressive)?;
            p.validate().map_err(e)?;
            MediaParams::Resize(p)
        }
        Robot::VideoEncode => {
            let mut p = VideoEncodeParams {
                width: side(params, "width")?,
                height: side(params, "height")?,
                ..VideoEncodeParams::default()
            };
            if let Some(v) = params.get("preset") {
                p.preset = VideoPreset::find(text(v, "preset")?).map_err(e)?;
            }
            if let Some(v) = params.get("resize_strategy") {
                p.resize = VideoResize::parse(text(v, "resize_strategy")?).map_err(e)?;
            }
            if let Some(v) = params.get("background") {
                p.background = rgb(text(v, "background")?)?;
            }
            p.ffmpeg = ffmpeg(params)?;
            MediaParams::Video(p)
        }
        Robot::VideoThumbs => {
            let mut p = ThumbsParams {
                width: side(params, "width")?,
                height: side(params, "height")?,
                ..ThumbsParams::default()
            };
            if let Some(c) = params.get("count") {
                p.count = c
                    .as_u64()
                    .and_then(|c| u32::try_from(c).ok())
                    .ok_or("count must be 1..=999")?;
            }
            if let Some(v) = params.get("offsets").filter(|v| !v.is_null()) {
                let list = v.as_array().ok_or("offsets must be an array")?;
                p.offsets = Some(
                    list.iter()
                        .map(Offset::parse)
                        .collect::<Result<_, _>>()
                        .map_err(e)?,
                );
            }
            if let Some(v) = params.get("format") {
                p.format = ThumbFormat::parse(text(v, "format")?).map_err(e)?;
            }
            if let Some(v) = params.get("resize_strategy") {
                p.resize = VideoResize::parse(text(v, "resize_strategy")?).map_err(e)?;
            }
            if let Some(v) = params.get("background") {
                p.background = rgb(text(v, "background")?)?;
            }
            MediaParams::Thumbs(p)
        }
        Robot::AudioEncode => {
            let mut p = AudioEncodeParams::default();
            if let Some(v) = params.get("preset") {
                p.preset = AudioPreset::find(text(v, "preset")?).map_err(e)?;
            }
            p.bitrate = num(params, "bitrate")?;
            p.sample_rate = num(params, "sample_rate")?;
            p.ffmpeg = ffmpeg(params)?;
            MediaParams::Audio(p)
        }
        Robot::ImageOptimize => {
            // Both priorities run the same lossless optimizer: "compression-ratio" does not
            // fall back to a lossy re-encode here.
            if let Some(v) = params.get("priority") {
                let p = text(v, "priority")?;
                if !matches!(p, "conversion-speed" | "compression-ratio") {
                    return Err(format!(
                        "priority must be \"conversion-speed\" or \"compression-ratio\", not {p:?}"
                    ));
                }
            }
            if flag(params, "progressive", false)? {
                return Err("progressive: true is not supported yet".to_owned());
            }
            // A file the optimizer cannot read passes on unchanged, so images never break an
            // Assembly whichever way fix_breaking_images is set.
            flag(params, "fix_breaking_images", true)?;
            MediaParams::Optimize(OptimizeParams {
                preserve_meta_data: flag(params, "preserve_meta_data", true)?,
            })
        }
        _ => MediaParams::Scan,
    })
}

fn text<'a>(v: &'a Value, name: &str) -> Result<&'a str, String> {
    v.as_str().ok_or_else(|| format!("{name} must be a string"))
}

fn flag(params: &Map<String, Value>, name: &str, default: bool) -> Result<bool, String> {
    match params.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("{name} must be true or false")),
    }
}

fn num(params: &Map<String, Value>, name: &str) -> Result<Option<u32>, String> {
    match params.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| format!("{name} must be a whole number")),
    }
}

fn side(params: &Map<String, Value>, name: &str) -> Result<Option<u32>, String> {
    num(params, name)
}

/// `#rrggbb`, `rrggbb` or with an alpha pair (dropped).
fn rgb(raw: &str) -> Result<[u8; 3], String> {
    let hex = raw.trim_start_matches('#');
    let byte = |i: usize| {
        hex.get(i..i + 2)
            .and_then(|h| u8::from_str_radix(h, 16).ok())
    };
    match (hex.len(), byte(0), byte(2), byte(4)) {
        (6 | 8, Some(r), Some(g), Some(b)) => Ok([r, g, b]),
        _ => Err(format!("background {raw:?} is not an rrggbb colour")),
    }
}

fn ffmpeg(params: &Map<String, Value>) -> Result<FfmpegOptions, String> {
    match params.get("ffmpeg") {
        None | Some(Value::Null) => Ok(FfmpegOptions::default()),
        Some(Value::Object(o)) => FfmpegOptions::parse(o).map_err(|e| e.to_string()),
        Some(_) => Err("ffmpeg must be an object of options".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(robot: Robot, p: Value) -> Result<(), String> {
        parse(robot, p.as_object().unwrap_or(&Map::new())).map(|_| ())
    }

    #[test]
    fn engine_parameters_are_checked() {
        assert!(check(Robot::ImageResize, json!({"width": 100, "height": 80, "resize_strategy": "fillcrop", "format": "webp", "quality": 80})).is_ok());
        assert!(check(Robot::ImageResize, json!({"width": 0})).is_err());
        assert!(check(Robot::ImageResize, json!({"resize_strategy": "melt"})).is_err());
        assert!(check(Robot::ImageResize, json!({"watermark_url": "x"})).is_err());
        assert!(
            check(
                Robot::VideoEncode,
                json!({"preset": "webm", "ffmpeg_stack": "v6.0.0"})
            )
            .is_ok()
        );
        assert!(check(Robot::VideoEncode, json!({"ffmpeg": {"i": "/etc/passwd"}})).is_err());
        assert!(check(Robot::VideoEncode, json!({"ffmpeg_stack": "v1"})).is_err());
        assert!(
            check(
                Robot::VideoThumbs,
                json!({"offsets": [1, "50%"], "format": "png"})
            )
            .is_ok()
        );
        assert!(check(Robot::VideoThumbs, json!({"offsets": ["200%"]})).is_err());
        assert!(
            check(
                Robot::AudioEncode,
                json!({"preset": "opus", "bitrate": 64000})
            )
            .is_ok()
        );
        assert!(check(Robot::AudioEncode, json!({"preset": "wma"})).is_err());
        assert!(check(Robot::ImageOptimize, json!({"priority": "conversion-speed", "preserve_meta_data": false, "fix_breaking_images": true, "progressive": false})).is_ok());
        assert!(check(Robot::ImageOptimize, json!({"priority": "fastest"})).is_err());
        assert!(check(Robot::ImageOptimize, json!({"progressive": true})).is_err());
        assert!(check(Robot::ImageOptimize, json!({"quality": 80})).is_err());
        assert_eq!(rgb("#ff0080"), Ok([255, 0, 128]));
    }
}
