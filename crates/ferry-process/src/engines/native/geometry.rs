//! The sizes of the in-process resize: what `vips thumbnail` (libvips 8.14) writes for a given
//! input and box, so a result is the same size whichever engine made it, and the DCT scale the
//! JPEG is decoded at. libvips first shrinks a JPEG on load, leaving at least a factor of two
//! for its resampler (1/2 from a shrink of 4, 1/4 from 8, 1/8 from 16), with the loaded size
//! rounded down, then computes the final scale again from that size: the side that does not
//! fix the scale follows from the loaded size, so it is computed the same way here. Checked
//! against the `vips` command line in `tests/engines_native.rs`.

/// `vips thumbnail --size`: when the image may be scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Size {
    /// Up or down (`both`).
    Both,
    /// Only ever smaller (`down`).
    Down,
    /// Both sides to the box, aspect ignored (`force`).
    Force,
}

impl Size {
    /// The plan's `--size` value; `None` for one this module does not do.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        match text {
            "both" => Some(Self::Both),
            "down" => Some(Self::Down),
            "force" => Some(Self::Force),
            _ => None,
        }
    }
}

/// libvips's horizontal and vertical shrink factors for a `w`×`h` image into `tw`×`th`.
fn shrinks(w: f64, h: f64, tw: f64, th: f64, size: Size, crop: bool) -> (f64, f64) {
    let (mut hs, mut vs) = (w / tw, h / th);
    // Without a crop the image fits inside the box (the larger factor wins); with one it
    // covers the box (the smaller wins).
    let horizontal = if crop { hs < vs } else { hs >= vs };
    if size != Size::Force {
        if horizontal {
            vs = hs;
        } else {
            hs = vs;
        }
    }
    if size == Size::Down {
        hs = hs.max(1.0);
        vs = vs.max(1.0);
    }
    // Never shrink a side below one pixel.
    (hs.min(w), vs.min(h))
}

/// libvips's JPEG shrink-on-load denominator for an overall shrink of `shrink`.
fn vips_load_shrink(shrink: f64) -> u64 {
    match shrink {
        s if s >= 16.0 => 8,
        s if s >= 8.0 => 4,
        s if s >= 4.0 => 2,
        _ => 1,
    }
}

/// Round half up, as libvips's `VIPS_ROUND_UINT`.
fn round(x: f64) -> u64 {
    (x + 0.5).floor().max(1.0) as u64
}

/// The size `vips thumbnail` gives a `w`×`h` image (already oriented) for the box `tw`×`th`,
/// before a crop: the image is then cut centred to at most the box ([`crop_to`]).
/// `shrink_on_load` is true for a JPEG.
pub(crate) fn resized(
    (w, h): (u64, u64),
    (tw, th): (u64, u64),
    size: Size,
    crop: bool,
    shrink_on_load: bool,
) -> (u64, u64) {
    let (tw, th) = (tw.max(1) as f64, th.max(1) as f64);
    let (hs, vs) = shrinks(w as f64, h as f64, tw, th, size, crop);
    let d = if shrink_on_load {
        vips_load_shrink(hs.min(vs))
    } else {
        1
    };
    let (lw, lh) = ((w / d).max(1), (h / d).max(1));
    let (hs, vs) = shrinks(lw as f64, lh as f64, tw, th, size, crop);
    (round(lw as f64 / hs), round(lh as f64 / vs))
}

/// What a centred crop to the box leaves of a `w`×`h` image: at most the box, and where it starts.
pub(crate) fn crop_to((w, h): (u64, u64), (tw, th): (u64, u64)) -> (u64, u64, u64, u64) {
    let (cw, ch) = (w.min(tw.max(1)), h.min(th.max(1)));
    ((w - cw) / 2, (h - ch) / 2, cw, ch)
}

/// The DCT scale denominator (1, 2, 4 or 8) to decode a `w`×`h` JPEG at so that it is still at
/// least `rw`×`rh` (what sharp calls fast shrink-on-load: the resampler only ever shrinks).
pub(crate) fn decode_denominator((w, h): (u64, u64), (rw, rh): (u64, u64)) -> u64 {
    [8, 4, 2]
        .into_iter()
        .find(|d| w.div_ceil(*d) >= rw && h.div_ceil(*d) >= rh)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_sizes() {
        let big = (4000, 3000);
        assert_eq!(
            resized(big, (320, 320), Size::Both, false, true),
            (320, 240)
        );
        assert_eq!(
            resized(big, (1280, 960), Size::Both, false, true),
            (1280, 960)
        );
        assert_eq!(decode_denominator(big, (1280, 960)), 2);
        assert_eq!(decode_denominator(big, (320, 240)), 8);
        assert_eq!(decode_denominator(big, (4000, 3000)), 1);
    }

    #[test]
    fn the_free_side_follows_the_size_libvips_loaded() {
        // Shrink 19.9 loads at 1/8 (346x112 rounded down), then 45 high gives 139 wide, where
        // the stored aspect alone would say 138.
        assert_eq!(
            resized((2773, 897), (594, 45), Size::Both, false, true),
            (139, 45)
        );
        assert_eq!(
            resized((551, 2332), (130, 523), Size::Both, false, true),
            (123, 523)
        );
        // Without shrink-on-load (PNG) the aspect comes from the whole image.
        assert_eq!(
            resized((2773, 897), (594, 45), Size::Both, false, false),
            (139, 45)
        );
    }

    #[test]
    fn down_never_enlarges_and_force_ignores_the_aspect() {
        assert_eq!(
            resized((40, 20), (100, 100), Size::Down, false, true),
            (40, 20)
        );
        assert_eq!(
            resized((40, 20), (100, 100), Size::Both, false, true),
            (100, 50)
        );
        assert_eq!(
            resized((400, 300), (50, 200), Size::Force, false, true),
            (50, 200)
        );
    }

    #[test]
    fn a_crop_covers_the_box_then_keeps_its_middle() {
        let r = resized((400, 300), (100, 100), Size::Both, true, true);
        assert_eq!(r, (133, 100));
        assert_eq!(crop_to(r, (100, 100)), (16, 0, 100, 100));
    }
}
