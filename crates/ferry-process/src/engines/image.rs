//! `/image/resize`: in process where [`super::native`] takes the job (a JPEG to JPEG or WebP by
//! a one-operation plan), otherwise on libvips's command line: the header is read first (pixel
//! cap, orientation, alpha), then a short plan of `vips` operations runs, one process each, the
//! last one saving straight to the output with the format's options. The common case (fit,
//! fillcrop centred, stretch, min_fit) is a single `vips thumbnail`, which shrinks on load.
//! libvips runs without its dynamic modules unless the input or the output needs one
//! ([`vips::env`]). Intermediates are uncompressed TIFFs in a temporary directory beside the
//! output (libvips's own `.v` loader is blocked with the other untrusted loaders).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::EngineError;
use super::detect::Engines;
use super::image_output::{output_format, scratch_dir, with_extension};
use super::image_plan::{plan, save_options};
use super::limits::{self, Limits};
use super::vips;

/// Output formats of `/image/resize` (each needs its libvips saver).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    /// JPEG (`jpegsave`).
    Jpg,
    /// PNG (`pngsave`).
    Png,
    /// WebP (`webpsave`).
    Webp,
    /// AVIF (`heifsave` with the AV1 encoder).
    Avif,
    /// GIF (`gifsave`, libvips ≥ 8.12).
    Gif,
    /// TIFF (`tiffsave`).
    Tiff,
}

impl ImageFormat {
    /// Every format, in a stable order.
    pub const ALL: [ImageFormat; 6] = [
        Self::Jpg,
        Self::Png,
        Self::Webp,
        Self::Avif,
        Self::Gif,
        Self::Tiff,
    ];

    /// Parses Transloadit's `format` value (`jpg`, `jpeg`, `png`, `webp`, `avif`, `gif`, `tif`, `tiff`).
    pub fn parse(text: &str) -> Result<Self, EngineError> {
        Ok(match text.to_ascii_lowercase().as_str() {
            "jpg" | "jpeg" => Self::Jpg,
            "png" => Self::Png,
            "webp" => Self::Webp,
            "avif" => Self::Avif,
            "gif" => Self::Gif,
            "tif" | "tiff" => Self::Tiff,
            other => {
                return Err(EngineError::Invalid(format!(
                    "format {other:?} is not supported"
                )));
            }
        })
    }

    /// The file extension (no dot).
    pub fn extension(self) -> &'static str {
        match self {
            Self::Jpg => "jpg",
            Self::Png => "png",
            Self::Webp => "webp",
            Self::Avif => "avif",
            Self::Gif => "gif",
            Self::Tiff => "tiff",
        }
    }

    /// The MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            Self::Jpg => "image/jpeg",
            Self::Png => "image/png",
            Self::Webp => "image/webp",
            Self::Avif => "image/avif",
            Self::Gif => "image/gif",
            Self::Tiff => "image/tiff",
        }
    }

    /// libvips's saver for it.
    pub(crate) fn saver(self) -> &'static str {
        match self {
            Self::Jpg => "jpegsave",
            Self::Png => "pngsave",
            Self::Webp => "webpsave",
            Self::Avif => "heifsave",
            Self::Gif => "gifsave",
            Self::Tiff => "tiffsave",
        }
    }

    /// The format a libvips loader reads, when it is one we write.
    pub(crate) fn from_loader(loader: &str) -> Option<Self> {
        Some(
            match loader
                .trim_end_matches("_source")
                .trim_end_matches("_buffer")
            {
                "jpegload" => Self::Jpg,
                "pngload" => Self::Png,
                "webpload" => Self::Webp,
                "heifload" => Self::Avif,
                "gifload" => Self::Gif,
                "tiffload" => Self::Tiff,
                _ => return None,
            },
        )
    }

    pub(crate) fn has_alpha_channel(self) -> bool {
        !matches!(self, Self::Jpg)
    }
}

/// Transloadit's `resize_strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResizeStrategy {
    /// The image fits inside width×height, aspect kept (the default).
    #[default]
    Fit,
    /// Both sides exact; the excess is cropped around `gravity`.
    FillCrop,
    /// The smaller side fits; the result covers width×height, aspect kept, nothing cropped.
    MinFit,
    /// Fit, then padded to exactly width×height with `background`.
    Pad,
    /// Both sides exact, aspect ignored.
    Stretch,
    /// Cut `crop`'s area out, then fit it into width×height when given.
    Crop,
}

impl ResizeStrategy {
    /// Parses `fit`, `fillcrop`, `min_fit`, `pad`, `stretch`, `crop`.
    pub fn parse(text: &str) -> Result<Self, EngineError> {
        Ok(match text {
            "fit" => Self::Fit,
            "fillcrop" => Self::FillCrop,
            "min_fit" => Self::MinFit,
            "pad" => Self::Pad,
            "stretch" => Self::Stretch,
            "crop" => Self::Crop,
            other => {
                return Err(EngineError::Invalid(format!(
                    "resize_strategy {other:?} is not supported"
                )));
            }
        })
    }
}

