//! `/video/encode`: a named preset (container, codecs, rates, default size), the step's
//! width/height and resize strategy as a scale/pad/crop filter built from numbers, the `ffmpeg`
//! options object merged over the preset, one ffmpeg process per job with progress.
//!
//! Presets carry Transloadit's names; their settings follow Transloadit's preset table where it
//! is public (container, codecs, audio rate, resolution) and x264/libvpx defaults elsewhere, so
//! byte-identical output with Transloadit is not a goal. `_` and `-` in names are interchangeable.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use super::EngineError;
use super::detect::Engines;
use super::ffmpeg::{self, Progress};
use super::ffopts::{self, FfmpegOptions};
use super::limits::{self, Limits};
use super::probe::{self, MediaKind};

/// A video preset: container, extension, codec options and default size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VideoPreset {
    /// Transloadit's name, e.g. `ipad-high`, `web/mp4/720p`, `webm`.
    pub name: &'static str,
    /// ffmpeg muxer (`mp4`, `webm`).
    pub muxer: &'static str,
    /// Output extension.
    pub extension: &'static str,
    /// MIME type of the output.
    pub mime: &'static str,
    /// Default width × height, when the preset has one.
    pub size: Option<(u32, u32)>,
    options: &'static [(&'static str, &'static str)],
}

const H264: &[(&str, &str)] = &[
    ("c:v", "libx264"),
    ("preset", "medium"),
    ("crf", "23"),
    ("profile:v", "high"),
    ("pix_fmt", "yuv420p"),
    ("c:a", "aac"),
    ("b:a", "128k"),
    ("ar", "44100"),
    ("ac", "2"),
    ("movflags", "+faststart"),
];
const H264_IPAD: &[(&str, &str)] = &[
    ("c:v", "libx264"),
    ("preset", "medium"),
    ("crf", "23"),
    ("maxrate", "2000k"),
    ("bufsize", "4000k"),
    ("profile:v", "main"),
    ("pix_fmt", "yuv420p"),
    ("c:a", "aac"),
    ("b:a", "128k"),
    ("ar", "44100"),
    ("ac", "2"),
    ("movflags", "+faststart"),
];
const VP9: &[(&str, &str)] = &[
    ("c:v", "libvpx-vp9"),
    ("crf", "33"),
    ("b:v", "0"),
    ("deadline", "good"),
    ("cpu-used", "4"),
    ("row-mt", "1"),
    ("pix_fmt", "yuv420p"),
    ("c:a", "libopus"),
    ("b:a", "96k"),
    ("ar", "48000"),
];

const fn mp4(
    name: &'static str,
    size: Option<(u32, u32)>,
    options: &'static [(&'static str, &'static str)],
) -> VideoPreset {
    VideoPreset {
        name,
        muxer: "mp4",
        extension: "mp4",
        mime: "video/mp4",
        size,
        options,
    }
}

const fn webm(name: &'static str, size: Option<(u32, u32)>) -> VideoPreset {
    VideoPreset {
        name,
        muxer: "webm",
        extension: "webm",
        mime: "video/webm",
        size,
        options: VP9,
    }
}

/// `empty`: no preset settings beyond H.264/AAC in MP4 at the input's size.
pub const EMPTY: VideoPreset = mp4("empty", None, H264);

/// The presets this server knows.
pub const PRESETS: &[VideoPreset] = &[
    mp4("ipad-high", Some((1024, 768)), H264_IPAD),
    mp4("ipad", Some((1024, 768)), H264_IPAD),
    mp4("iphone-high", Some((480, 320)), H264_IPAD),
    mp4("iphone", Some((480, 320)), H264_IPAD),
    mp4("android-high", Some((480, 320)), H264_IPAD),
    mp4("android", Some((480, 320)), H264_IPAD),
    mp4("web/mp4/240p", Some((426, 240)), H264),
    mp4("web/mp4/360p", Some((640, 360)), H264),
    mp4("web/mp4/480p", Some((854, 480)), H264),
    mp4("web/mp4/720p", Some((1280, 720)), H264),
    mp4("web/mp4/1080p", Some((1920, 1080)), H264),
    EMPTY,
    webm("webm", None),
    webm("vp9", None),
    webm("web/webm/240p", Some((426, 240))),
    webm("web/webm/360p", Some((640, 360))),
    webm("web/webm/480p", Some((854, 480))),
    webm("web/webm/720p", Some((1280, 720))),
    webm("web/webm/1080p", Some((1920, 1080))),
];

