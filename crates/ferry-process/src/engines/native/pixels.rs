//! Pixels in memory for the in-process resize: a JPEG decoded with DCT scaling (`jpeg-decoder`,
//! memory-safe Rust, so a hostile upload can at worst make it return an error), turned upright by
//! its EXIF orientation, resampled with Lanczos3 (`fast_image_resize`, libvips's and sharp's
//! default kernel) and cut centred for a crop. 8-bit gray or RGB only.

use fast_image_resize as fir;

/// An 8-bit image, rows packed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pixels {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// 1 (gray) or 3 (RGB).
    pub channels: u8,
    /// `width * height * channels` bytes.
    pub data: Vec<u8>,
}

impl Pixels {
    fn stride(&self) -> usize {
        self.width as usize * usize::from(self.channels)
    }

    /// RGB: gray repeated into three channels (WebP has no gray).
    pub(crate) fn into_rgb(self) -> Pixels {
        if self.channels == 3 {
            return self;
        }
        Pixels {
            data: self.data.iter().flat_map(|v| [*v, *v, *v]).collect(),
            channels: 3,
            ..self
        }
    }
}

/// Decodes `data` at 1/`denominator` of its stored size (1, 2, 4 or 8), allocating at most
/// `max_bytes` for it.
pub(crate) fn decode(data: &[u8], denominator: u64, max_bytes: usize) -> Result<Pixels, String> {
    let mut decoder = jpeg_decoder::Decoder::new(data);
    decoder.set_max_decoding_buffer_size(max_bytes);
    decoder.read_info().map_err(|e| e.to_string())?;
    let info = decoder.info().ok_or("no frame")?;
    let want = |side: u16| u16::try_from(u64::from(side).div_ceil(denominator)).unwrap_or(side);
    let (width, height) = decoder
        .scale(want(info.width), want(info.height))
        .map_err(|e| e.to_string())?;
    let channels = match info.pixel_format {
        jpeg_decoder::PixelFormat::L8 => 1,
        jpeg_decoder::PixelFormat::RGB24 => 3,
        other => return Err(format!("pixel format {other:?} is not read in process")),
    };
    let data = decoder.decode().map_err(|e| e.to_string())?;
    let pixels = Pixels {
        width: u32::from(width),
        height: u32::from(height),
        channels,
        data,
    };
    if pixels.data.len() != pixels.stride() * pixels.height as usize {
        return Err("the decoder returned fewer pixels than the frame holds".into());
    }
    Ok(pixels)
}

/// `p` turned by EXIF orientation `o` (2..=8 flip and/or rotate; anything else is upright).
pub(crate) fn orient(p: Pixels, o: u8) -> Pixels {
    if !(2..=8).contains(&o) {
        return p;
    }
    let (w, h) = (p.width as usize, p.height as usize);
    let c = usize::from(p.channels);
    let (ow, oh) = if o >= 5 { (h, w) } else { (w, h) };
    let mut out = vec![0u8; p.data.len()];
    for y in 0..oh {
        for x in 0..ow {
            // Where output pixel (x, y) comes from in the stored image.
            let (sx, sy) = match o {
                2 => (w - 1 - x, y),
                3 => (w - 1 - x, h - 1 - y),
                4 => (x, h - 1 - y),
                5 => (y, x),
                6 => (y, h - 1 - x),
                7 => (w - 1 - y, h - 1 - x),
                _ => (w - 1 - y, x),
            };
            let (to, from) = ((y * ow + x) * c, (sy * w + sx) * c);
            out[to..to + c].copy_from_slice(&p.data[from..from + c]);
        }
    }
    Pixels {
        width: ow as u32,
        height: oh as u32,
        channels: p.channels,
        data: out,
    }
}

/// `p` resampled to `width`×`height` (Lanczos3; a copy when the size is already right).
pub(crate) fn resize(p: &Pixels, width: u32, height: u32) -> Result<Pixels, String> {
    if (p.width, p.height) == (width, height) {
        return Ok(p.clone());
    }
    let kind = if p.channels == 1 {
        fir::PixelType::U8
    } else {
        fir::PixelType::U8x3
    };
    let src =
        fir::images::ImageRef::new(p.width, p.height, &p.data, kind).map_err(|e| e.to_string())?;
    let mut dst = fir::images::Image::new(width, height, kind);
    let options = fir::ResizeOptions::new()
        .resize_alg(fir::ResizeAlg::Convolution(fir::FilterType::Lanczos3));
    fir::Resizer::new()
        .resize(&src, &mut dst, &options)
        .map_err(|e| e.to_string())?;
    Ok(Pixels {
        width,
        height,
        channels: p.channels,
        data: dst.into_vec(),
    })
}

/// The `width`×`height` area of `p` starting at (`left`, `top`).
pub(crate) fn crop(p: Pixels, left: u32, top: u32, width: u32, height: u32) -> Pixels {
    if (left, top, width, height) == (0, 0, p.width, p.height) {
        return p;
    }
    let c = usize::from(p.channels);
    let stride = p.stride();
    let row = width as usize * c;
    let mut data = Vec::with_capacity(row * height as usize);
    for y in top as usize..(top + height) as usize {
        let start = y * stride + left as usize * c;
        data.extend_from_slice(&p.data[start..start + row]);
    }
    Pixels {
        width,
        height,
        channels: p.channels,
        data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 3x2 gray, values 0..6 in reading order.
    fn grid() -> Pixels {
        Pixels {
            width: 3,
            height: 2,
            channels: 1,
            data: (0..6).collect(),
        }
    }

    #[test]
    fn orientations_move_the_first_pixel_where_exif_says() {
        // 0 1 2     orientation 6 (rotate 90 CW):  3 0
        // 3 4 5                                    4 1
        //                                          5 2
        assert_eq!(orient(grid(), 6).data, [3, 0, 4, 1, 5, 2]);
        assert_eq!(orient(grid(), 8).data, [2, 5, 1, 4, 0, 3]);
        assert_eq!(orient(grid(), 3).data, [5, 4, 3, 2, 1, 0]);
        assert_eq!(orient(grid(), 2).data, [2, 1, 0, 5, 4, 3]);
        assert_eq!(orient(grid(), 4).data, [3, 4, 5, 0, 1, 2]);
        assert_eq!(orient(grid(), 5).data, [0, 3, 1, 4, 2, 5]);
        assert_eq!(orient(grid(), 7).data, [5, 2, 4, 1, 3, 0]);
        assert_eq!((orient(grid(), 6).width, orient(grid(), 6).height), (2, 3));
        assert_eq!(orient(grid(), 1), grid());
    }

    #[test]
    fn crop_keeps_the_area_asked_for() {
        let c = crop(grid(), 1, 1, 2, 1);
        assert_eq!((c.width, c.height, c.data), (2, 1, vec![4, 5]));
    }

    #[test]
    fn resize_reaches_the_size_and_keeps_flat_colour() {
        let flat = Pixels {
            width: 40,
            height: 30,
            channels: 3,
            data: [200u8, 10, 60].repeat(1200),
        };
        let r = resize(&flat, 13, 7).expect("resize");
        assert_eq!((r.width, r.height, r.data.len()), (13, 7, 13 * 7 * 3));
        assert!(r.data.chunks(3).all(|p| p == [200, 10, 60]));
    }
}
