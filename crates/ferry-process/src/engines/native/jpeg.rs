//! A JPEG's header read in process, without decoding: the frame (size, components, precision,
//! coding), and the metadata segments an output may carry on (EXIF, XMP, the ICC profile). It
//! walks the markers up to the first scan, bounds-checking every length, and gives the same
//! [`Header`] `vipsheader` would, so the resize plan and the pixel cap see the same numbers.

use super::exif::Exif;
use crate::engines::vips::Header;

/// What the in-process path knows about a JPEG before decoding it.
#[derive(Debug, Clone, Default)]
pub(crate) struct JpegInfo {
    /// Stored width.
    pub width: u32,
    /// Stored height.
    pub height: u32,
    /// 1 (gray), 3 (YCbCr or RGB), 4 (CMYK/YCCK).
    pub components: u8,
    /// Bits per sample.
    pub precision: u8,
    /// The SOF marker (0xC0 baseline, 0xC1 extended, 0xC2 progressive, others lossless or
    /// arithmetic).
    pub sof: u8,
    /// The TIFF block of the first EXIF APP1 (after `Exif\0\0`).
    pub exif: Option<Vec<u8>>,
    /// What was read from it.
    pub exif_fields: Exif,
    /// The first XMP APP1 segment's payload, namespace header included.
    pub xmp: Option<Vec<u8>>,
    /// The ICC profile, reassembled from its APP2 chunks.
    pub icc: Option<Vec<u8>>,
}

const XMP_NAMESPACE: &[u8] = b"http://ns.adobe.com/xap/1.0/\0";
const ICC_MARK: &[u8] = b"ICC_PROFILE\0";

/// Reads the header of the JPEG `data`; `Err` says why it is not one this module reads.
pub(crate) fn read(data: &[u8]) -> Result<JpegInfo, String> {
    if !data.starts_with(&[0xFF, 0xD8]) {
        return Err("not a JPEG".into());
    }
    let mut info = JpegInfo::default();
    let mut icc_chunks: Vec<(u8, Vec<u8>)> = Vec::new();
    let mut icc_count = 0u8;
    let mut pos = 2;
    loop {
        // Markers may be preceded by any number of 0xFF fill bytes.
        if data.get(pos) != Some(&0xFF) {
            return Err(format!("no marker at byte {pos}"));
        }
        while data.get(pos) == Some(&0xFF) {
            pos += 1;
        }
        let marker = *data.get(pos).ok_or("cut before the first scan")?;
        pos += 1;
        if matches!(marker, 0x01 | 0xD0..=0xD7) {
            continue;
        }
        if marker == 0xD9 {
            return Err("no image before the end marker".into());
        }
        let len = data
            .get(pos..pos + 2)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
            .ok_or("cut in a segment length")?;
        let body = data
            .get(pos + 2..pos + len.max(2))
            .filter(|_| len >= 2)
            .ok_or("a segment runs past the end")?;
        pos += len;
        match marker {
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => {
                let b = body.get(..6).ok_or("short frame header")?;
                info.sof = marker;
                info.precision = b[0];
                info.height = u32::from(u16::from_be_bytes([b[1], b[2]]));
                info.width = u32::from(u16::from_be_bytes([b[3], b[4]]));
                info.components = b[5];
            }
            0xE1 if info.exif.is_none() && body.starts_with(b"Exif\0\0") => {
                let tiff = &body[6..];
                info.exif_fields = Exif::parse(tiff);
                info.exif = Some(tiff.to_vec());
            }
            0xE1 if info.xmp.is_none() && body.starts_with(XMP_NAMESPACE) => {
                info.xmp = Some(body.to_vec());
            }
            0xE2 if body.starts_with(ICC_MARK) && body.len() > ICC_MARK.len() + 2 => {
                let seq = body[ICC_MARK.len()];
                icc_count = body[ICC_MARK.len() + 1];
                icc_chunks.push((seq, body[ICC_MARK.len() + 2..].to_vec()));
            }
            0xDA => break,
            _ => {}
        }
    }
    if info.sof == 0 {
        return Err("no frame header before the first scan".into());
    }
    if info.width == 0 || info.height == 0 {
        return Err("the frame has no size (a DNL marker)".into());
    }
    if !icc_chunks.is_empty() {
        icc_chunks.sort_by_key(|(seq, _)| *seq);
        let whole = icc_chunks.len() == usize::from(icc_count)
            && icc_chunks
                .iter()
                .enumerate()
                .all(|(i, (seq, _))| usize::from(*seq) == i + 1);
        if !whole {
            return Err("the ICC profile's chunks are incomplete".into());
        }
        info.icc = Some(icc_chunks.into_iter().flat_map(|(_, c)| c).collect());
    }
    Ok(info)
}

