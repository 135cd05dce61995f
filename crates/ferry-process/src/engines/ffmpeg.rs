//! What every ffmpeg and ffprobe call shares: how an input is opened (only the `file` protocol,
//! only a whitelist of container demuxers, so a playlist or concat file inside an upload cannot
//! make ffmpeg fetch URLs or read files outside the job), the quiet flags, running an encode with
//! `-progress pipe:1`, and parsing that progress.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::EngineError;
use super::limits::{self, Limits};

/// Demuxers ffmpeg may use on an upload: media containers and still images. Left out on
/// purpose: `hls`, `dash`, `concat`, `ffconcat`, `sdp`, `rtsp`, `tee`, `data`, `lavfi` and every
/// other format that refers to further files or URLs.
pub const DEMUXERS: &str = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,avi,flv,mpegts,mpeg,ogg,asf,\
mp3,wav,flac,aac,aiff,w64,amr,caf,ivf,h264,hevc,m4v,mjpeg,dv,mxf,wv,gif,gif_pipe,image2,\
jpeg_pipe,png_pipe,webp_pipe,bmp_pipe,tiff_pipe";

/// `-protocol_whitelist file -format_whitelist ... -i file:PATH` for a checked path.
pub(crate) fn input_args(path: &Path) -> Result<Vec<OsString>, EngineError> {
    let path = limits::check_path(path)?;
    Ok(vec![
        "-protocol_whitelist".into(),
        "file".into(),
        "-format_whitelist".into(),
        DEMUXERS.into(),
        "-i".into(),
        format!("file:{path}").into(),
    ])
}

/// The flags every ffmpeg run starts with: no banner, no stdin, errors only, overwrite output.
pub(crate) fn base_args() -> Vec<OsString> {
    [
        "-hide_banner",
        "-nostdin",
        "-nostats",
        "-loglevel",
        "error",
        "-y",
    ]
    .into_iter()
    .map(OsString::from)
    .collect()
}

/// One progress report of an encode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// How much of the output is written, in media time.
    pub out_time: Duration,
    /// `out_time` over the input's duration (0.0..=1.0), when the duration is known.
    pub fraction: Option<f64>,
    /// True on ffmpeg's last report (`progress=end`).
    pub done: bool,
}

/// Folds ffmpeg's `-progress` key=value lines into [`Progress`] reports, one per block (each
/// block ends with a `progress=continue|end` line).
#[derive(Debug, Default)]
pub struct ProgressParser {
    out_time_us: Option<u64>,
    duration: Option<Duration>,
}

impl ProgressParser {
    /// A parser that reports fractions of `duration` when it is known.
    pub fn new(duration: Option<Duration>) -> Self {
        Self {
            out_time_us: None,
            duration: duration.filter(|d| !d.is_zero()),
        }
    }

    /// Feeds one line; returns a report when the line closes a block.
    pub fn line(&mut self, line: &str) -> Option<Progress> {
        let (key, value) = line.split_once('=')?;
        match key.trim() {
            // ffmpeg writes both; `out_time_ms` is microseconds too (a long-standing misnomer).
            "out_time_us" | "out_time_ms" => {
                if let Ok(us) = value.trim().parse::<u64>() {
                    self.out_time_us = Some(us);
                }
                None
            }
            "progress" => {
                let done = value.trim() == "end";
                let out_time = Duration::from_micros(self.out_time_us.unwrap_or(0));
                let fraction = self.duration.map(|d| {
                    if done {
                        1.0
                    } else {
                        (out_time.as_secs_f64() / d.as_secs_f64()).clamp(0.0, 1.0)
                    }
                });
                Some(Progress {
                    out_time,
                    fraction,
                    done,
                })
            }
            _ => None,
        }
    }
}

/// Runs ffmpeg with `-progress pipe:1` (a global option, put first) over `args`, which end with
/// the output, reporting through `on_progress`. Removes a partial output file when the run fails.
pub(crate) async fn run_encode(
    ffmpeg: &Path,
    args: Vec<OsString>,
    output: &Path,
    duration: Option<Duration>,
    limits: &Limits,
    cancel: &CancellationToken,
    on_progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<(), EngineError> {
    let args: Vec<OsString> = ["-progress".into(), "pipe:1".into()]
        .into_iter()
        .chain(args)
        .collect();
    let mut parser = ProgressParser::new(duration);
    let mut on_line = |line: &str| {
        if let Some(progress) = parser.line(line) {
            on_progress(progress);
        }
    };
    let result = limits::run_lines(ffmpeg, &args, &[], limits, cancel, &mut on_line).await;
    if result.is_err() {
        // The job failed: a half-written output must not be taken for a result.
        let _ = tokio::fs::remove_file(output).await;
    }
    result.map(|_| ())
}