/// Transloadit's `gravity` (where fillcrop keeps its area).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Gravity {
    /// The middle (default).
    #[default]
    Center,
    /// `top`.
    Top,
    /// `bottom`.
    Bottom,
    /// `left`.
    Left,
    /// `right`.
    Right,
    /// `top-left`.
    TopLeft,
    /// `top-right`.
    TopRight,
    /// `bottom-left`.
    BottomLeft,
    /// `bottom-right`.
    BottomRight,
}

impl Gravity {
    /// Parses `center`, `top`, `bottom`, `left`, `right`, `top-left`, `top-right`,
    /// `bottom-left`, `bottom-right`.
    pub fn parse(text: &str) -> Result<Self, EngineError> {
        Ok(match text {
            "center" | "centre" => Self::Center,
            "top" => Self::Top,
            "bottom" => Self::Bottom,
            "left" => Self::Left,
            "right" => Self::Right,
            "top-left" => Self::TopLeft,
            "top-right" => Self::TopRight,
            "bottom-left" => Self::BottomLeft,
            "bottom-right" => Self::BottomRight,
            other => {
                return Err(EngineError::Invalid(format!(
                    "gravity {other:?} is not supported"
                )));
            }
        })
    }

    pub(crate) fn compass(self) -> &'static str {
        match self {
            Self::Center => "centre",
            Self::Top => "north",
            Self::Bottom => "south",
            Self::Left => "west",
            Self::Right => "east",
            Self::TopLeft => "north-west",
            Self::TopRight => "north-east",
            Self::BottomLeft => "south-west",
            Self::BottomRight => "south-east",
        }
    }
}

/// A colour: Transloadit's `background` (`#RGB`, `#RRGGBB`, `#RRGGBBAA`, `none`, `transparent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgba(pub [u8; 4]);

impl Rgba {
    /// White, Transloadit's default background.
    pub const WHITE: Rgba = Rgba([255, 255, 255, 255]);

    /// Parses a colour; `none` and `transparent` are fully transparent.
    pub fn parse(text: &str) -> Result<Self, EngineError> {
        let bad =
            || EngineError::Invalid(format!("background {text:?} is not a #RRGGBB[AA] colour"));
        if matches!(text, "none" | "transparent") {
            return Ok(Rgba([0, 0, 0, 0]));
        }
        let hex = text.strip_prefix('#').unwrap_or(text);
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let digits: Vec<u8> = match hex.len() {
            3 | 4 => hex.bytes().flat_map(|b| [b, b]).collect(),
            6 | 8 => hex.bytes().collect(),
            _ => return Err(bad()),
        };
        let mut out = [255u8; 4];
        for (i, pair) in digits.chunks(2).enumerate() {
            let pair = std::str::from_utf8(pair).map_err(|_| bad())?;
            out[i] = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
        }
        Ok(Rgba(out))
    }
}

/// Transloadit's `crop` in pixels of the (oriented) input: the area from (x1,y1) to (x2,y2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CropArea {
    /// Left edge.
    pub x1: u32,
    /// Top edge.
    pub y1: u32,
    /// Right edge (exclusive).
    pub x2: u32,
    /// Bottom edge (exclusive).
    pub y2: u32,
}

/// `/image/resize`'s parameters, checked. `Default` is Transloadit's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct ResizeParams {
    /// Target width (1..=25000); default: the input's.
    pub width: Option<u32>,
    /// Target height (1..=25000); default: the input's.
    pub height: Option<u32>,
    /// How width×height is reached.
    pub strategy: ResizeStrategy,
    /// False: never enlarge.
    pub zoom: bool,
    /// Where fillcrop keeps its area.
    pub gravity: Gravity,
    /// The area for [`ResizeStrategy::Crop`].
    pub crop: Option<CropArea>,
    /// Output format; `None` keeps the input's (PNG when libvips cannot write the input's).
    pub format: Option<ImageFormat>,
    /// 1..=100 (JPEG, WebP, AVIF).
    pub quality: u8,
    /// Padding colour for `pad`, and what transparency is flattened onto for JPEG.
    pub background: Rgba,
    /// Drop metadata (EXIF, XMP, comments; the ICC profile too).
    pub strip: bool,
    /// Apply the EXIF orientation (Transloadit's `rotation: true`); the tag is then removed.
    pub auto_orient: bool,
    /// Progressive JPEG / interlaced PNG.
    pub progressive: bool,
}

impl Default for ResizeParams {
    fn default() -> Self {
        Self {
            width: None,
            height: None,
            strategy: ResizeStrategy::Fit,
            zoom: true,
            gravity: Gravity::Center,
            crop: None,
            format: None,
            quality: 92,
            background: Rgba::WHITE,
            strip: false,
            auto_orient: true,
            progressive: false,
        }
    }
}

/// Largest width or height `/image/resize` accepts (Transloadit's bound).
pub const MAX_SIDE: u32 = 25_000;