impl JpegInfo {
    /// The header as `vipsheader` reports it.
    pub(crate) fn header(&self) -> Header {
        Header {
            width: u64::from(self.width),
            height: u64::from(self.height),
            bands: u32::from(self.components),
            loader: "jpegload".into(),
            orientation: self.exif_fields.orientation,
            exif_date: self
                .exif_fields
                .date
                .as_deref()
                .and_then(crate::engines::vips::exif_datetime),
            pages: None,
        }
    }

    /// True when the profile is absent or an sRGB one: the pixels then need no colour
    /// management, which stays libvips's job.
    pub(crate) fn srgb(&self) -> bool {
        self.icc.as_deref().is_none_or(is_srgb)
    }
}

/// An RGB display profile whose description (`desc` tag) names sRGB.
fn is_srgb(icc: &[u8]) -> bool {
    let be32 = |at: usize| {
        icc.get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    if icc.get(16..20) != Some(b"RGB ") {
        return false;
    }
    let Some(count) = be32(128) else { return false };
    (0..count.min(256)).any(|i| {
        let at = 132 + i * 12;
        if icc.get(at..at + 4) != Some(b"desc") {
            return false;
        }
        let (Some(offset), Some(len)) = (be32(at + 4), be32(at + 8)) else {
            return false;
        };
        let Some(tag) = icc.get(offset..offset.saturating_add(len)) else {
            return false;
        };
        // `desc` holds ASCII, `mluc` UTF-16BE: look for either spelling.
        let utf16: Vec<u8> = b"sRGB".iter().flat_map(|c| [0, *c]).collect();
        tag.windows(4).any(|w| w == b"sRGB") || tag.windows(8).any(|w| w == utf16.as_slice())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jpeg_with(segments: &[(u8, Vec<u8>)]) -> Vec<u8> {
        let mut d = vec![0xFF, 0xD8];
        for (m, body) in segments {
            d.extend([0xFF, *m]);
            d.extend(((body.len() + 2) as u16).to_be_bytes());
            d.extend(body);
        }
        d
    }

    fn sof(w: u16, h: u16) -> (u8, Vec<u8>) {
        let mut b = vec![8];
        b.extend(h.to_be_bytes());
        b.extend(w.to_be_bytes());
        b.extend([3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
        (0xC0, b)
    }

    #[test]
    fn reads_the_frame_before_the_scan() {
        let d = jpeg_with(&[
            (0xFE, b"comment".to_vec()),
            sof(4000, 3000),
            (0xDA, vec![0; 10]),
        ]);
        let info = read(&d).expect("header");
        assert_eq!((info.width, info.height, info.components), (4000, 3000, 3));
        let h = info.header();
        assert_eq!(
            (h.width, h.height, h.bands, h.orientation),
            (4000, 3000, 3, None)
        );
        assert!(info.srgb());
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        assert!(read(b"\x89PNG").is_err());
        let d = jpeg_with(&[sof(10, 10), (0xDA, vec![0; 10])]);
        for cut in 0..d.len() - 12 {
            assert!(read(&d[..cut]).is_err(), "cut at {cut}");
        }
        assert!(read(&jpeg_with(&[sof(0, 10), (0xDA, vec![0; 10])])).is_err());
        let mut icc = ICC_MARK.to_vec();
        icc.extend([1, 2, 0, 0]);
        assert!(read(&jpeg_with(&[(0xE2, icc), sof(1, 1), (0xDA, vec![0; 10])])).is_err());
    }
}