impl VideoPreset {
    /// Looks a preset up by Transloadit's name (`_` and `-` interchangeable).
    pub fn find(name: &str) -> Result<&'static VideoPreset, EngineError> {
        let wanted = name.replace('_', "-");
        PRESETS.iter().find(|p| p.name == wanted).ok_or_else(|| {
            EngineError::Invalid(format!(
                "video preset {name:?} is not supported (supported: {})",
                PRESETS
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
    }
}

/// How a video reaches width×height (`pad` is `/video/encode`'s default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VideoResize {
    /// Fit inside, then pad to exactly width×height with `background`.
    #[default]
    Pad,
    /// Fit inside; the output may be smaller on one side.
    Fit,
    /// Cover, then crop the excess around the centre.
    FillCrop,
    /// Exactly width×height, aspect ignored.
    Stretch,
}

impl VideoResize {
    /// Parses `pad`, `fit`, `fillcrop`, `stretch`.
    pub fn parse(text: &str) -> Result<Self, EngineError> {
        Ok(match text {
            "pad" => Self::Pad,
            "fit" => Self::Fit,
            "fillcrop" => Self::FillCrop,
            "stretch" => Self::Stretch,
            other => {
                return Err(EngineError::Invalid(format!(
                    "resize_strategy {other:?} is not supported for video"
                )));
            }
        })
    }
}

/// `/video/encode`'s parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct VideoEncodeParams {
    /// The preset (default `empty`: H.264/AAC in MP4, size kept).
    pub preset: &'static VideoPreset,
    /// Output width (even, 2..=7680); default: the preset's, else the input's.
    pub width: Option<u32>,
    /// Output height (even, 2..=4320).
    pub height: Option<u32>,
    /// How width×height is reached.
    pub resize: VideoResize,
    /// Padding colour as `RRGGBB` (black by default).
    pub background: [u8; 3],
    /// The step's `ffmpeg` object, checked.
    pub ffmpeg: FfmpegOptions,
}

impl Default for VideoEncodeParams {
    fn default() -> Self {
        Self {
            preset: &EMPTY,
            width: None,
            height: None,
            resize: VideoResize::Pad,
            background: [0, 0, 0],
            ffmpeg: FfmpegOptions::default(),
        }
    }
}

/// An encoded file.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaOutput {
    /// `output_base` plus the preset's extension.
    pub path: PathBuf,
    /// MIME type.
    pub mime: &'static str,
    /// The output's meta, read back with ffprobe.
    pub meta: probe::Meta,
}

