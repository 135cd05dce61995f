//! File meta for any upload: ffprobe reads the streams (width, height, duration, codecs, frame
//! rate, bitrates, recording date, video rotation); for still images libvips's `vipsheader` adds
//! the EXIF orientation and date, which ffprobe does not report, and JPEG, PNG and WebP stills are
//! read by `vipsheader` alone (the same fields, one engine start instead of two), a JPEG's header
//! in process where it can be ([`super::native::jpeg_header`]: no engine start at all). The result serializes with
//! Transloadit's `meta` field names (absent fields are left out, as Transloadit does).

use std::path::Path;
use std::sync::LazyLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::EngineError;
use super::cache::{FileIdentity, PerFile};
use super::detect::Engines;
use super::ffmpeg;
use super::limits::{self, Limits};
use super::vips;

/// A file's `meta`, with Transloadit's field names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// Pixels, as stored (before EXIF orientation is applied).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// Pixels, as stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    /// width / height, rounded to 3 decimals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aspect_ratio: Option<f64>,
    /// Seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    /// Frames per second of the first video stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub framerate: Option<f64>,
    /// ffmpeg's codec name, e.g. `h264`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video_codec: Option<String>,
    /// ffmpeg's codec name, e.g. `aac`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audio_codec: Option<String>,
    /// Overall bits per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bitrate: Option<u64>,
    /// Bits per second of the first video stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video_bitrate: Option<u64>,
    /// Bits per second of the first audio stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audio_bitrate: Option<u64>,
    /// Hz.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audio_samplerate: Option<u32>,
    /// Channel count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audio_channels: Option<u32>,
    /// Display rotation of a video in degrees (0, 90, 180, 270).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotation: Option<i32>,
    /// EXIF orientation in ExifTool's words, e.g. `Rotate 90 CW`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orientation: Option<String>,
    /// `YYYY/MM/DD HH:MM:SS`, from EXIF DateTimeOriginal/DateTime or the container's creation time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_recorded: Option<String>,
}

/// What kind of media a file is, from its streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MediaKind {
    /// A still image (one frame, an image demuxer or codec).
    Image,
    /// Has a video stream that is not a still image (cover art is not).
    Video,
    /// Audio streams only.
    Audio,
}

/// The result of [`probe`].
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// Transloadit's `meta`.
    pub meta: Meta,
    /// `None` when ffprobe found no audio, video or image stream.
    pub kind: Option<MediaKind>,
    /// ffprobe's format name, e.g. `mov,mp4,m4a,3gp,3g2,mj2`.
    pub format_name: String,
    /// The raw EXIF orientation (1..=8) of an image, for callers that rotate.
    pub exif_orientation: Option<u8>,
}

impl Probe {
    /// Duration as a `Duration`, when known.
    pub fn duration(&self) -> Option<Duration> {
        self.meta
            .duration
            .filter(|d| d.is_finite() && *d > 0.0)
            .map(Duration::from_secs_f64)
    }
}

