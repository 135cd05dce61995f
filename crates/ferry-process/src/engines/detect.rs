//! Which engines this machine has, found once at startup: the programs (ffmpeg, ffprobe, vips,
//! vipsheader), ffmpeg's encoders and the image formats libvips can write. A robot whose engine
//! is missing is disabled with the message [`Engines::missing`] gives; a format or codec the
//! installed build lacks is refused per request with [`EngineError::Unsupported`].

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use super::EngineError;
use super::image::ImageFormat;
use super::limits::{self, Limits};

/// The engine programs and what they can do. Build it with [`Engines::detect`]; tests and callers
/// with unusual installs can fill the paths themselves and call [`Engines::detect_at`].
#[derive(Debug, Clone, Default)]
pub struct Engines {
    /// `ffmpeg`, when it runs.
    pub ffmpeg: Option<PathBuf>,
    /// `ffprobe`, when it runs.
    pub ffprobe: Option<PathBuf>,
    /// libvips's `vips` command, when it runs.
    pub vips: Option<PathBuf>,
    /// libvips's `vipsheader`, when it runs.
    pub vipsheader: Option<PathBuf>,
    /// ffmpeg's version line, e.g. `5.1.9-0+deb12u1`.
    pub ffmpeg_version: Option<String>,
    /// libvips's version, e.g. `8.14.1`.
    pub vips_version: Option<String>,
    /// ffmpeg encoders present (`libx264`, `libvpx-vp9`, `libopus`, ...).
    pub encoders: BTreeSet<String>,
    /// Image formats libvips can write here.
    pub image_formats: BTreeSet<ImageFormat>,
}

/// The programs looked up on `PATH` by [`Engines::detect`].
pub const PROGRAMS: [&str; 4] = ["ffmpeg", "ffprobe", "vips", "vipsheader"];

impl Engines {
    /// Finds the engines on `PATH`.
    pub async fn detect(limits: &Limits) -> Engines {
        Self::detect_at(
            Path::new("ffmpeg"),
            Path::new("ffprobe"),
            Path::new("vips"),
            Path::new("vipsheader"),
            limits,
        )
        .await
    }

    /// Finds the engines at the given paths (bare names are looked up on `PATH`).
    pub async fn detect_at(
        ffmpeg: &Path,
        ffprobe: &Path,
        vips: &Path,
        vipsheader: &Path,
        limits: &Limits,
    ) -> Engines {
        let cancel = CancellationToken::new();
        let mut engines = Engines::default();
        if let Ok(out) = run_text(ffmpeg, &["-hide_banner", "-version"], limits, &cancel).await {
            engines.ffmpeg_version = out
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("ffmpeg version "))
                .and_then(|l| l.split_whitespace().next())
                .map(str::to_owned);
            engines.ffmpeg = Some(ffmpeg.to_owned());
            if let Ok(list) =
                run_text(ffmpeg, &["-hide_banner", "-encoders"], limits, &cancel).await
            {
                engines.encoders = parse_encoders(&list);
            }
        }
        if run_text(ffprobe, &["-hide_banner", "-version"], limits, &cancel)
            .await
            .is_ok()
        {
            engines.ffprobe = Some(ffprobe.to_owned());
        }
        if let Ok(out) = run_text(vips, &["--version"], limits, &cancel).await {
            engines.vips_version = out.trim().strip_prefix("vips-").map(str::to_owned);
            engines.vips = Some(vips.to_owned());
            if let Ok(list) = run_text(vips, &["-l", "foreign"], limits, &cancel).await {
                engines.image_formats = parse_savers(&list);
            }
            // heifsave exists without an AV1 encoder in some builds: write one tiny AVIF to know.
            if engines.image_formats.contains(&ImageFormat::Avif)
                && !writes_avif(vips, limits, &cancel).await
            {
                engines.image_formats.remove(&ImageFormat::Avif);
            }
        }
        if run_text(vipsheader, &["--version"], limits, &cancel)
            .await
            .is_ok()
        {
            engines.vipsheader = Some(vipsheader.to_owned());
        }
        engines
    }

    /// One line per missing engine, naming the robots it disables (for the startup log).
    pub fn missing(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.ffmpeg.is_none() || self.ffprobe.is_none() {
            lines.push(
                "ffmpeg/ffprobe not found: /video/encode, /video/thumbs and /audio/encode are disabled \
                 and files get no media meta (install ffmpeg)"
                    .to_owned(),
            );
        }
        if self.vips.is_none() || self.vipsheader.is_none() {
            lines.push(
                "libvips (vips, vipsheader) not found: /image/resize and /image/optimize are disabled \
                 (install libvips-tools)"
                    .to_owned(),
            );
        }
        lines
    }

    pub(crate) fn ffmpeg(&self) -> Result<&Path, EngineError> {
        self.ffmpeg
            .as_deref()
            .ok_or(EngineError::Missing { engine: "ffmpeg" })
    }

    pub(crate) fn ffprobe(&self) -> Result<&Path, EngineError> {
        self.ffprobe
            .as_deref()
            .ok_or(EngineError::Missing { engine: "ffprobe" })
    }

    pub(crate) fn vips(&self) -> Result<&Path, EngineError> {
        self.vips
            .as_deref()
            .ok_or(EngineError::Missing { engine: "vips" })
    }

    pub(crate) fn vipsheader(&self) -> Result<&Path, EngineError> {
        self.vipsheader.as_deref().ok_or(EngineError::Missing {
            engine: "vipsheader",
        })
    }

    /// Refuses an ffmpeg encoder this build lacks.
    pub(crate) fn require_encoder(&self, encoder: &str) -> Result<(), EngineError> {
        if self.encoders.contains(encoder) {
            Ok(())
        } else {
            Err(EngineError::Unsupported(format!(
                "the installed ffmpeg has no {encoder} encoder"
            )))
        }
    }
}

async fn run_text(
    program: &Path,
    args: &[&str],
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<String, EngineError> {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    let out = limits::run(program, &args, &[], limits, cancel).await?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

async fn writes_avif(vips: &Path, limits: &Limits, cancel: &CancellationToken) -> bool {
    let Ok(dir) = tempfile::tempdir() else {
        return false;
    };
    let Some(target) = dir
        .path()
        .join("probe.avif")
        .to_str()
        .map(|p| format!("{p}[compression=av1]"))
    else {
        return false;
    };
    let args: Vec<OsString> = vec!["black".into(), target.into(), "8".into(), "8".into()];
    limits::run(vips, &args, &super::vips::ENV, limits, cancel)
        .await
        .is_ok()
}

/// `ffmpeg -encoders` lines look like ` V....D libx264  libx264 H.264 ...`.
fn parse_encoders(list: &str) -> BTreeSet<String> {
    list.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let flags = words.next()?;
            let name = words.next()?;
            (flags.len() == 6 && flags.chars().all(|c| c == '.' || c.is_ascii_uppercase()))
                .then(|| name.to_owned())
        })
        .collect()
}

/// `vips -l foreign` names each saver class, e.g. `VipsForeignSaveWebpFile (webpsave), ...`.
fn parse_savers(list: &str) -> BTreeSet<ImageFormat> {
    ImageFormat::ALL
        .into_iter()
        .filter(|format| list.contains(&format!("({})", format.saver())))
        .collect()
}
