//! The plan behind `/image/resize`: which `vips` operations, in which order, with which numbers,
//! for a given header and parameters. Pure (no processes), so each strategy's geometry is tested
//! directly.

use super::EngineError;
use std::ffi::OsString;

use super::image::{Gravity, ImageFormat, ResizeParams, ResizeStrategy, Rgba};
use super::vips::Header;

/// One `vips` operation; the runner adds input and output.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    /// `vips thumbnail IN OUT W --height H --size S [--crop centre] [--no-rotate]`.
    Thumbnail {
        width: u64,
        height: u64,
        size: &'static str,
        crop_centre: bool,
        auto_orient: bool,
    },
    /// `vips autorot IN OUT`.
    Autorot,
    /// `vips crop IN OUT LEFT TOP W H`.
    Crop {
        left: u32,
        top: u32,
        width: u32,
        height: u32,
    },
    /// `vips bandjoin_const IN OUT 255`: adds an opaque alpha band.
    AddAlpha,
    /// `vips gravity IN OUT DIR W H --extend background --background ...`: pads or crops.
    Gravity {
        compass: &'static str,
        width: u64,
        height: u64,
        background: Vec<u8>,
    },
    /// `vips flatten IN OUT --background ...`: removes alpha onto a colour.
    Flatten { background: Vec<u8> },
}

impl Op {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Thumbnail { .. } => "thumbnail",
            Self::Autorot => "autorot",
            Self::Crop { .. } => "crop",
            Self::AddAlpha => "bandjoin_const",
            Self::Gravity { .. } => "gravity",
            Self::Flatten { .. } => "flatten",
        }
    }

    pub(crate) fn operands(&self) -> Vec<String> {
        let colour = |c: &[u8]| c.iter().map(u8::to_string).collect::<Vec<_>>().join(" ");
        match self {
            Self::Thumbnail {
                width,
                height,
                size,
                crop_centre,
                auto_orient,
            } => {
                let mut v = vec![
                    width.to_string(),
                    "--height".into(),
                    height.to_string(),
                    "--size".into(),
                    (*size).into(),
                    // A truncated or corrupt file fails instead of yielding a half-grey image.
                    "--fail-on".into(),
                    "truncated".into(),
                ];
                if *crop_centre {
                    v.extend(["--crop".into(), "centre".into()]);
                }
                if !auto_orient {
                    v.push("--no-rotate".into());
                }
                v
            }
            Self::Autorot => Vec::new(),
            Self::Crop {
                left,
                top,
                width,
                height,
            } => vec![
                left.to_string(),
                top.to_string(),
                width.to_string(),
                height.to_string(),
            ],
            Self::AddAlpha => vec!["255".into()],
            Self::Gravity {
                compass,
                width,
                height,
                background,
            } => vec![
                (*compass).into(),
                width.to_string(),
                height.to_string(),
                "--extend".into(),
                "background".into(),
                "--background".into(),
                colour(background),
            ],
            Self::Flatten { background } => vec!["--background".into(), colour(background)],
        }
    }
}

