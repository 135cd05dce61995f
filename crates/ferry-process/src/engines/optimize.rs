//! `/image/optimize`, lossless only: PNG is re-encoded by libvips at the highest zlib effort,
//! WebP re-encoded losslessly; JPEG loses only its metadata segments (EXIF, XMP, comments; the
//! ICC profile and Adobe marker stay, so colours do not change) when `preserve_meta_data` is
//! false, its entropy-coded data copied byte for byte. The smaller of input and candidate wins,
//! so the output is never larger. Other types (GIF, SVG, ...) pass through unchanged. Nothing is
//! buffered whole: the JPEG is stripped as a stream, files are copied file to file.

use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use super::EngineError;
use super::detect::Engines;
use super::image::ImageFormat;
use super::image_output::scratch_dir;
use super::limits::{self, Limits};
use super::vips;

/// `/image/optimize`'s parameters that change the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptimizeParams {
    /// Keep EXIF/XMP/comments (Transloadit's default: true).
    pub preserve_meta_data: bool,
}

impl Default for OptimizeParams {
    fn default() -> Self {
        Self {
            preserve_meta_data: true,
        }
    }
}

/// What `/image/optimize` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptimizeOutput {
    /// The output file (`output`, as given).
    pub path: PathBuf,
    /// The format, when it is one libvips read.
    pub format: Option<ImageFormat>,
    /// Input size in bytes.
    pub size_before: u64,
    /// Output size in bytes (never above `size_before`).
    pub size_after: u64,
    /// Its dimensions, when libvips read them (unchanged by optimizing).
    pub width: Option<u64>,
    pub height: Option<u64>,
}

/// Optimizes `input` into `output` (same format, so the caller keeps the input's extension).
/// Streams: the input is never held in memory (a JPEG's marker segments, at most 64 KiB each,
/// are read one at a time and its image data copied through a fixed buffer; the PNG/WebP
/// candidate is written by libvips; the winner is copied file to file).
pub async fn optimize(
    engines: &Engines,
    input: &Path,
    output: &Path,
    params: OptimizeParams,
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<OptimizeOutput, EngineError> {
    let vips_bin = engines.vips()?;
    let size_before = super::probe::regular_file(input).await?;
    limits::check_path(output)?;
    let header = vips::header(engines, input, limits, cancel).await.ok();
    if let Some(header) = &header {
        header.check_pixels(limits)?;
    }
    let format = header
        .as_ref()
        .and_then(|h| ImageFormat::from_loader(&h.loader));
    let scratch = scratch_dir(output)?;
    let candidate = match format {
        Some(ImageFormat::Jpg) if !params.preserve_meta_data => {
            let target = scratch.path().join("candidate.jpg");
            strip_jpeg_file(input, &target).await?.then_some(target)
        }
        Some(f @ (ImageFormat::Png | ImageFormat::Webp))
            if header.as_ref().is_some_and(|h| h.pages.is_none()) =>
        {
            let target = scratch.path().join(format!("candidate.{}", f.extension()));
            let mut options = vec![if f == ImageFormat::Png {
                "compression=9"
            } else {
                "lossless"
            }];
            if !params.preserve_meta_data {
                options.push("strip");
            }
            let spec = format!("{}[{}]", limits::check_path(&target)?, options.join(","));
            let args = vec![
                "copy".into(),
                limits::check_path(input)?.into(),
                spec.into(),
            ];
            let env = vips::env(input, Some(f)).await;
            limits::run(vips_bin, &args, env, limits, cancel).await?;
            Some(target)
        }
        _ => None,
    };
    let mut best = input;
    if let Some(candidate) = &candidate {
        let size = tokio::fs::metadata(candidate)
            .await
            .map_err(|e| EngineError::io("reading the optimized candidate", e))?
            .len();
        if size < size_before {
            best = candidate;
        }
    }
    let size_after = tokio::fs::copy(best, output)
        .await
        .map_err(|e| EngineError::io(format!("writing {}", output.display()), e))?;
    Ok(OptimizeOutput {
        path: output.to_owned(),
        format,
        size_before,
        size_after,
        width: header.as_ref().map(|h| h.width),
        height: header.as_ref().map(|h| h.height),
    })
}

/// Writes `input` without its metadata segments to `target` ([`strip_jpeg_stream`]); false (and
/// `target` left for the scratch directory's removal) when its markers are not well-formed.
async fn strip_jpeg_file(input: &Path, target: &Path) -> Result<bool, EngineError> {
    let (input, target) = (input.to_owned(), target.to_owned());
    tokio::task::spawn_blocking(move || -> Result<bool, EngineError> {
        let reader = std::fs::File::open(&input)
            .map_err(|e| EngineError::io(format!("reading {}", input.display()), e))?;
        let writer = std::fs::File::create(&target)
            .map_err(|e| EngineError::io("writing the optimized candidate", e))?;
        let mut writer = std::io::BufWriter::new(writer);
        let ok = strip_jpeg_stream(&mut std::io::BufReader::new(reader), &mut writer)
            .map_err(|e| EngineError::io("stripping the JPEG", e))?;
        writer
            .flush()
            .map_err(|e| EngineError::io("writing the optimized candidate", e))?;
        Ok(ok)
    })
    .await
    .map_err(|e| EngineError::io("stripping the JPEG", std::io::Error::other(e)))?
}

/// A JPEG without APP1 (EXIF, XMP), APP3..APP13, APP15 and COM segments, or `None` when the
/// markers before the scan are not well-formed (the input is then kept as it is).
pub fn strip_jpeg(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len());
    match strip_jpeg_stream(&mut &bytes[..], &mut out) {
        Ok(true) => Some(out),
        _ => None,
    }
}

