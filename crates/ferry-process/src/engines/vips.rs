//! What the image engines share about libvips's command-line tools: the environment every call
//! runs with (`VIPS_BLOCK_UNTRUSTED`, so libvips's untrusted loaders, ImageMagick among them,
//! never see an upload) and the header read (`vipsheader -a`: dimensions, bands, loader, EXIF
//! orientation and date, without decoding pixels), which is where the pixel cap is enforced.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::path::Path;
use std::sync::{LazyLock, Mutex};

use tokio_util::sync::CancellationToken;

use super::EngineError;
use super::detect::Engines;
use super::limits::{self, Limits};

/// Environment for every libvips call: untrusted loaders off, no libvips warnings on stderr
/// beyond errors.
pub(crate) const ENV: [(&str, &str); 1] = [("VIPS_BLOCK_UNTRUSTED", "1")];

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
    let identity = tokio::fs::metadata(path)
        .await
        .ok()
        .map(|m| FileIdentity::of(&m));
    if let Some(cached) = identity.as_ref().and_then(|id| HEADERS.get(id)) {
        return Ok(cached);
    }
    let args: Vec<OsString> = vec!["-a".into(), text.into()];
    let out = limits::run(vipsheader, &args, &ENV, limits, cancel).await?;
    let header = parse_header(&String::from_utf8_lossy(&out.stdout))?;
    if let Some(id) = identity {
        HEADERS.put(id, header.clone());
    }
    Ok(header)
}

/// A file's identity for the header cache: device, inode, length and change time, so a file
/// rewritten in place (or a new file under an old path) is read again.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct FileIdentity {
    dev: u64,
    ino: u64,
    len: u64,
    ctime: (i64, i64),
}

impl FileIdentity {
    fn of(m: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }
}

/// Headers already read, the oldest forgotten first past [`HeaderCache::CAPACITY`].
static HEADERS: LazyLock<HeaderCache> = LazyLock::new(HeaderCache::default);

#[derive(Default)]
struct HeaderCache(Mutex<(HashMap<FileIdentity, Header>, VecDeque<FileIdentity>)>);

impl HeaderCache {
    const CAPACITY: usize = 1024;

    fn get(&self, id: &FileIdentity) -> Option<Header> {
        self.0.lock().ok()?.0.get(id).cloned()
    }

    fn put(&self, id: FileIdentity, header: Header) {
        let Ok(mut guard) = self.0.lock() else { return };
        let (map, order) = &mut *guard;
        if map.insert(id.clone(), header).is_none() {
            order.push_back(id);
        }
        while order.len() > Self::CAPACITY {
            if let Some(old) = order.pop_front() {
                map.remove(&old);
            }
        }
    }
}

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
fn exif_datetime(value: &str) -> Option<String> {
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
    fn a_header_without_dimensions_is_an_error() {
        assert!(parse_header("x: nothing\n").is_err());
    }
}
