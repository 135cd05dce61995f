//! The few EXIF fields the in-process path needs, read from a JPEG's APP1 (the TIFF structure
//! after `Exif\0\0`): the orientation (IFD0 tag 0x0112), and the date libvips reports
//! (DateTimeOriginal in the Exif IFD, else IFD0's DateTime). Every offset is bounds-checked: a
//! malformed block yields no fields, never a panic. [`Exif::upright`] rewrites the orientation to
//! 1 in a copy, for an output whose pixels were turned.

/// What was read, and where the orientation value sits (to rewrite it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Exif {
    /// 1..=8 when present and valid.
    pub orientation: Option<u8>,
    /// `YYYY:MM:DD HH:MM:SS` as stored.
    pub date: Option<String>,
    /// Offset of the orientation's 2-byte value in the TIFF block.
    orientation_at: Option<usize>,
    little_endian: bool,
}

const ORIENTATION: u16 = 0x0112;
const DATE_TIME: u16 = 0x0132;
const EXIF_IFD: u16 = 0x8769;
const DATE_TIME_ORIGINAL: u16 = 0x9003;
const SHORT: u16 = 3;
const ASCII: u16 = 2;
const LONG: u16 = 4;

struct Tiff<'a> {
    data: &'a [u8],
    le: bool,
}

impl Tiff<'_> {
    fn u16(&self, at: usize) -> Option<u16> {
        let b = self.data.get(at..at.checked_add(2)?)?;
        Some(if self.le {
            u16::from_le_bytes([b[0], b[1]])
        } else {
            u16::from_be_bytes([b[0], b[1]])
        })
    }

    fn u32(&self, at: usize) -> Option<u32> {
        let b = self.data.get(at..at.checked_add(4)?)?;
        let b = [b[0], b[1], b[2], b[3]];
        Some(if self.le {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    }

    /// The entries of the IFD at `at`: (tag, type, count, offset of the value field).
    fn entries(&self, at: usize) -> impl Iterator<Item = (u16, u16, u32, usize)> + '_ {
        let count = self.u16(at).unwrap_or(0) as usize;
        (0..count).map_while(move |i| {
            let e = at.checked_add(2 + i * 12)?;
            Some((self.u16(e)?, self.u16(e + 2)?, self.u32(e + 4)?, e + 8))
        })
    }

    /// An ASCII value of `count` bytes (inline when 4 or fewer, else at the offset stored).
    fn ascii(&self, count: u32, value_at: usize) -> Option<String> {
        let start = if count <= 4 {
            value_at
        } else {
            self.u32(value_at)? as usize
        };
        let bytes = self.data.get(start..start.checked_add(count as usize)?)?;
        let text = bytes.split(|b| *b == 0).next()?;
        std::str::from_utf8(text).ok().map(str::to_owned)
    }
}

impl Exif {
    /// Reads the TIFF block `data` (what follows `Exif\0\0`).
    pub(crate) fn parse(data: &[u8]) -> Exif {
        let le = match data.get(..4) {
            Some(b"II*\0") => true,
            Some(b"MM\0*") => false,
            _ => return Exif::default(),
        };
        let tiff = Tiff { data, le };
        let mut exif = Exif {
            little_endian: le,
            ..Exif::default()
        };
        let Some(ifd0) = tiff.u32(4).map(|o| o as usize) else {
            return exif;
        };
        let mut date_time = None;
        let mut exif_ifd = None;
        for (tag, kind, count, value_at) in tiff.entries(ifd0) {
            match (tag, kind) {
                (ORIENTATION, SHORT) if count == 1 => {
                    let o = tiff.u16(value_at).unwrap_or(0);
                    if (1..=8).contains(&o) {
                        exif.orientation = Some(o as u8);
                        exif.orientation_at = Some(value_at);
                    }
                }
                (DATE_TIME, ASCII) => date_time = tiff.ascii(count, value_at),
                (EXIF_IFD, LONG) if count == 1 => exif_ifd = tiff.u32(value_at),
                _ => {}
            }
        }
        let original = exif_ifd.and_then(|at| {
            tiff.entries(at as usize)
                .find(|(tag, kind, _, _)| (*tag, *kind) == (DATE_TIME_ORIGINAL, ASCII))
                .and_then(|(_, _, count, value_at)| tiff.ascii(count, value_at))
        });
        exif.date = original.or(date_time);
        exif
    }

    /// A copy of `data` (the block this was parsed from) saying orientation 1: the pixels were
    /// turned upright, so a viewer must not turn them again.
    pub(crate) fn upright(&self, data: &[u8]) -> Vec<u8> {
        let mut out = data.to_vec();
        if let Some(at) = self.orientation_at
            && let Some(value) = out.get_mut(at..at + 2)
        {
            let one = if self.little_endian {
                1u16.to_le_bytes()
            } else {
                1u16.to_be_bytes()
            };
            value.copy_from_slice(&one);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A big-endian TIFF block: IFD0 with orientation and an Exif IFD pointer, the Exif IFD with
    /// DateTimeOriginal.
    fn block(orientation: u16) -> Vec<u8> {
        let mut d = b"MM\0*\0\0\0\x08".to_vec();
        d.extend([0, 2]);
        d.extend([0x01, 0x12, 0, 3, 0, 0, 0, 1]);
        d.extend(orientation.to_be_bytes());
        d.extend([0, 0]);
        d.extend([0x87, 0x69, 0, 4, 0, 0, 0, 1, 0, 0, 0, 38]);
        d.extend([0, 0, 0, 0]);
        assert_eq!(d.len(), 38);
        d.extend([0, 1]);
        d.extend([0x90, 0x03, 0, 2, 0, 0, 0, 20, 0, 0, 0, 56]);
        d.extend([0, 0, 0, 0]);
        d.extend(b"2021:03:04 05:06:07\0");
        d
    }

    #[test]
    fn reads_orientation_and_the_original_date() {
        let exif = Exif::parse(&block(6));
        assert_eq!(exif.orientation, Some(6));
        assert_eq!(exif.date.as_deref(), Some("2021:03:04 05:06:07"));
        let upright = Exif::parse(&exif.upright(&block(6)));
        assert_eq!(upright.orientation, Some(1));
        assert_eq!(upright.date, exif.date);
    }

    #[test]
    fn garbage_and_cut_blocks_give_nothing() {
        assert_eq!(Exif::parse(b"nonsense").orientation, None);
        let whole = block(3);
        for cut in 0..whole.len() {
            let _ = Exif::parse(&whole[..cut]);
        }
        assert_eq!(Exif::parse(&block(9)).orientation, None, "out of range");
        let mut looping = block(6);
        looping[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(
            Exif::parse(&looping),
            Exif {
                little_endian: false,
                ..Exif::default()
            }
        );
    }
}
