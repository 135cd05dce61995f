//! `/image/optimize`, lossless only: PNG is re-encoded by libvips at the highest zlib effort,
//! WebP re-encoded losslessly; JPEG loses only its metadata segments (EXIF, XMP, comments; the
//! ICC profile and Adobe marker stay, so colours do not change) when `preserve_meta_data` is
//! false, its entropy-coded data copied byte for byte. The smaller of input and candidate wins,
//! so the output is never larger. Other types (GIF, SVG, ...) pass through unchanged.

use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use super::EngineError;
use super::detect::Engines;
use super::image::{ImageFormat, scratch_dir};
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
    let original = tokio::fs::read(input)
        .await
        .map_err(|e| EngineError::io(format!("reading {}", input.display()), e))?;
    let header = vips::header(engines, input, limits, cancel).await.ok();
    if let Some(header) = &header {
        header.check_pixels(limits)?;
    }
    let format = header
        .as_ref()
        .and_then(|h| ImageFormat::from_loader(&h.loader));
    let candidate = match format {
        Some(ImageFormat::Jpg) if !params.preserve_meta_data => strip_jpeg(&original),
        Some(f @ (ImageFormat::Png | ImageFormat::Webp))
            if header.as_ref().is_some_and(|h| h.pages.is_none()) =>
        {
            let scratch = scratch_dir(output)?;
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
            limits::run(vips_bin, &args, &vips::ENV, limits, cancel).await?;
            Some(
                tokio::fs::read(&target)
                    .await
                    .map_err(|e| EngineError::io("reading the optimized candidate", e))?,
            )
        }
        _ => None,
    };
    let best = match candidate {
        Some(bytes) if (bytes.len() as u64) < size_before => bytes,
        _ => original,
    };
    tokio::fs::write(output, &best)
        .await
        .map_err(|e| EngineError::io(format!("writing {}", output.display()), e))?;
    Ok(OptimizeOutput {
        path: output.to_owned(),
        format,
        size_before,
        size_after: best.len() as u64,
        width: header.as_ref().map(|h| h.width),
        height: header.as_ref().map(|h| h.height),
    })
}

/// A JPEG without APP1 (EXIF, XMP), APP3..APP13, APP15 and COM segments, or `None` when the
/// markers before the scan are not well-formed (the input is then kept as it is).
pub fn strip_jpeg(bytes: &[u8]) -> Option<Vec<u8>> {
    if bytes.get(..2)? != [0xFF, 0xD8] {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(&bytes[..2]);
    let mut at = 2;
    loop {
        if *bytes.get(at)? != 0xFF {
            return None;
        }
        let marker = *bytes.get(at + 1)?;
        if marker == 0xFF {
            // Fill byte before a marker.
            at += 1;
            continue;
        }
        if marker == 0xDA {
            // Start of scan: the rest is image data, copied as is.
            out.extend_from_slice(&bytes[at..]);
            return Some(out);
        }
        let len = usize::from(u16::from_be_bytes([
            *bytes.get(at + 2)?,
            *bytes.get(at + 3)?,
        ]));
        if len < 2 {
            return None;
        }
        let end = at.checked_add(2 + len)?;
        let segment = bytes.get(at..end)?;
        // APP0 (JFIF), APP2 (ICC profile) and APP14 (Adobe colour transform) affect decoding.
        let metadata = matches!(marker, 0xE1 | 0xE3..=0xED | 0xEF | 0xFE);
        if !metadata {
            out.extend_from_slice(segment);
        }
        at = end;
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