/// The operations that turn an image with `header` into what `params` ask for, in `format`.
pub(crate) fn plan(
    header: &Header,
    params: &ResizeParams,
    format: ImageFormat,
) -> Result<Vec<Op>, EngineError> {
    let (mut w, mut h) = header.oriented(params.auto_orient);
    let mut ops = Vec::new();
    if params.strategy == ResizeStrategy::Crop {
        let Some(c) = params.crop else {
            return Err(EngineError::Invalid(
                "resize_strategy crop needs crop".into(),
            ));
        };
        if u64::from(c.x2) > w || u64::from(c.y2) > h {
            return Err(EngineError::Invalid(format!(
                "crop ({},{})-({},{}) lies outside the {w}x{h} image",
                c.x1, c.y1, c.x2, c.y2
            )));
        }
        if params.auto_orient && header.orientation.is_some_and(|o| o > 1) {
            ops.push(Op::Autorot);
        }
        ops.push(Op::Crop {
            left: c.x1,
            top: c.y1,
            width: c.x2 - c.x1,
            height: c.y2 - c.y1,
        });
        (w, h) = (u64::from(c.x2 - c.x1), u64::from(c.y2 - c.y1));
    }
    let (bw, bh) = target_box(params.width, params.height, w, h);
    let size = if params.zoom { "both" } else { "down" };
    let thumb = |width: u64, height: u64, size: &'static str, crop_centre: bool| Op::Thumbnail {
        width: width.max(1),
        height: height.max(1),
        size,
        crop_centre,
        // After an explicit crop the pixels are already upright.
        auto_orient: params.auto_orient && params.strategy != ResizeStrategy::Crop,
    };
    let alpha_out = format.has_alpha_channel() && params.background.0[3] < 255;
    let mut bands = header.bands;
    match params.strategy {
        ResizeStrategy::Fit | ResizeStrategy::Crop => ops.push(thumb(bw, bh, size, false)),
        ResizeStrategy::Stretch => ops.push(thumb(bw, bh, "force", false)),
        ResizeStrategy::MinFit => {
            let (cw, ch) = cover(w, h, bw, bh, params.zoom);
            ops.push(thumb(cw, ch, "both", false));
        }
        ResizeStrategy::FillCrop if params.gravity == Gravity::Center => {
            ops.push(thumb(bw, bh, size, true))
        }
        ResizeStrategy::FillCrop => {
            let (cw, ch) = cover(w, h, bw, bh, params.zoom);
            ops.push(thumb(cw, ch, "both", false));
            ops.push(Op::Gravity {
                compass: params.gravity.compass(),
                width: bw.min(cw),
                height: bh.min(ch),
                background: background_for(bands, params.background),
            });
        }
        ResizeStrategy::Pad => {
            ops.push(thumb(bw, bh, size, false));
            if alpha_out && !header.has_alpha() {
                ops.push(Op::AddAlpha);
                bands += 1;
            }
            ops.push(Op::Gravity {
                compass: "centre",
                width: bw,
                height: bh,
                background: background_for(bands, params.background),
            });
        }
    }
    if !format.has_alpha_channel() && (bands == 2 || (bands == 4 && header.has_alpha())) {
        let Rgba([r, g, b, _]) = params.background;
        let background = if bands == 2 {
            vec![luma(r, g, b)]
        } else {
            vec![r, g, b]
        };
        ops.push(Op::Flatten { background });
    }
    Ok(ops)
}

/// The box to reach: both sides given, or the missing one from the aspect ratio, or the input's.
fn target_box(width: Option<u32>, height: Option<u32>, w: u64, h: u64) -> (u64, u64) {
    let ratio =
        |a: u64, b: u64, c: u64| ((a as f64) * (b as f64) / (c as f64)).round().max(1.0) as u64;
    match (width.map(u64::from), height.map(u64::from)) {
        (Some(bw), Some(bh)) => (bw, bh),
        (Some(bw), None) => (bw, ratio(bw, h, w)),
        (None, Some(bh)) => (ratio(bh, w, h), bh),
        (None, None) => (w, h),
    }
}

/// The smallest size with the input's aspect that covers bw×bh (never above the input without zoom).
fn cover(w: u64, h: u64, bw: u64, bh: u64, zoom: bool) -> (u64, u64) {
    let mut scale = (bw as f64 / w as f64).max(bh as f64 / h as f64);
    if !zoom {
        scale = scale.min(1.0);
    }
    (
        ((w as f64) * scale).ceil() as u64,
        ((h as f64) * scale).ceil() as u64,
    )
}

/// A colour with as many values as the image has bands.
fn background_for(bands: u32, Rgba([r, g, b, a]): Rgba) -> Vec<u8> {
    match bands {
        1 => vec![luma(r, g, b)],
        2 => vec![luma(r, g, b), a],
        3 => vec![r, g, b],
        _ => vec![r, g, b, a],
    }
}

fn luma(r: u8, g: u8, b: u8) -> u8 {
    (0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)).round() as u8
}

