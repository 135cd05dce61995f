//! One decode of an upload for the resize steps that run on it at about the same time: an
//! Assembly's thumbnail, large JPEG and WebP of one photo each need it decoded, and the decode is
//! most of their work. A step that finds a decode of the same file (same [`FileIdentity`], same
//! orientation) at least as large as it needs, finished or still running, uses that one (waiting
//! for it); otherwise it decodes and offers its own. Kept briefly and within a byte budget, the
//! oldest dropped first, so this never holds more than [`BUDGET`] once the steps are done.

use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::pixels::Pixels;
use crate::engines::cache::FileIdentity;

/// Bytes of decoded pixels kept for other steps: two 12 MP photos decoded at 1/2 (9 MB each) and
/// their thumbnails' eighths, for two Assemblies at once.
pub(crate) const BUDGET: usize = 24 * 1024 * 1024;

/// How long a decode is offered after it was made: an Assembly's steps on one upload start
/// within a fraction of a second of each other.
const KEEP: Duration = Duration::from_secs(3);

type Slot = Arc<OnceLock<Result<Arc<Pixels>, String>>>;

#[derive(Debug)]
struct Entry {
    file: FileIdentity,
    orientation: u8,
    denominator: u64,
    bytes: usize,
    made: Instant,
    slot: Slot,
}

static DECODES: LazyLock<Mutex<Vec<Entry>>> = LazyLock::new(Mutex::default);

/// The upright pixels of `file` decoded at 1/`denominator` or larger: shared when another step
/// has (or is making) such a decode, else made by `decode` (and shared when it fits the budget).
pub(crate) fn decoded(
    file: Option<FileIdentity>,
    orientation: u8,
    denominator: u64,
    bytes: usize,
    decode: impl FnOnce() -> Result<Pixels, String>,
) -> Result<Arc<Pixels>, String> {
    let Some(file) = file.filter(|_| bytes <= BUDGET) else {
        return decode().map(Arc::new);
    };
    let slot = {
        let Ok(mut entries) = DECODES.lock() else {
            return decode().map(Arc::new);
        };
        let now = Instant::now();
        entries.retain(|e| now.duration_since(e.made) < KEEP);
        let found = entries
            .iter()
            .filter(|e| {
                e.file == file && e.orientation == orientation && e.denominator <= denominator
            })
            .max_by_key(|e| e.denominator)
            .map(|e| e.slot.clone());
        match found {
            Some(slot) => {
                // Made by another step: wait for it; a decode that panicked left nothing.
                drop(entries);
                return slot
                    .get_or_init(|| Err("the shared decode did not finish".into()))
                    .clone();
            }
            None => {
                let slot: Slot = Arc::default();
                entries.push(Entry {
                    file,
                    orientation,
                    denominator,
                    bytes,
                    made: now,
                    slot: slot.clone(),
                });
                // Oldest first out until the rest fits.
                let mut total: usize = entries.iter().map(|e| e.bytes).sum();
                while total > BUDGET && entries.len() > 1 {
                    total -= entries.remove(0).bytes;
                }
                slot
            }
        }
    };
    slot.get_or_init(|| decode().map(Arc::new)).clone()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn pixels(width: u32) -> Pixels {
        Pixels {
            width,
            height: 1,
            channels: 1,
            data: vec![0; width as usize],
        }
    }

    #[tokio::test]
    async fn a_decode_at_least_as_large_is_shared_and_a_smaller_one_is_not() {
        let file = tempfile::NamedTempFile::new().expect("file");
        let id = FileIdentity::of(file.path()).await.expect("identity");
        let decodes = AtomicUsize::new(0);
        let decode = |width| {
            decodes.fetch_add(1, Ordering::SeqCst);
            Ok(pixels(width))
        };
        let half = decoded(Some(id.clone()), 1, 2, 100, || decode(50)).expect("half");
        // An eighth is served by the half already made.
        let eighth = decoded(Some(id.clone()), 1, 8, 100, || decode(12)).expect("eighth");
        assert_eq!((half.width, eighth.width), (50, 50));
        assert_eq!(decodes.load(Ordering::SeqCst), 1);
        // The whole image is not, nor the same file turned another way.
        decoded(Some(id.clone()), 1, 1, 100, || decode(100)).expect("whole");
        decoded(Some(id), 6, 8, 100, || decode(12)).expect("turned");
        assert_eq!(decodes.load(Ordering::SeqCst), 3);
        // Without an identity nothing is shared.
        decoded(None, 1, 8, 100, || decode(12)).expect("private");
        assert_eq!(decodes.load(Ordering::SeqCst), 4);
    }
}
