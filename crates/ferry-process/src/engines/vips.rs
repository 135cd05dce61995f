//! What the image engines share about libvips's command-line tools: the environment every call
//! runs with (`VIPS_BLOCK_UNTRUSTED`, so libvips's untrusted loaders, ImageMagick among them,
//! never see an upload; and, when the formats built into libvips's core suffice, no dynamic
//! modules at all, see [`env`]) and the header read (`vipsheader -a`: dimensions, bands, loader,
//! EXIF orientation and date, without decoding pixels), which is where the pixel cap is enforced.

use std::ffi::OsString;
use std::path::Path;
use std::sync::LazyLock;

use tokio_util::sync::CancellationToken;

use super::EngineError;
use super::cache::{FileIdentity, PerFile};
use super::detect::Engines;
use super::image::ImageFormat;
use super::limits::{self, Limits};

/// Environment for a libvips call that may need a dynamic module (HEIF/AVIF, PDF, JPEG XL,
/// OpenSlide): untrusted loaders off.
pub(crate) const ENV: [(&str, &str); 1] = [("VIPS_BLOCK_UNTRUSTED", "1")];

/// Environment for a libvips call on formats built into libvips's core (JPEG, PNG, WebP, GIF,
/// TIFF): as [`ENV`], and no dynamic modules. libvips loads every module in
/// `$libdir/vips-modules-X.Y` at start-up (heif, jxl, magick, openslide, poppler on Debian), which
/// is most of a `vips` start (0.04–0.16 s against 0.02 s without); with `VIPSHOME` set, libvips
/// looks under `$VIPSHOME` instead. `/dev/null` is not a directory, so nothing can ever be found,
/// or planted, beneath it: no directory of ours to create, keep empty or clean up.
pub(crate) const CORE_ENV: [(&str, &str); 2] =
    [("VIPS_BLOCK_UNTRUSTED", "1"), ("VIPSHOME", "/dev/null")];

/// The environment for a call reading `input` and writing `output` (`None`: no image written).
/// Only an input libvips's core reads (by its first bytes) and an output its core writes skip
/// the modules; anything else (HEIC, AVIF, PDF, an unknown type) keeps them.
pub(crate) async fn env(
    input: &Path,
    output: Option<ImageFormat>,
) -> &'static [(&'static str, &'static str)] {
    let core_output = output.is_none_or(|f| f != ImageFormat::Avif);
    if core_output && core_input(input).await {
        &CORE_ENV
    } else {
        &ENV
    }
}

/// True when `path` starts like a JPEG, PNG, GIF, WebP or TIFF (BigTIFF too), the formats whose
/// loaders are in libvips's core. A file that cannot be read is not (the full set then reports
/// the error).
async fn core_input(path: &Path) -> bool {
    use tokio::io::AsyncReadExt;
    let mut magic = [0u8; 12];
    let mut read = 0;
    if let Ok(mut file) = tokio::fs::File::open(path).await {
        while read < magic.len() {
            match file.read(&mut magic[read..]).await {
                Ok(0) | Err(_) => break,
                Ok(n) => read += n,
            }
        }
    }
    is_core_magic(&magic[..read])
}

fn is_core_magic(m: &[u8]) -> bool {
    m.starts_with(&[0xFF, 0xD8, 0xFF])
        || m.starts_with(b"\x89PNG\r\n\x1a\n")
        || m.starts_with(b"GIF87a")
        || m.starts_with(b"GIF89a")
        || (m.starts_with(b"RIFF") && m.get(8..12) == Some(b"WEBP"))
        || m.starts_with(b"II*\0")
        || m.starts_with(b"MM\0*")
        || m.starts_with(b"II+\0")
        || m.starts_with(b"MM\0+")
}

/// An image's header, as libvips reads it without decoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Stored width (before orientation).
    pub width: u64,
    /// Stored height.
    pub height: u64,
    /// 1 gray, 2 gray+alpha, 3 colour, 4 colour+alpha (CMYK also 4).
    pub bands: u32,
    /// libvips's loader, e.g. `jpegload`, `pngload`.
    pub loader: String,
    /// EXIF orientation 1..=8, when present.
    pub orientation: Option<u8>,
    /// EXIF DateTimeOriginal (or DateTime) as `YYYY/MM/DD HH:MM:SS`.
    pub exif_date: Option<String>,
    /// Number of pages or frames (animated GIF/WebP, multi-page TIFF), when more than one.
    pub pages: Option<u32>,
}

impl Header {
    /// True when the last band is alpha.
    pub fn has_alpha(&self) -> bool {
        self.bands == 2 || (self.bands == 4 && self.loader != "jpegload")
    }

    /// Width and height as displayed once EXIF orientation is applied.
    pub fn oriented(&self, apply_orientation: bool) -> (u64, u64) {
        match self.orientation {
            Some(5..=8) if apply_orientation => (self.height, self.width),
            _ => (self.width, self.height),
        }
    }