/// libvips's save options for `format` (the `[...]` after the output path).
pub(crate) fn save_options(format: ImageFormat, params: &ResizeParams) -> String {
    let mut options: Vec<String> = Vec::new();
    match format {
        ImageFormat::Jpg => {
            options.push(format!("Q={}", params.quality));
            options.push("optimize_coding".into());
            if params.progressive {
                options.push("interlace".into());
            }
        }
        ImageFormat::Png => {
            options.push("compression=6".into());
            if params.progressive {
                options.push("interlace".into());
            }
        }
        ImageFormat::Webp => options.push(format!("Q={}", params.quality)),
        ImageFormat::Avif => {
            options.push(format!("Q={}", params.quality));
            options.push("compression=av1".into());
        }
        ImageFormat::Gif => {}
        ImageFormat::Tiff => options.push("compression=deflate".into()),
    }
    if params.strip {
        options.push("strip".into());
    }
    options.join(",")
}

impl Op {
    pub(crate) fn args(&self, input: &str, output: &str) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![self.name().into(), input.into(), output.into()];
        args.extend(self.operands().into_iter().map(OsString::from));
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(width: u64, height: u64, bands: u32, orientation: Option<u8>) -> Header {
        Header {
            width,
            height,
            bands,
            loader: "jpegload".into(),
            orientation,
            exif_date: None,
            pages: None,
        }
    }

    fn params(strategy: ResizeStrategy, width: u32, height: u32) -> ResizeParams {
        ResizeParams {
            width: Some(width),
            height: Some(height),
            strategy,
            ..ResizeParams::default()
        }
    }

    #[test]
    fn fit_is_one_thumbnail_into_the_box() {
        let ops = plan(
            &header(400, 300, 3, None),
            &params(ResizeStrategy::Fit, 100, 100),
            ImageFormat::Jpg,
        )
        .expect("plan");
        assert_eq!(ops.len(), 1);
        assert_eq!(
            ops[0].operands()[..5],
            ["100", "--height", "100", "--size", "both"]
        );
    }

    #[test]
    fn min_fit_covers_the_box_with_the_inputs_aspect() {
        let ops = plan(
            &header(400, 300, 3, None),
            &params(ResizeStrategy::MinFit, 100, 100),
            ImageFormat::Jpg,
        )
        .expect("plan");
        assert_eq!(ops[0].operands()[..3], ["134", "--height", "100"]);
    }

    #[test]
    fn a_missing_side_follows_the_oriented_aspect() {
        let p = ResizeParams {
            width: Some(100),
            ..ResizeParams::default()
        };
        // Stored 400x200 with orientation 6 displays as 200x400: 100 wide is 200 high.
        let ops = plan(&header(400, 200, 3, Some(6)), &p, ImageFormat::Png).expect("plan");
        assert_eq!(ops[0].operands()[..3], ["100", "--height", "200"]);
    }

    #[test]
    fn pad_on_a_gray_image_uses_a_one_band_background() {
        let mut p = params(ResizeStrategy::Pad, 100, 50);
        p.background = Rgba::parse("#ff0000").expect("colour");
        let ops = plan(&header(10, 10, 1, None), &p, ImageFormat::Jpg).expect("plan");
        assert_eq!(ops[1].operands().last().map(String::as_str), Some("76"));
    }

    #[test]
    fn crop_outside_the_image_is_refused() {
        let mut p = params(ResizeStrategy::Crop, 10, 10);
        p.crop = Some(super::super::image::CropArea {
            x1: 0,
            y1: 0,
            x2: 500,
            y2: 10,
        });
        assert!(plan(&header(400, 300, 3, None), &p, ImageFormat::Jpg).is_err());
    }

    #[test]
    fn colours_parse_in_every_documented_form() {
        assert_eq!(
            Rgba::parse("#FFFFFF").ok(),
            Some(Rgba([255, 255, 255, 255]))
        );
        assert_eq!(Rgba::parse("#0f08").ok(), Some(Rgba([0, 255, 0, 136])));
        assert_eq!(Rgba::parse("none").ok(), Some(Rgba([0, 0, 0, 0])));
        assert!(Rgba::parse("#12345").is_err());
        assert!(Rgba::parse("red; rm").is_err());
    }
}