impl ResizeParams {
    /// Checks ranges that the types alone do not.
    pub fn validate(&self) -> Result<(), EngineError> {
        for (name, side) in [("width", self.width), ("height", self.height)] {
            if let Some(side) = side
                && !(1..=MAX_SIDE).contains(&side)
            {
                return Err(EngineError::Invalid(format!(
                    "{name} must be 1..={MAX_SIDE}, not {side}"
                )));
            }
        }
        if !(1..=100).contains(&self.quality) {
            return Err(EngineError::Invalid(format!(
                "quality must be 1..=100, not {}",
                self.quality
            )));
        }
        match (self.strategy, self.crop) {
            (ResizeStrategy::Crop, None) => Err(EngineError::Invalid(
                "resize_strategy crop needs crop".into(),
            )),
            (_, Some(c)) if c.x2 <= c.x1 || c.y2 <= c.y1 => Err(EngineError::Invalid(
                "crop needs x1 < x2 and y1 < y2".into(),
            )),
            _ => Ok(()),
        }
    }
}

/// A written image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageOutput {
    /// `output_base` plus the format's extension.
    pub path: PathBuf,
    /// Its format.
    pub format: ImageFormat,
    /// Its width.
    pub width: u64,
    /// Its height.
    pub height: u64,
}

/// Resizes `input` into `output_base.<ext>` (the extension follows the output format): in
/// process when [`super::native`] takes the job, else on libvips ([`resize_on_libvips`]).
pub async fn resize(
    engines: &Engines,
    input: &Path,
    output_base: &Path,
    params: &ResizeParams,
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<ImageOutput, EngineError> {
    resize_among(engines, input, output_base, params, &[], limits, cancel).await
}

/// [`resize`] for one of several resize steps over the same `input` at about the same time,
/// `siblings` being the others' parameters: in process, the input is then decoded once, at the
/// size the largest of them needs, for all of them.
pub async fn resize_among(
    engines: &Engines,
    input: &Path,
    output_base: &Path,
    params: &ResizeParams,
    siblings: &[ResizeParams],
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<ImageOutput, EngineError> {
    let vips_bin = checked(engines, input, params).await?;
    let native = super::native::resize(
        engines,
        input,
        output_base,
        params,
        siblings,
        limits,
        cancel,
    );
    if let Some(done) = native.await? {
        return Ok(done);
    }
    on_libvips(
        engines,
        vips_bin,
        input,
        output_base,
        params,
        limits,
        cancel,
    )
    .await
}

/// [`resize`] on libvips's command line whatever the input: what every job the in-process path
/// declines runs, and what it is compared with.
pub async fn resize_on_libvips(
    engines: &Engines,
    input: &Path,
    output_base: &Path,
    params: &ResizeParams,
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<ImageOutput, EngineError> {
    let vips_bin = checked(engines, input, params).await?;
    on_libvips(
        engines,
        vips_bin,
        input,
        output_base,
        params,
        limits,
        cancel,
    )
    .await
}

/// What every resize checks first: the parameters, that libvips is there (the fallback of any
/// in-process job) and that `input` is a regular file at a path engines read as a path.
async fn checked<'e>(
    engines: &'e Engines,
    input: &Path,
    params: &ResizeParams,
) -> Result<&'e Path, EngineError> {
    params.validate()?;
    let vips_bin = engines.vips()?;
    limits::check_path(input)?;
    super::probe::regular_file(input).await?;
    Ok(vips_bin)
}

/// [`resize_on_libvips`] once [`checked`].
async fn on_libvips(
    engines: &Engines,
    vips_bin: &Path,
    input: &Path,
    output_base: &Path,
    params: &ResizeParams,
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<ImageOutput, EngineError> {
    let header = vips::header(engines, input, limits, cancel).await?;
    header.check_pixels(limits)?;
    let format = output_format(params.format, &header, &engines.image_formats)?;
    let output = with_extension(output_base, format)?;
    let ops = plan(&header, params, format)?;
    // Intermediates are uncompressed TIFFs, which libvips's core reads and writes.
    let env = vips::env(input, Some(format)).await;
    let scratch = scratch_dir(&output)?;
    let mut current: PathBuf = input.to_owned();
    for (i, op) in ops.iter().enumerate() {
        let last = i + 1 == ops.len();
        let target = if last {
            format!(
                "{}[{}]",
                limits::check_path(&output)?,
                save_options(format, params)
            )
        } else {
            let t = scratch.path().join(format!("step{i}.tif"));
            format!("{}[compression=none]", limits::check_path(&t)?)
        };
        let args = op.args(limits::check_path(&current)?, &target);
        if let Err(e) = limits::run(vips_bin, &args, env, limits, cancel).await {
            let _ = tokio::fs::remove_file(&output).await;
            return Err(e);
        }
        current = scratch.path().join(format!("step{i}.tif"));
    }
    // The written header is read in-process: one engine start less per output.
    let (width, height) = match imagesize::size(&output) {
        Ok(size) => (size.width as u64, size.height as u64),
        Err(_) => {
            let written = vips::header(engines, &output, limits, cancel).await?;
            (written.width, written.height)
        }
    };
    Ok(ImageOutput {
        path: output,
        format,
        width,
        height,
    })
}