/// Reads `path`'s meta. A file ffprobe cannot read (not media, truncated, garbage) is an
/// [`EngineError::Failed`] naming ffprobe and its message; callers that only want meta for
/// every upload treat that as "no meta".
/// Read once per file ([`super::cache`]): the upload's meta, `/video/encode` and
/// `/video/thumbs` all probe the same upload.
pub async fn probe(
    engines: &Engines,
    path: &Path,
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<Probe, EngineError> {
    regular_file(path).await?;
    let identity = FileIdentity::of(path).await;
    if let Some(cached) = identity.as_ref().and_then(|id| PROBES.get(id)) {
        return Ok(cached);
    }
    let probe = read(engines, path, limits, cancel).await?;
    if let Some(id) = identity {
        PROBES.put(id, probe.clone());
    }
    Ok(probe)
}

/// Probes already made.
static PROBES: LazyLock<PerFile<Probe>> = LazyLock::new(PerFile::default);

async fn read(
    engines: &Engines,
    path: &Path,
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<Probe, EngineError> {
    if let Some(probe) = still_image(engines, path, limits, cancel).await {
        return Ok(probe);
    }
    let ffprobe = engines.ffprobe()?;
    let mut args = vec![
        "-hide_banner".into(),
        "-loglevel".into(),
        "error".into(),
        "-print_format".into(),
        "json".into(),
        "-show_format".into(),
        "-show_streams".into(),
    ];
    args.extend(ffmpeg::input_args(path)?);
    let out = limits::run(ffprobe, &args, &[], limits, cancel).await?;
    let parsed: FfprobeOutput = serde_json::from_slice(&out.stdout)
        .map_err(|e| EngineError::bad_output("ffprobe", format!("unreadable JSON: {e}")))?;
    let mut probe = from_ffprobe(&parsed);
    if probe.kind == Some(MediaKind::Image) && engines.vipsheader.is_some() {
        // EXIF is optional garnish: an image libvips cannot read still has ffprobe's meta.
        if let Ok(header) = vips::header(engines, path, limits, cancel).await {
            probe.exif_orientation = header.orientation;
            probe.meta.orientation = header
                .orientation
                .and_then(orientation_name)
                .map(str::to_owned);
            if let Some(date) = header.exif_date {
                probe.meta.date_recorded = Some(date);
            }
        }
    }
    Ok(probe)
}

/// JPEG, PNG and WebP stills, by their signature: ffprobe, whose start-up costs more than the
/// whole header read, would only add the codec name the loader already implies, so libvips's
/// header alone gives the same `meta` (animations and anything libvips cannot read go to ffprobe).
async fn still_image(
    engines: &Engines,
    path: &Path,
    limits: &Limits,
    cancel: &CancellationToken,
) -> Option<Probe> {
    engines.vipsheader.as_ref()?;
    let mut head = [0u8; 12];
    let mut file = tokio::fs::File::open(path).await.ok()?;
    tokio::io::AsyncReadExt::read_exact(&mut file, &mut head)
        .await
        .ok()?;
    let (codec, format_name, loader) = if head.starts_with(b"\xFF\xD8\xFF") {
        ("mjpeg", "jpeg_pipe", "jpegload")
    } else if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        ("png", "png_pipe", "pngload")
    } else if head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        ("webp", "webp_pipe", "webpload")
    } else {
        return None;
    };
    // A JPEG's header is read in process (no engine start for most photos); libvips reads the rest.
    let native = match codec {
        "mjpeg" => super::native::jpeg_header(path).await,
        _ => None,
    };
    let header = match native {
        Some(header) => header,
        None => vips::header(engines, path, limits, cancel).await.ok()?,
    };
    if header.loader != loader || header.pages.is_some() {
        return None;
    }
    let (width, height) = (
        u32::try_from(header.width).ok()?,
        u32::try_from(header.height).ok()?,
    );
    let meta = Meta {
        width: Some(width).filter(|w| *w > 0),
        height: Some(height).filter(|h| *h > 0),
        aspect_ratio: (width > 0 && height > 0)
            .then(|| (f64::from(width) / f64::from(height) * 1000.0).round() / 1000.0),
        video_codec: Some(codec.to_owned()),
        orientation: header
            .orientation
            .and_then(orientation_name)
            .map(str::to_owned),
        date_recorded: header.exif_date,
        ..Meta::default()
    };
    Some(Probe {
        meta,
        kind: Some(MediaKind::Image),
        format_name: format_name.to_owned(),
        exif_orientation: header.orientation,
    })
}