    /// Refuses an image over the pixel cap.
    pub fn check_pixels(&self, limits: &Limits) -> Result<(), EngineError> {
        if self.width.saturating_mul(self.height) > limits.max_pixels {
            return Err(EngineError::TooManyPixels {
                width: self.width,
                height: self.height,
                max: limits.max_pixels,
            });
        }
        Ok(())
    }
}

/// Reads `path`'s header with `vipsheader -a`, once per file: the meta probe and every resize step
/// of an Assembly read the same upload, and each `vipsheader` start costs libvips's start-up
/// (0.1–0.3 s here) for a few lines of text.
pub async fn header(
    engines: &Engines,
    path: &Path,
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<Header, EngineError> {
    let vipsheader = engines.vipsheader()?;
    let text = limits::check_path(path)?;
    let identity = FileIdentity::of(path).await;
    if let Some(cached) = identity.as_ref().and_then(|id| HEADERS.get(id)) {
        return Ok(cached);
    }
    let args: Vec<OsString> = vec!["-a".into(), text.into()];
    let env = env(path, None).await;
    let out = limits::run(vipsheader, &args, env, limits, cancel).await?;
    let header = parse_header(&String::from_utf8_lossy(&out.stdout))?;
    if let Some(id) = identity {
        HEADERS.put(id, header.clone());
    }
    Ok(header)
}

/// Headers already read.
static HEADERS: LazyLock<PerFile<Header>> = LazyLock::new(PerFile::default);

fn parse_header(text: &str) -> Result<Header, EngineError> {
    let mut width = None;
    let mut height = None;
    let mut bands = None;
    let mut loader = None;
    let mut orientation = None;
    let mut exif_original = None;
    let mut exif_date = None;
    let mut pages = None;
    for line in text.lines().skip(1) {
        let Some((key, value)) = line.split_once(": ") else {
            continue;
        };
        let value = value.trim();
        match key {
            "width" => width = value.parse().ok(),
            "height" => height = value.parse().ok(),
            "bands" => bands = value.parse().ok(),
            "vips-loader" => loader = Some(value.to_owned()),
            "orientation" => orientation = value.parse().ok().filter(|o| (1..=8).contains(o)),
            "n-pages" => pages = value.parse().ok().filter(|p| *p > 1),
            "exif-ifd2-DateTimeOriginal" => exif_original = exif_datetime(value),
            "exif-ifd0-DateTime" => exif_date = exif_datetime(value),
            _ => {}
        }
    }
    let (Some(width), Some(height), Some(bands), Some(loader)) = (width, height, bands, loader)
    else {
        return Err(EngineError::bad_output(
            "vipsheader",
            "no width, height, bands or loader",
        ));
    };
    Ok(Header {
        width,
        height,
        bands,
        loader,
        orientation,
        exif_date: exif_original.or(exif_date),
        pages,
    })
}

/// `2021:03:04 05:06:07 (2021:03:04 05:06:07, ASCII, 20 components, 20 bytes)` →
/// `2021/03/04 05:06:07`.
pub(crate) fn exif_datetime(value: &str) -> Option<String> {
    let raw = value.split(" (").next()?.trim();
    let (date, time) = raw.split_once(' ')?;
    let valid = date.len() == 10
        && time.len() == 8
        && date.bytes().all(|b| b.is_ascii_digit() || b == b':')
        && time.bytes().all(|b| b.is_ascii_digit() || b == b':');
    valid.then(|| format!("{} {time}", date.replace(':', "/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_dimensions_orientation_and_date() {
        let text = "x.jpg: 40x20 uchar, 1 band, b-w, jpegload\nwidth: 40\nheight: 20\nbands: 1\n\
                    vips-loader: jpegload\nexif-ifd0-DateTime: 2021:03:04 05:06:07 (2021:03:04 \
                    05:06:07, ASCII, 20 components, 20 bytes)\norientation: 6\n";
        let header = parse_header(text).expect("header");
        assert_eq!((header.width, header.height, header.bands), (40, 20, 1));
        assert_eq!(header.orientation, Some(6));
        assert_eq!(header.oriented(true), (20, 40));
        assert_eq!(header.exif_date.as_deref(), Some("2021/03/04 05:06:07"));
    }

    #[test]
    fn core_formats_are_told_by_their_first_bytes() {
        assert!(is_core_magic(&[0xFF, 0xD8, 0xFF, 0xE0]));
        assert!(is_core_magic(b"\x89PNG\r\n\x1a\n...."));
        assert!(is_core_magic(b"RIFF\0\0\0\0WEBPVP8 "));
        assert!(is_core_magic(b"II*\0"));
        // HEIF/AVIF (an ISO box), PDF, JPEG XL and short files need the modules.
        assert!(!is_core_magic(b"\0\0\0\x1cftypavif"));
        assert!(!is_core_magic(b"%PDF-1.7"));
        assert!(!is_core_magic(&[0xFF, 0x0A]));
        assert!(!is_core_magic(b"RIFF\0\0\0\0WAVE"));
        assert!(!is_core_magic(&[0xFF, 0xD8]));
    }

    #[test]
    fn a_header_without_dimensions_is_an_error() {
        assert!(parse_header("x: nothing\n").is_err());
    }
}
