//! `/image/resize` in process, for the common case: a JPEG upload (8-bit gray or YCbCr, no colour
//! profile or an sRGB one) resized by the one-operation plan (fit, fillcrop centred, stretch,
//! min_fit: a single `vips thumbnail`) to JPEG or WebP. Everything else, and any input this path
//! cannot read, goes to libvips's command line as before ([`resize`] answers `None`).
//!
//! The header is read here ([`jpeg`]) and goes through the same pixel cap, format choice and plan
//! as the libvips path, so refusals and output sizes are the same; the size `vips thumbnail`
//! would write is computed by [`geometry`]. The work: decode with DCT scaling to the smallest size still at least
//! the target (shrink-on-load), shared with the Assembly's other resize steps of the same
//! upload ([`shared`]), EXIF orientation applied, Lanczos3 resample, encode, write. It runs on a
//! thread per core ([`pool`]), inside the Assembly worker that called it; the cancel token is
//! checked between those phases, the step's time limit bounds the wait, and a panic in a
//! decoder ends only its job: the job then falls back to libvips, whose answer (an output, or
//! the documented error for a corrupt file) is what the caller gets.

mod encode;
mod exif;
pub(crate) mod geometry;
mod jpeg;
mod pixels;
mod pool;
mod shared;

use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use self::encode::Metadata;
use self::geometry::Size;
use self::jpeg::JpegInfo;
use super::EngineError;
use super::cache::FileIdentity;
use super::detect::Engines;
use super::image::{ImageFormat, ImageOutput, ResizeParams, output_format, with_extension};
use super::image_plan::{Op, plan};
use super::limits::Limits;
use super::vips::Header;

/// The name errors of this path carry.
pub(crate) const PROGRAM: &str = "ferry-image";

/// Largest input read into memory here; a larger file goes to libvips, which streams.
const MAX_INPUT: u64 = 256 * 1024 * 1024;

