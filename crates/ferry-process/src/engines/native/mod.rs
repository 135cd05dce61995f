//! `/image/resize` in process, for the common case: a JPEG upload (8-bit gray or YCbCr, no colour
//! profile or an sRGB one) resized by the one-operation plan (fit, fillcrop centred, stretch,
//! min_fit: a single `vips thumbnail`) to JPEG or WebP. Everything else, and any input this path
//! cannot read, goes to libvips's command line as before ([`resize`] answers `None`).
//!
//! The header is read here ([`jpeg`]) and goes through the same pixel cap, format choice and plan
//! as the libvips path, so refusals and output sizes are the same; the size `vips thumbnail`
//! would write is computed by [`geometry`]. The work: decode with DCT scaling to the smallest
//! size still at least the target (shrink-on-load) of this step and of the Assembly's other
//! resize steps over the same upload, once for all of them ([`shared`]), EXIF orientation
//! applied, Lanczos3 resample, encode, write. It runs on a thread per core ([`pool`]), inside
//! the Assembly worker that called it (a step waiting for another's decode waits off those
//! threads); the cancel token is
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

use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use self::encode::Metadata;
use self::geometry::Size;
use self::jpeg::JpegInfo;
use self::shared::{Claim, Decoded, Maker};
use super::EngineError;
use super::cache::FileIdentity;
use super::detect::Engines;
use super::image::{ImageFormat, ImageOutput, ResizeParams};
use super::image_output::{output_format, with_extension};
use super::image_plan::{Op, plan};
use super::limits::Limits;
use super::vips::Header;

/// The name errors of this path carry.
pub(crate) const PROGRAM: &str = "ferry-image";

/// Largest input read into memory here; a larger file goes to libvips, which streams.
const MAX_INPUT: u64 = 256 * 1024 * 1024;

