//! One decode of an upload for the resize steps that run on it at about the same time: an
//! Assembly's thumbnail, large JPEG and WebP of one photo each need it decoded, and the decode is
//! most of their work. A step that finds a decode of the same file (same [`FileIdentity`], same
//! orientation) at least as large as it needs, finished or still running, uses that one;
//! otherwise it makes one and offers it ([`claim`]). A step waits for another's decode
//! asynchronously ([`made`]), outside the image threads, so no thread sits idle while another
//! decodes. Kept briefly and within a byte budget, the oldest dropped first, so this never holds
//! more than [`BUDGET`] once the steps are done.

use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::pixels::Pixels;
use crate::engines::cache::FileIdentity;

/// Bytes of decoded pixels kept for other steps: two 12 MP photos decoded at 1/2 (9 MB each) and
/// their thumbnails' eighths, for two Assemblies at once.
pub(crate) const BUDGET: usize = 24 * 1024 * 1024;

/// How long a decode is offered after it was made: an Assembly's steps on one upload start
/// within a fraction of a second of each other.
const KEEP: Duration = Duration::from_secs(3);

/// A decode's outcome: the upright pixels, or why the decoder gave up.
pub(crate) type Decoded = Result<Arc<Pixels>, String>;

/// `None` until the decode ends.
type Slot = watch::Receiver<Option<Decoded>>;

#[derive(Debug)]
struct Entry {
    file: FileIdentity,
    orientation: u8,
    denominator: u64,
    bytes: usize,
    made: Instant,
    slot: Slot,
}

impl Entry {
    /// The step making it stopped (canceled, out of time, panicked) before it ended.
    fn abandoned(&self) -> bool {
        self.slot.borrow().is_none() && self.slot.has_changed().is_err()
    }
}

static DECODES: LazyLock<Mutex<Vec<Entry>>> = LazyLock::new(Mutex::default);

/// What a step does for its pixels.
#[derive(Debug)]
pub(crate) enum Claim {
    /// Another step's decode, finished or running: [`made`] gives it.
    Shared(Slot),
    /// This step decodes, and hands the outcome to any step waiting ([`Maker::publish`]).
    Make(Maker),
}

/// The step that makes a decode; dropping it unpublished tells the waiting steps to decode for
/// themselves.
#[derive(Debug)]
pub(crate) struct Maker(Option<watch::Sender<Option<Decoded>>>);

impl Maker {
    /// A decode offered to no one.
    pub(crate) fn private() -> Self {
        Self(None)
    }

    /// Hands `decoded` to the steps that share it, and back.
    pub(crate) fn publish(self, decoded: Decoded) -> Decoded {
        if let Some(tx) = &self.0 {
            tx.send_replace(Some(decoded.clone()));
        }
        decoded
    }
}

/// The decode of `file` at 1/`denominator` (`bytes` of pixels, upright by `orientation`) for a
/// step: another step's at least as large when there is one, else this step's to make (offered
/// to the others when it fits the budget).
pub(crate) fn claim(
    file: Option<FileIdentity>,
    orientation: u8,
    denominator: u64,
    bytes: usize,
) -> Claim {
    let Some(file) = file.filter(|_| bytes <= BUDGET) else {
        return Claim::Make(Maker::private());
    };
    let Ok(mut entries) = DECODES.lock() else {
        return Claim::Make(Maker::private());
    };
    let now = Instant::now();
    entries.retain(|e| now.duration_since(e.made) < KEEP && !e.abandoned());
    let found = entries
        .iter()
        .filter(|e| e.file == file && e.orientation == orientation && e.denominator <= denominator)
        .max_by_key(|e| e.denominator);
    if let Some(entry) = found {
        return Claim::Shared(entry.slot.clone());
    }
    let (tx, slot) = watch::channel(None);
    entries.push(Entry {
        file,
        orientation,
        denominator,
        bytes,
        made: now,
        slot,
    });
    // Oldest first out until the rest fits.
    let mut total: usize = entries.iter().map(|e| e.bytes).sum();
    while total > BUDGET && entries.len() > 1 {
        total -= entries.remove(0).bytes;
    }
    Claim::Make(Maker(Some(tx)))
}

/// Waits for another step's decode: `None` when that step stopped before it ended (this step
/// then decodes for itself).
pub(crate) async fn made(mut slot: Slot) -> Option<Decoded> {
    slot.wait_for(Option::is_some)
        .await
        .ok()
        .and_then(|v| v.clone())
}

/// The denominators of the decodes of `file` on offer, for tests.
#[cfg(test)]
pub(crate) fn offered(file: &FileIdentity) -> Vec<u64> {
    DECODES.lock().map_or_else(
        |_| Vec::new(),
        |entries| {
            entries
                .iter()
                .filter(|e| &e.file == file)
                .map(|e| e.denominator)
                .collect()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pixels(width: u32) -> Decoded {
        Ok(Arc::new(Pixels {
            width,
            height: 1,
            channels: 1,
            data: vec![0; width as usize],
        }))
    }

    async fn width(claim: Claim, make: u32) -> u32 {
        let decoded = match claim {
            Claim::Shared(slot) => made(slot).await.expect("made"),
            Claim::Make(maker) => maker.publish(pixels(make)),
        };
        decoded.expect("pixels").width
    }

    #[tokio::test]
    async fn a_decode_at_least_as_large_is_shared_and_a_smaller_one_is_not() {
        let file = tempfile::NamedTempFile::new().expect("file");
        let id = FileIdentity::of(file.path()).await.expect("identity");
        let half = claim(Some(id.clone()), 1, 2, 100);
        assert!(matches!(half, Claim::Make(_)));
        // An eighth asked for while the half is still being made waits for it.
        let eighth = claim(Some(id.clone()), 1, 8, 100);
        let Claim::Shared(slot) = eighth else {
            panic!("not shared: {eighth:?}")
        };
        let waiting = tokio::spawn(made(slot));
        assert_eq!(width(half, 50).await, 50);
        let shared = waiting.await.expect("join").expect("made").expect("pixels");
        assert_eq!(shared.width, 50);
        // The whole image is not served by the half, nor the same file turned another way.
        assert!(matches!(claim(Some(id.clone()), 1, 1, 100), Claim::Make(_)));
        assert!(matches!(claim(Some(id.clone()), 6, 8, 100), Claim::Make(_)));
        // Without an identity nothing is shared.
        assert!(matches!(claim(None, 1, 8, 100), Claim::Make(Maker(None))));
    }

    #[tokio::test]
    async fn a_decode_abandoned_by_its_maker_sends_the_waiters_to_decode_for_themselves() {
        let file = tempfile::NamedTempFile::new().expect("file");
        let id = FileIdentity::of(file.path()).await.expect("identity");
        let maker = claim(Some(id.clone()), 1, 4, 100);
        let Claim::Shared(slot) = claim(Some(id.clone()), 1, 4, 100) else {
            panic!("not shared")
        };
        drop(maker);
        assert!(made(slot).await.is_none());
        // The abandoned one is no longer offered.
        assert!(matches!(
            claim(Some(id), 1, 4, 100),
            Claim::Make(Maker(Some(_)))
        ));
    }
}