/// Copies the JPEG on `reader` to `writer` without its metadata segments (see [`strip_jpeg`]):
/// one marker segment (at most 64 KiB) in memory at a time, then the image data from the start
/// of scan on copied as it is. `Ok(false)` when the markers before the scan are not well-formed
/// or the file ends before its scan; what was written is then to be discarded.
pub fn strip_jpeg_stream(reader: &mut impl Read, writer: &mut impl Write) -> std::io::Result<bool> {
    let mut soi = [0u8; 2];
    if !read_fully(reader, &mut soi)? || soi != [0xFF, 0xD8] {
        return Ok(false);
    }
    writer.write_all(&soi)?;
    let mut segment = Vec::new();
    loop {
        if next(reader)? != Some(0xFF) {
            return Ok(false);
        }
        let mut marker = match next(reader)? {
            Some(m) => m,
            None => return Ok(false),
        };
        // Fill bytes before a marker are dropped.
        while marker == 0xFF {
            marker = match next(reader)? {
                Some(m) => m,
                None => return Ok(false),
            };
        }
        if marker == 0xDA {
            // Start of scan: the rest is image data, copied as is.
            writer.write_all(&[0xFF, 0xDA])?;
            std::io::copy(reader, writer)?;
            return Ok(true);
        }
        let mut len = [0u8; 2];
        if !read_fully(reader, &mut len)? {
            return Ok(false);
        }
        let body = usize::from(u16::from_be_bytes(len));
        if body < 2 {
            return Ok(false);
        }
        segment.resize(body - 2, 0);
        if !read_fully(reader, &mut segment)? {
            return Ok(false);
        }
        // APP0 (JFIF), APP2 (ICC profile) and APP14 (Adobe colour transform) affect decoding.
        let metadata = matches!(marker, 0xE1 | 0xE3..=0xED | 0xEF | 0xFE);
        if !metadata {
            writer.write_all(&[0xFF, marker])?;
            writer.write_all(&len)?;
            writer.write_all(&segment)?;
        }
    }
}

/// The next byte, or `None` at the end.
fn next(reader: &mut impl Read) -> std::io::Result<Option<u8>> {
    let mut byte = [0u8; 1];
    Ok(read_fully(reader, &mut byte)?.then_some(byte[0]))
}

/// Fills `buf`; false when the reader ends first.
fn read_fully(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<bool> {
    match reader.read_exact(buf) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::strip_jpeg;

    #[test]
    fn drops_exif_and_comments_keeps_the_rest() {
        let jpeg = [
            &[0xFF, 0xD8][..],
            &[0xFF, 0xE0, 0x00, 0x04, 0xAA, 0xBB], // APP0 kept
            &[0xFF, 0xE1, 0x00, 0x05, b'E', b'x', b'i'], // APP1 dropped
            &[0xFF, 0xFE, 0x00, 0x03, b'c'],       // COM dropped
            &[0xFF, 0xDA, 0x00, 0x02, 1, 2, 3, 0xFF, 0xD9],
        ]
        .concat();
        let expected = [
            &[0xFF, 0xD8][..],
            &[0xFF, 0xE0, 0x00, 0x04, 0xAA, 0xBB],
            &[0xFF, 0xDA, 0x00, 0x02, 1, 2, 3, 0xFF, 0xD9],
        ]
        .concat();
        assert_eq!(strip_jpeg(&jpeg), Some(expected));
    }

    #[test]
    fn a_segment_running_past_the_end_is_not_stripped() {
        assert_eq!(
            strip_jpeg(&[0xFF, 0xD8, 0xFF, 0xE1, 0x40, 0x00, 1, 2]),
            None
        );
        assert_eq!(strip_jpeg(b"not a jpeg"), None);
    }
}