/// Refuses what is not a regular file (a FIFO would block the reader; a directory is no input).
pub(crate) async fn regular_file(path: &Path) -> Result<u64, EngineError> {
    let meta = tokio::fs::metadata(path)
        .await
        .map_err(|e| EngineError::io(format!("reading {}", path.display()), e))?;
    if !meta.is_file() {
        return Err(EngineError::Invalid(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    Ok(meta.len())
}

/// ExifTool's names for the eight EXIF orientations.
pub fn orientation_name(orientation: u8) -> Option<&'static str> {
    Some(match orientation {
        1 => "Horizontal (normal)",
        2 => "Mirror horizontal",
        3 => "Rotate 180",
        4 => "Mirror vertical",
        5 => "Mirror horizontal and rotate 270 CW",
        6 => "Rotate 90 CW",
        7 => "Mirror horizontal and rotate 90 CW",
        8 => "Rotate 270 CW",
        _ => return None,
    })
}

#[derive(Debug, Default, Deserialize)]
struct FfprobeOutput {
    #[serde(default)]
    streams: Vec<Stream>,
    #[serde(default)]
    format: Format,
}

#[derive(Debug, Default, Deserialize)]
struct Stream {
    codec_type: Option<String>,
    codec_name: Option<String>,
    width: Option<u32>,
    height: Option<u32>,
    avg_frame_rate: Option<String>,
    r_frame_rate: Option<String>,
    bit_rate: Option<String>,
    sample_rate: Option<String>,
    channels: Option<u32>,
    duration: Option<String>,
    nb_frames: Option<String>,
    #[serde(default)]
    disposition: Disposition,
    #[serde(default)]
    tags: Tags,
    #[serde(default)]
    side_data_list: Vec<SideData>,
}

#[derive(Debug, Default, Deserialize)]
struct Disposition {
    #[serde(default)]
    attached_pic: u8,
}

#[derive(Debug, Default, Deserialize)]
struct Tags {
    rotate: Option<String>,
    creation_time: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct SideData {
    rotation: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
struct Format {
    #[serde(default)]
    format_name: String,
    duration: Option<String>,
    bit_rate: Option<String>,
    #[serde(default)]
    tags: Tags,
}

const IMAGE_CODECS: [&str; 8] = [
    "mjpeg", "png", "webp", "gif", "bmp", "tiff", "jpeg2000", "av1",
];

fn from_ffprobe(out: &FfprobeOutput) -> Probe {
    let video = out
        .streams
        .iter()
        .find(|s| s.codec_type.as_deref() == Some("video") && s.disposition.attached_pic == 0);
    let audio = out
        .streams
        .iter()
        .find(|s| s.codec_type.as_deref() == Some("audio"));
    let format = &out.format;
    let image_demuxer = format.format_name.ends_with("_pipe") || format.format_name == "image2";
    let kind = match (video, audio) {
        (Some(v), None)
            if image_demuxer
                || (IMAGE_CODECS.contains(&v.codec_name.as_deref().unwrap_or(""))
                    && v.nb_frames.as_deref().is_none_or(|n| n == "1")) =>
        {
            Some(MediaKind::Image)
        }
        (Some(_), _) => Some(MediaKind::Video),
        (None, Some(_)) => Some(MediaKind::Audio),
        (None, None) => None,
    };
    let mut meta = Meta::default();
    if let Some(v) = video {
        meta.width = v.width.filter(|w| *w > 0);
        meta.height = v.height.filter(|h| *h > 0);
        if let (Some(w), Some(h)) = (meta.width, meta.height) {
            meta.aspect_ratio = Some((f64::from(w) / f64::from(h) * 1000.0).round() / 1000.0);
        }
        meta.video_codec = v.codec_name.clone();
        if kind == Some(MediaKind::Video) {
            meta.framerate =
                rate(v.avg_frame_rate.as_deref()).or_else(|| rate(v.r_frame_rate.as_deref()));
            meta.video_bitrate = number(v.bit_rate.as_deref());
            meta.rotation = rotation(v);
        }
    }
    if let Some(a) = audio {
        meta.audio_codec = a.codec_name.clone();
        meta.audio_bitrate = number(a.bit_rate.as_deref());
        meta.audio_samplerate =
            number(a.sample_rate.as_deref()).and_then(|n| u32::try_from(n).ok());
        meta.audio_channels = a.channels;
    }
    if kind != Some(MediaKind::Image) {
        meta.duration = seconds(format.duration.as_deref())
            .or_else(|| video.and_then(|v| seconds(v.duration.as_deref())))
            .or_else(|| audio.and_then(|a| seconds(a.duration.as_deref())));
        meta.bitrate = number(format.bit_rate.as_deref());
    }
    meta.date_recorded = format
        .tags
        .creation_time
        .as_deref()
        .and_then(iso_to_transloadit);
    Probe {
        meta,
        kind,
        format_name: format.format_name.clone(),
        exif_orientation: None,
    }
}

fn rotation(v: &Stream) -> Option<i32> {
    // The display matrix counts counter-clockwise (-90 for a clip shown turned 90° clockwise);
    // the older `rotate` tag counts clockwise.
    let clockwise = match v.side_data_list.iter().find_map(|s| s.rotation) {
        Some(degrees) => -degrees,
        None => v.tags.rotate.as_deref()?.trim().parse().ok()?,
    };
    Some((clockwise.round() as i32).rem_euclid(360))
}

fn number(text: Option<&str>) -> Option<u64> {
    text?.trim().parse().ok()
}

fn seconds(text: Option<&str>) -> Option<f64> {
    let value: f64 = text?.trim().parse().ok()?;
    (value.is_finite() && value > 0.0).then(|| (value * 1000.0).round() / 1000.0)
}

fn rate(text: Option<&str>) -> Option<f64> {
    let (num, den) = text?.split_once('/')?;
    let (num, den): (f64, f64) = (num.parse().ok()?, den.parse().ok()?);
    (num > 0.0 && den > 0.0).then(|| (num / den * 1000.0).round() / 1000.0)
}

/// `2021-03-04T05:06:07.000000Z` → `2021/03/04 05:06:07`.
fn iso_to_transloadit(iso: &str) -> Option<String> {
    let date = iso.get(..10)?;
    let time = iso.get(11..19)?;
    let ok = date.len() == 10 && time.len() == 8 && iso.as_bytes().get(10) == Some(&b'T');
    ok.then(|| format!("{} {time}", date.replace('-', "/")))
}