/// Resizes `input` in process when this path takes the job: `Ok(None)` when it does not (the
/// caller then runs libvips), an error where libvips's path would refuse the same job (pixel
/// cap, output format, plan) or when the job was canceled or ran out of time. `siblings` are
/// the other resize steps over the same upload that run beside this one: the upload is decoded
/// once, at the size the largest of them needs, and shared ([`shared`]).
pub(crate) async fn resize(
    engines: &Engines,
    input: &Path,
    output_base: &Path,
    params: &ResizeParams,
    siblings: &[ResizeParams],
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<Option<ImageOutput>, EngineError> {
    let Some((info, data)) = read_jpeg(input).await? else {
        return Ok(None);
    };
    let header = info.header();
    header.check_pixels(limits)?;
    let format = output_format(params.format, &header, &engines.image_formats)?;
    let output = with_extension(output_base, format)?;
    let ops = plan(&header, params, format)?;
    let mut job = match Job::new(&info, &header, params, format, &ops) {
        Ok(job) => job,
        Err(why) => return declined(why),
    };
    for sibling in siblings {
        if let Some(d) = sibling_denominator(engines, &info, &header, sibling, job.orientation) {
            job.decode_at_most(d, &info);
        }
    }
    let file = FileIdentity::of(input).await;
    let claim = shared::claim(file, job.orientation, job.denominator, job.decoded_bytes);
    let stop = cancel.child_token();
    let max_bytes = usize::try_from(limits.max_pixels.saturating_mul(4)).unwrap_or(usize::MAX);
    let work = async {
        // Waiting for another step's decode takes no image thread.
        let source = match claim {
            Claim::Shared(slot) => match shared::made(slot).await {
                Some(decoded) => {
                    drop(data);
                    Source::Decoded(decoded)
                }
                None => Source::Decode(Maker::private(), data),
            },
            Claim::Make(maker) => Source::Decode(maker, data),
        };
        let (stop, input, output) = (stop.clone(), input.to_owned(), output.clone());
        pool::run(move || job.run(source, &input, &output, &stop, max_bytes)).await
    };
    let joined = tokio::select! {
        joined = work => joined,
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

/// The decode denominator a sibling step would take in process, when it would decode the same
/// way (`orientation`).
fn sibling_denominator(
    engines: &Engines,
    info: &JpegInfo,
    header: &Header,
    params: &ResizeParams,
    orientation: u8,
) -> Option<u64> {
    let format = output_format(params.format, header, &engines.image_formats).ok()?;
    let ops = plan(header, params, format).ok()?;
    let job = Job::new(info, header, params, format, &ops).ok()?;
    (job.orientation == orientation).then_some(job.denominator)
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

/// How much of an input is read for its header before deciding; the whole file is read when
/// the header runs past it.
const HEAD_READ: u64 = 256 * 1024;

/// The header of `input` when it starts like a JPEG and is small enough to hold, with the whole
/// file when it was read for that (the step that decodes reads it otherwise, on its thread).
async fn read_jpeg(input: &Path) -> Result<Option<(JpegInfo, Option<Vec<u8>>)>, EngineError> {
    use tokio::io::AsyncReadExt;
    let io = |e| EngineError::io(format!("reading {}", input.display()), e);
    let mut file = tokio::fs::File::open(input).await.map_err(io)?;
    let len = file.metadata().await.map_err(io)?.len();
    if !(3..=MAX_INPUT).contains(&len) {
        return Ok(None);
    }
    let mut head = Vec::new();
    (&mut file)
        .take(HEAD_READ)
        .read_to_end(&mut head)
        .await
        .map_err(io)?;
    if !head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Ok(None);
    }
    let whole = head.len() as u64 >= len;
    match jpeg::read(&head) {
        Ok(info) => Ok(Some((info, whole.then_some(head)))),
        Err(why) if whole => declined(&why),
        Err(_) => {
            // A header longer than the head read (a large ICC profile or EXIF thumbnail).
            file.read_to_end(&mut head).await.map_err(io)?;
            match jpeg::read(&head) {
                Ok(info) => Ok(Some((info, Some(head)))),
                Err(why) => declined(&why),
            }
        }
    }
}

/// The bytes of `input`, read by the step that decodes it.
fn read_input(input: &Path) -> Result<Vec<u8>, EngineError> {
    use std::io::Read;
    let io = |e| EngineError::io(format!("reading {}", input.display()), e);
    let mut data = Vec::new();
    std::fs::File::open(input)
        .map_err(io)?
        .take(MAX_INPUT)
        .read_to_end(&mut data)
        .map_err(io)?;
    Ok(data)
}

/// Where a job's pixels come from.
#[derive(Debug)]
enum Source {
    /// Another step's decode.
    Decoded(Decoded),
    /// This job decodes (the file's bytes when already read), for the steps waiting on `Maker`.
    Decode(Maker, Option<Vec<u8>>),
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
        info: &JpegInfo,
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
        let decoded_bytes = decoded_bytes(info, denominator);
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

    /// Decodes at 1/`denominator` or larger, when that decode still fits the shared budget: a
    /// sibling step needs the larger one, and the resample from it costs a fraction of a
    /// second decode (a 12 MP JPEG: 53 ms decoded at 1/8, its 1/2 decode resampled to 320 px
    /// in a few).
    fn decode_at_most(&mut self, denominator: u64, info: &JpegInfo) {
        let bytes = decoded_bytes(info, denominator);
        if denominator < self.denominator && bytes <= shared::BUDGET {
            self.denominator = denominator;
            self.decoded_bytes = bytes;
        }
    }

    /// Decodes (unless another step did), resamples, encodes and writes `output`: the written
    /// size, `None` when a phase failed on this input (libvips then takes the job), an error
    /// when stopped.
    fn run(
        self,
        source: Source,
        input: &Path,
        output: &Path,
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
        let decoded = match source {
            Source::Decoded(decoded) => decoded,
            Source::Decode(maker, data) => {
                let data = match data {
                    Some(data) => data,
                    None => read_input(input)?,
                };
                let decoded = pixels::decode(&data, d, max_bytes).map(|p| pixels::orient(p, o));
                drop(data);
                maker.publish(decoded.map(Arc::new))
            }
        };
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

/// Bytes of `info`'s image decoded at 1/`denominator`.
fn decoded_bytes(info: &JpegInfo, denominator: u64) -> usize {
    u64::from(info.width).div_ceil(denominator) as usize
        * u64::from(info.height).div_ceil(denominator) as usize
        * usize::from(info.components)
}

#[cfg(test)]
mod tests;
