//! `/video/thumbs`: still frames at `count` regular positions (count 3 → 25 %, 50 %, 75 %) or at
//! given `offsets` (seconds or `"NN%"`; outside the video → ignored), one ffmpeg process per
//! frame (input seeking, one frame out), sized like `/video/encode` (`pad` by default), as JPEG
//! or PNG, sorted by position.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use super::EngineError;
use super::detect::Engines;
use super::ffmpeg;
use super::limits::{self, Limits};
use super::probe::{self, MediaKind};
use super::video::{VideoResize, scale_filter};

/// A position in the video.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Offset {
    /// Seconds from the start.
    Seconds(f64),
    /// Percent of the duration (0..=100).
    Percent(f64),
}

impl Offset {
    /// Parses a JSON offset: a number of seconds or a `"NN%"` string.
    pub fn parse(value: &serde_json::Value) -> Result<Self, EngineError> {
        let bad = || EngineError::Invalid(format!("offset {value} is neither seconds nor \"NN%\""));
        match value {
            serde_json::Value::Number(n) => n
                .as_f64()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(Self::Seconds)
                .ok_or_else(bad),
            serde_json::Value::String(s) => {
                let number = s.strip_suffix('%').ok_or_else(bad)?;
                number
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=100.0).contains(p))
                    .map(Self::Percent)
                    .ok_or_else(bad)
            }
            _ => Err(bad()),
        }
    }
}

/// `jpg` (Transloadit's `jpeg`/`jpg`) or `png`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThumbFormat {
    /// JPEG (default).
    #[default]
    Jpg,
    /// PNG.
    Png,
}

impl ThumbFormat {
    /// Parses `jpeg`, `jpg`, `png`.
    pub fn parse(text: &str) -> Result<Self, EngineError> {
        match text {
            "jpg" | "jpeg" => Ok(Self::Jpg),
            "png" => Ok(Self::Png),
            other => Err(EngineError::Invalid(format!(
                "thumbnail format {other:?} is not jpeg, jpg or png"
            ))),
        }
    }
}

/// `/video/thumbs`'s parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct ThumbsParams {
    /// Number of evenly spaced frames (1..=999); ignored when `offsets` is set.
    pub count: u32,
    /// Explicit positions; take precedence over `count`.
    pub offsets: Option<Vec<Offset>>,
    /// Output format.
    pub format: ThumbFormat,
    /// Width (1..=1920); default: the video's.
    pub width: Option<u32>,
    /// Height (1..=1080); default: the video's.
    pub height: Option<u32>,
    /// How width×height is reached.
    pub resize: VideoResize,
    /// Padding colour (RGB; transparency is not supported).
    pub background: [u8; 3],
}

impl Default for ThumbsParams {
    fn default() -> Self {
        Self {
            count: 8,
            offsets: None,
            format: ThumbFormat::Jpg,
            width: None,
            height: None,
            resize: VideoResize::Pad,
            background: [0, 0, 0],
        }
    }
}

/// One thumbnail.
#[derive(Debug, Clone, PartialEq)]
pub struct Thumb {
    /// `output_base_N.jpg` / `.png`, N counting from 0 in position order.
    pub path: PathBuf,
    /// Where in the video it was taken, in seconds.
    pub position: f64,
}