/// Encodes `input` into `output_base.<ext>`, reporting progress.
pub async fn encode_video(
    engines: &Engines,
    input: &Path,
    output_base: &Path,
    params: &VideoEncodeParams,
    limits: &Limits,
    cancel: &CancellationToken,
    on_progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<MediaOutput, EngineError> {
    let ffmpeg_bin = engines.ffmpeg()?;
    let source = probe::probe(engines, input, limits, cancel).await?;
    if source.kind != Some(MediaKind::Video) {
        return Err(EngineError::Invalid(format!(
            "{} holds no video stream",
            input.display()
        )));
    }
    let (w, h) = (
        source.meta.width.unwrap_or(0),
        source.meta.height.unwrap_or(0),
    );
    if u64::from(w) * u64::from(h) > limits.max_pixels {
        return Err(EngineError::TooManyPixels {
            width: w.into(),
            height: h.into(),
            max: limits.max_pixels,
        });
    }
    let options = FfmpegOptions::merged(params.preset.options, &params.ffmpeg);
    require_encoders(engines, &options)?;
    let output = output_path(output_base, params.preset.extension)?;
    let mut args = ffmpeg::base_args();
    args.extend(ffmpeg::input_args(input)?);
    args.extend([
        "-map".into(),
        "0:v:0".into(),
        "-map".into(),
        "0:a:0?".into(),
    ]);
    let size = match (params.width, params.height) {
        (None, None) => params.preset.size,
        (w, h) => Some((w.unwrap_or(0), h.unwrap_or(0))),
    };
    if let Some((tw, th)) = size {
        args.extend([
            "-vf".into(),
            scale_filter(tw, th, params.resize, params.background)?.into(),
        ]);
    }
    args.extend(ffopts::to_args(&options));
    args.extend::<[OsString; 3]>([
        "-f".into(),
        params.preset.muxer.into(),
        format!("file:{}", limits::check_path(&output)?).into(),
    ]);
    ffmpeg::run_encode(
        ffmpeg_bin,
        args,
        &output,
        source.duration(),
        limits,
        cancel,
        on_progress,
    )
    .await?;
    let written = probe::probe(engines, &output, limits, cancel).await?;
    Ok(MediaOutput {
        path: output,
        mime: params.preset.mime,
        meta: written.meta,
    })
}

/// Refuses codecs the installed ffmpeg cannot encode, before anything runs.
pub(crate) fn require_encoders(
    engines: &Engines,
    options: &[(&'static str, Option<String>)],
) -> Result<(), EngineError> {
    for (key, value) in options {
        if let ("c:v" | "c:a", Some(codec)) = (*key, value)
            && codec != "copy"
        {
            engines.require_encoder(codec)?;
        }
    }
    Ok(())
}

pub(crate) fn output_path(base: &Path, extension: &str) -> Result<PathBuf, EngineError> {
    let mut name: OsString = base.as_os_str().to_owned();
    name.push(".");
    name.push(extension);
    let path = PathBuf::from(name);
    limits::check_path(&path)?;
    Ok(path)
}

/// The `-vf` chain for a target size (0 = follow the aspect ratio); sizes are rounded to even
/// numbers, which 4:2:0 encoders need.
pub(crate) fn scale_filter(
    width: u32,
    height: u32,
    resize: VideoResize,
    background: [u8; 3],
) -> Result<String, EngineError> {
    for (name, side, max) in [("width", width, 7680), ("height", height, 4320)] {
        if side > max || side == 1 {
            return Err(EngineError::Invalid(format!(
                "{name} must be 2..={max}, not {side}"
            )));
        }
    }
    if width == 0 && height == 0 {
        return Err(EngineError::Invalid("width or height is needed".into()));
    }
    let even = |n: u32| n - n % 2;
    let (w, h) = (even(width), even(height));
    let colour = format!(
        "0x{:02x}{:02x}{:02x}",
        background[0], background[1], background[2]
    );
    if w == 0 || h == 0 {
        let (sw, sh) = if w == 0 {
            ("-2".to_owned(), h.to_string())
        } else {
            (w.to_string(), "-2".to_owned())
        };
        return Ok(format!("scale={sw}:{sh},setsar=1"));
    }
    Ok(match resize {
        VideoResize::Pad => format!(
            "scale={w}:{h}:force_original_aspect_ratio=decrease:force_divisible_by=2,\
             pad={w}:{h}:(ow-iw)/2:(oh-ih)/2:color={colour},setsar=1"
        ),
        VideoResize::Fit => format!(
            "scale={w}:{h}:force_original_aspect_ratio=decrease:force_divisible_by=2,setsar=1"
        ),
        VideoResize::FillCrop => {
            format!("scale={w}:{h}:force_original_aspect_ratio=increase,crop={w}:{h},setsar=1")
        }
        VideoResize::Stretch => format!("scale={w}:{h},setsar=1"),
    })
}