/// Resizes `input` in process when this path takes the job: `Ok(None)` when it does not (the
/// caller then runs libvips), an error where libvips's path would refuse the same job (pixel
/// cap, output format, plan) or when the job was canceled or ran out of time.
pub(crate) async fn resize(
    engines: &Engines,
    input: &Path,
    output_base: &Path,
    params: &ResizeParams,
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<Option<ImageOutput>, EngineError> {
    let Some(data) = read_jpeg(input).await? else {
        return Ok(None);
    };
    let info = match jpeg::read(&data) {
        Ok(info) => info,
        Err(why) => return declined(&why),
    };
    let header = info.header();
    header.check_pixels(limits)?;
    let format = output_format(params.format, &header, &engines.image_formats)?;
    let output = with_extension(output_base, format)?;
    let ops = plan(&header, params, format)?;
    let job = match Job::new(info, &header, params, format, &ops) {
        Ok(job) => job,
        Err(why) => return declined(why),
    };
    let file = FileIdentity::of(input).await;
    let stop = cancel.child_token();
    let max_bytes = usize::try_from(limits.max_pixels.saturating_mul(4)).unwrap_or(usize::MAX);
    let task = {
        let (stop, output) = (stop.clone(), output.clone());
        pool::run(move || job.run(data, file, &output, &stop, max_bytes))
    };
    let joined = tokio::select! {
        joined = task => joined,
        () = cancel.cancelled() => {
            return Err(EngineError::Canceled { program: PROGRAM.into() });
        }
        () = tokio::time::sleep(limits.time_limit) => {
            stop.cancel();
            return Err(EngineError::TimedOut { program: PROGRAM.into(), limit: limits.time_limit });
        }
    };
    let done = match joined {
        Ok(Ok(Some(size))) => size,
        Ok(Ok(None)) => return Ok(None),
        Ok(Err(e)) => {
            let _ = tokio::fs::remove_file(&output).await;
            return Err(e);
        }
        Err(panic) => {
            tracing::warn!(input = %input.display(), error = %panic, "in-process resize failed; libvips takes the job");
            let _ = tokio::fs::remove_file(&output).await;
            return Ok(None);
        }
    };
    Ok(Some(ImageOutput {
        path: output,
        format,
        width: done.0,
        height: done.1,
    }))
}

/// The header of the JPEG at `path` read here, as `vipsheader` gives it: `None` when it is not a
/// JPEG or its header is not within the first [`HEADER_READ`] bytes (libvips then reads it).
pub(crate) async fn jpeg_header(path: &Path) -> Option<Header> {
    use tokio::io::AsyncReadExt;
    let file = tokio::fs::File::open(path).await.ok()?;
    let mut head = Vec::new();
    file.take(HEADER_READ).read_to_end(&mut head).await.ok()?;
    jpeg::read(&head).ok().map(|info| info.header())
}

/// How much of a file [`jpeg_header`] reads: the metadata before the first scan of a camera's
/// JPEG is well under this (EXIF and its thumbnail, XMP, an ICC profile).
const HEADER_READ: u64 = 1024 * 1024;

fn declined<T>(why: &str) -> Result<Option<T>, EngineError> {
    tracing::debug!(why, "image resize goes to libvips");
    Ok(None)
}

/// The whole file when it starts like a JPEG and is small enough to hold.
async fn read_jpeg(input: &Path) -> Result<Option<Vec<u8>>, EngineError> {
    use tokio::io::AsyncReadExt;
    let io = |e| EngineError::io(format!("reading {}", input.display()), e);
    let mut file = tokio::fs::File::open(input).await.map_err(io)?;
    let len = file.metadata().await.map_err(io)?.len();
    let mut magic = [0u8; 3];
    if !(3..=MAX_INPUT).contains(&len) {
        return Ok(None);
    }
    file.read_exact(&mut magic).await.map_err(io)?;
    if magic != [0xFF, 0xD8, 0xFF] {
        return Ok(None);
    }
    let mut data = magic.to_vec();
    file.read_to_end(&mut data).await.map_err(io)?;
    Ok(Some(data))
}

/// A resize this path does, all numbers decided.
#[derive(Debug)]
struct Job {
    /// The orientation applied to the pixels (1: none).
    orientation: u8,
    /// Decode at 1/denominator.
    denominator: u64,
    /// Bytes of that decode.
    decoded_bytes: usize,
    /// The size after resampling.
    resized: (u32, u32),
    /// The centred crop (left, top, width, height), for fillcrop.
    crop: Option<(u32, u32, u32, u32)>,
    format: ImageFormat,
    quality: u8,
    progressive: bool,
    metadata: Metadata,
}

impl Job {
    /// The job, or why this path leaves it to libvips.
    fn new(
        info: JpegInfo,
        header: &Header,
        params: &ResizeParams,
        format: ImageFormat,
        ops: &[Op],
    ) -> Result<Job, &'static str> {
        if info.precision != 8 || !matches!(info.sof, 0xC0..=0xC2) {
            return Err("not an 8-bit Huffman-coded JPEG");
        }
        if !matches!(info.components, 1 | 3) {
            return Err("not gray or YCbCr (CMYK)");
        }
        if !info.srgb() {
            return Err("a colour profile other than sRGB");
        }
        let [
            Op::Thumbnail {
                width,
                height,
                size,
                crop_centre,
                auto_orient,
            },
        ] = ops
        else {
            return Err("a plan of more than one thumbnail");
        };
        let size = Size::parse(size).ok_or("a --size this path does not do")?;
        if !matches!(format, ImageFormat::Jpg | ImageFormat::Webp) {
            return Err("an output format written by libvips only");
        }
        let orientation = match header.orientation {
            Some(o) if *auto_orient => o,
            _ => 1,
        };
        let metadata = if params.strip {
            Metadata::default()
        } else {
            Metadata {
                exif: info.exif.as_deref().map(|tiff| match orientation {
                    1 => tiff.to_vec(),
                    _ => info.exif_fields.upright(tiff),
                }),
                xmp: info.xmp.clone(),
                icc: info.icc.clone(),
            }
        };
        if format == ImageFormat::Webp && !metadata.is_empty() {
            return Err("metadata to carry into a WebP");
        }
        let oriented = header.oriented(*auto_orient);
        let (rw, rh) = geometry::resized(oriented, (*width, *height), size, *crop_centre, true);
        let crop = crop_centre.then(|| geometry::crop_to((rw, rh), (*width, *height)));
        let stored_target = if orientation >= 5 { (rh, rw) } else { (rw, rh) };
        let stored = (header.width, header.height);
        let denominator = geometry::decode_denominator(stored, stored_target);
        let decoded_bytes = stored.0.div_ceil(denominator) as usize
            * stored.1.div_ceil(denominator) as usize
            * usize::from(info.components);
        let side = |v: u64| u32::try_from(v).map_err(|_| "a side over u32");
        Ok(Job {
            orientation,
            denominator,
            decoded_bytes,
            resized: (side(rw)?, side(rh)?),
            crop: match crop {
                Some((l, t, w, h)) => Some((side(l)?, side(t)?, side(w)?, side(h)?)),
                None => None,
            },
            format,
            quality: params.quality,
            progressive: params.progressive,
            metadata,
        })
    }

    /// Decodes, resamples, encodes and writes `output`: the written size, `None` when a phase
    /// failed on this input (libvips then takes the job), an error when stopped.
    fn run(
        self,
        data: Vec<u8>,
        file: Option<FileIdentity>,
        output: &PathBuf,
        stop: &CancellationToken,
        max_bytes: usize,
    ) -> Result<Option<(u64, u64)>, EngineError> {
        let check = || match stop.is_cancelled() {
            true => Err(EngineError::Canceled {
                program: PROGRAM.into(),
            }),
            false => Ok(()),
        };
        let fell_back = |phase: &str, why: String| {
            tracing::debug!(
                phase,
                why,
                "in-process resize gave up; libvips takes the job"
            );
            Ok(None)
        };
        check()?;
        let (d, o) = (self.denominator, self.orientation);
        let decoded = shared::decoded(file, o, d, self.decoded_bytes, || {
            pixels::decode(&data, d, max_bytes).map(|p| pixels::orient(p, o))
        });
        drop(data);
        let decoded = match decoded {
            Ok(p) => p,
            Err(why) => return fell_back("decode", why),
        };
        check()?;
        let mut out = match pixels::resize(&decoded, self.resized.0, self.resized.1) {
            Ok(p) => p,
            Err(why) => return fell_back("resize", why),
        };
        drop(decoded);
        if let Some((left, top, w, h)) = self.crop {
            out = pixels::crop(out, left, top, w, h);
        }
        let (width, height) = (u64::from(out.width), u64::from(out.height));
        check()?;
        let bytes = match self.format {
            ImageFormat::Webp => encode::webp(out, self.quality),
            _ => encode::jpeg(&out, self.quality, self.progressive, &self.metadata),
        };
        let bytes = match bytes {
            Ok(b) => b,
            Err(why) => return fell_back("encode", why),
        };
        check()?;
        std::fs::write(output, &bytes)
            .map_err(|e| EngineError::io(format!("writing {}", output.display()), e))?;
        if stop.is_cancelled() {
            let _ = std::fs::remove_file(output);
            return check().map(|()| None);
        }
        Ok(Some((width, height)))
    }
}