/// Takes thumbnails of `input` into `output_base_N.<ext>`.
pub async fn thumbs(
    engines: &Engines,
    input: &Path,
    output_base: &Path,
    params: &ThumbsParams,
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<Vec<Thumb>, EngineError> {
    let ffmpeg_bin = engines.ffmpeg()?;
    if params.offsets.is_none() && !(1..=999).contains(&params.count) {
        return Err(EngineError::Invalid(format!(
            "count must be 1..=999, not {}",
            params.count
        )));
    }
    for (name, side, max) in [
        ("width", params.width, 1920),
        ("height", params.height, 1080),
    ] {
        if side.is_some_and(|s| s == 0 || s > max) {
            return Err(EngineError::Invalid(format!("{name} must be 1..={max}")));
        }
    }
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
    let duration = source.meta.duration.unwrap_or(0.0);
    let positions = positions(params, duration);
    let filter = match (params.width, params.height) {
        (None, None) => None,
        (tw, th) => Some(scale_filter(
            tw.unwrap_or(0),
            th.unwrap_or(0),
            params.resize,
            params.background,
        )?),
    };
    let (codec, extension) = match params.format {
        ThumbFormat::Jpg => ("mjpeg", "jpg"),
        ThumbFormat::Png => ("png", "png"),
    };
    let mut out = Vec::new();
    for position in positions {
        let mut base = output_base.as_os_str().to_owned();
        base.push(format!("_{}.{extension}", out.len()));
        let path = PathBuf::from(base);
        let mut args = ffmpeg::base_args();
        args.extend(["-ss".into(), format!("{position:.3}").into()]);
        args.extend(ffmpeg::input_args(input)?);
        args.extend([
            "-map".into(),
            "0:v:0".into(),
            "-frames:v".into(),
            "1".into(),
        ]);
        if let Some(filter) = &filter {
            args.extend(["-vf".into(), filter.into()]);
        }
        args.extend(["-c:v".into(), codec.into()]);
        if params.format == ThumbFormat::Jpg {
            args.extend(["-q:v".into(), "2".into()]);
        }
        let spec: OsString = format!("file:{}", limits::check_path(&path)?).into();
        args.extend([
            "-update".into(),
            "1".into(),
            "-f".into(),
            "image2".into(),
            spec,
        ]);
        limits::run(ffmpeg_bin, &args, &[], limits, cancel).await?;
        // A position past the last decodable frame writes nothing: ignored like an offset
        // outside the video.
        if tokio::fs::metadata(&path).await.is_ok_and(|m| m.len() > 0) {
            out.push(Thumb { path, position });
        }
    }
    Ok(out)
}

/// Positions in seconds, inside the video, sorted, without duplicates.
fn positions(params: &ThumbsParams, duration: f64) -> Vec<f64> {
    let mut positions: Vec<f64> = match &params.offsets {
        Some(offsets) => offsets
            .iter()
            .map(|o| match o {
                Offset::Seconds(s) => *s,
                Offset::Percent(p) => duration * p / 100.0,
            })
            .filter(|s| duration <= 0.0 && *s == 0.0 || *s < duration)
            .collect(),
        None if duration > 0.0 => (1..=params.count)
            .map(|i| duration * f64::from(i) / f64::from(params.count + 1))
            .collect(),
        None => vec![0.0],
    };
    positions.sort_by(f64::total_cmp);
    positions.dedup_by(|a, b| (*a - *b).abs() < 0.001);
    positions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_spreads_evenly_and_offsets_outside_are_ignored() {
        let p = ThumbsParams {
            count: 3,
            ..ThumbsParams::default()
        };
        assert_eq!(positions(&p, 8.0), [2.0, 4.0, 6.0]);
        let p = ThumbsParams {
            offsets: Some(vec![
                Offset::Seconds(9.0),
                Offset::Percent(50.0),
                Offset::Seconds(1.0),
            ]),
            ..ThumbsParams::default()
        };
        assert_eq!(positions(&p, 8.0), [1.0, 4.0]);
    }

    #[test]
    fn offsets_parse_from_seconds_and_percent() {
        assert_eq!(
            Offset::parse(&serde_json::json!(2.5)).ok(),
            Some(Offset::Seconds(2.5))
        );
        assert_eq!(
            Offset::parse(&serde_json::json!("25%")).ok(),
            Some(Offset::Percent(25.0))
        );
        assert!(Offset::parse(&serde_json::json!("25")).is_err());
        assert!(Offset::parse(&serde_json::json!(-1)).is_err());
    }
}
