//! `/audio/encode`: Transloadit's audio presets (mp3 default, aac, opus, ogg, flac, wav), the
//! step's `bitrate` and `sample_rate`, the `ffmpeg` options object merged over the preset; any
//! video or cover art is dropped. One ffmpeg process per job, with progress.

use std::ffi::OsString;
use std::path::Path;

use tokio_util::sync::CancellationToken;

use super::EngineError;
use super::detect::Engines;
use super::ffmpeg::{self, Progress};
use super::ffopts::{self, FfmpegOptions};
use super::limits::{self, Limits};
use super::probe;
use super::video::{MediaOutput, output_path, require_encoders};

/// An audio preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AudioPreset {
    /// Transloadit's name: `mp3`, `aac`, `opus`, `ogg`, `flac`, `wav`.
    pub name: &'static str,
    /// ffmpeg muxer.
    pub muxer: &'static str,
    /// Output extension.
    pub extension: &'static str,
    /// MIME type.
    pub mime: &'static str,
    options: &'static [(&'static str, &'static str)],
}

/// The audio presets this server knows (`mp3` first: the default).
pub const AUDIO_PRESETS: &[AudioPreset] = &[
    AudioPreset {
        name: "mp3",
        muxer: "mp3",
        extension: "mp3",
        mime: "audio/mpeg",
        options: &[("c:a", "libmp3lame"), ("b:a", "128k"), ("ar", "44100")],
    },
    AudioPreset {
        name: "aac",
        muxer: "ipod",
        extension: "m4a",
        mime: "audio/mp4",
        options: &[
            ("c:a", "aac"),
            ("b:a", "128k"),
            ("ar", "44100"),
            ("movflags", "+faststart"),
        ],
    },
    AudioPreset {
        name: "opus",
        muxer: "opus",
        extension: "opus",
        mime: "audio/ogg",
        options: &[("c:a", "libopus"), ("b:a", "96k"), ("ar", "48000")],
    },
    AudioPreset {
        name: "ogg",
        muxer: "ogg",
        extension: "ogg",
        mime: "audio/ogg",
        options: &[("c:a", "libvorbis"), ("q:a", "4"), ("ar", "44100")],
    },
    AudioPreset {
        name: "flac",
        muxer: "flac",
        extension: "flac",
        mime: "audio/flac",
        options: &[("c:a", "flac")],
    },
    AudioPreset {
        name: "wav",
        muxer: "wav",
        extension: "wav",
        mime: "audio/wav",
        options: &[("c:a", "pcm_s16le")],
    },
];

impl AudioPreset {
    /// Looks a preset up by name.
    pub fn find(name: &str) -> Result<&'static AudioPreset, EngineError> {
        AUDIO_PRESETS
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| {
                EngineError::Invalid(format!(
                    "audio preset {name:?} is not supported (supported: {})",
                    AUDIO_PRESETS
                        .iter()
                        .map(|p| p.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })
    }
}

/// `/audio/encode`'s parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct AudioEncodeParams {
    /// The preset (default mp3).
    pub preset: &'static AudioPreset,
    /// Bits per second (8000..=512000), over the preset's.
    pub bitrate: Option<u32>,
    /// Hz (8000..=192000), over the preset's.
    pub sample_rate: Option<u32>,
    /// The step's `ffmpeg` object, checked.
    pub ffmpeg: FfmpegOptions,
}

impl Default for AudioEncodeParams {
    fn default() -> Self {
        Self {
            preset: &AUDIO_PRESETS[0],
            bitrate: None,
            sample_rate: None,
            ffmpeg: FfmpegOptions::default(),
        }
    }
}

/// Encodes `input`'s first audio stream into `output_base.<ext>`, reporting progress.
pub async fn encode_audio(
    engines: &Engines,
    input: &Path,
    output_base: &Path,
    params: &AudioEncodeParams,
    limits: &Limits,
    cancel: &CancellationToken,
    on_progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<MediaOutput, EngineError> {
    let ffmpeg_bin = engines.ffmpeg()?;
    if params
        .bitrate
        .is_some_and(|b| !(8_000..=512_000).contains(&b))
    {
        return Err(EngineError::Invalid(
            "bitrate must be 8000..=512000 bits per second".into(),
        ));
    }
    if params
        .sample_rate
        .is_some_and(|r| !(8_000..=192_000).contains(&r))
    {
        return Err(EngineError::Invalid(
            "sample_rate must be 8000..=192000 Hz".into(),
        ));
    }
    let source = probe::probe(engines, input, limits, cancel).await?;
    if source.meta.audio_codec.is_none() {
        return Err(EngineError::Invalid(format!(
            "{} holds no audio stream",
            input.display()
        )));
    }
    let mut options = FfmpegOptions::merged(params.preset.options, &params.ffmpeg);
    for (key, value) in [("b:a", params.bitrate), ("ar", params.sample_rate)] {
        if let Some(value) = value {
            options.retain(|(k, _)| *k != key);
            options.push((key, Some(value.to_string())));
        }
    }
    require_encoders(engines, &options)?;
    let output = output_path(output_base, params.preset.extension)?;
    let mut args = ffmpeg::base_args();
    args.extend(ffmpeg::input_args(input)?);
    args.extend(["-map".into(), "0:a:0".into(), "-vn".into()]);
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
