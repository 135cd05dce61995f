//! Writing the in-process resize's pixels with libvips's settings for the same parameters:
//! JPEG (`jpeg-encoder`): the IJG quality scale, optimized Huffman tables (`optimize_coding`),
//! 4:2:0 chroma below quality 90 and 4:4:4 from 90 (libvips's automatic subsampling),
//! progressive when asked (`interlace`), and the input's EXIF, XMP and ICC profile carried over
//! unless stripped, as libvips keeps them; lossy WebP (libwebp's simple API: method 4, the
//! default preset, what `webpsave Q=` does).

use super::pixels::Pixels;

/// The input's metadata an output keeps when `strip` is off.
#[derive(Debug, Default)]
pub(crate) struct Metadata {
    /// The EXIF TIFF block (orientation already rewritten when the pixels were turned).
    pub exif: Option<Vec<u8>>,
    /// The XMP APP1 payload, namespace header included.
    pub xmp: Option<Vec<u8>>,
    /// The ICC profile.
    pub icc: Option<Vec<u8>>,
}

impl Metadata {
    /// True when there is nothing to carry.
    pub(crate) fn is_empty(&self) -> bool {
        self.exif.is_none() && self.xmp.is_none() && self.icc.is_none()
    }
}

/// Largest APP segment payload (a 16-bit length that counts itself).
const MAX_SEGMENT: usize = 65_533;

/// `p` as a JPEG of `quality` (1..=100).
pub(crate) fn jpeg(
    p: &Pixels,
    quality: u8,
    progressive: bool,
    meta: &Metadata,
) -> Result<Vec<u8>, String> {
    let (width, height) = (
        u16::try_from(p.width).map_err(|_| "wider than JPEG allows")?,
        u16::try_from(p.height).map_err(|_| "taller than JPEG allows")?,
    );
    let mut out = Vec::with_capacity(p.data.len() / 8);
    let mut encoder = jpeg_encoder::Encoder::new(&mut out, quality);
    encoder.set_optimized_huffman_tables(true);
    encoder.set_progressive(progressive);
    encoder.set_sampling_factor(if quality >= 90 {
        jpeg_encoder::SamplingFactor::R_4_4_4
    } else {
        jpeg_encoder::SamplingFactor::R_4_2_0
    });
    if let Some(tiff) = &meta.exif {
        let mut app1 = b"Exif\0\0".to_vec();
        app1.extend_from_slice(tiff);
        if app1.len() <= MAX_SEGMENT {
            encoder
                .add_app_segment(1, &app1)
                .map_err(|e| e.to_string())?;
        }
    }
    if let Some(xmp) = meta.xmp.as_ref().filter(|x| x.len() <= MAX_SEGMENT) {
        encoder.add_app_segment(1, xmp).map_err(|e| e.to_string())?;
    }
    if let Some(icc) = &meta.icc {
        encoder.add_icc_profile(icc).map_err(|e| e.to_string())?;
    }
    let colour = if p.channels == 1 {
        jpeg_encoder::ColorType::Luma
    } else {
        jpeg_encoder::ColorType::Rgb
    };
    encoder
        .encode(&p.data, width, height, colour)
        .map_err(|e| e.to_string())?;
    Ok(out)
}

/// Largest WebP side.
pub(crate) const WEBP_MAX_SIDE: u32 = 16_383;

/// `p` as a lossy WebP of `quality` (1..=100).
pub(crate) fn webp(p: Pixels, quality: u8) -> Result<Vec<u8>, String> {
    if p.width > WEBP_MAX_SIDE || p.height > WEBP_MAX_SIDE {
        return Err("larger than WebP allows".into());
    }
    let p = p.into_rgb();
    let encoded = webp::Encoder::from_rgb(&p.data, p.width, p.height)
        .encode_simple(false, f32::from(quality))
        .map_err(|e| format!("libwebp: {e:?}"))?;
    Ok(encoded.to_vec())
}
