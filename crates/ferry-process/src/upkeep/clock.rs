//! The time the upkeep reads (retention, abandoned uploads, per-client windows): the system's,
//! or in tests a manual clock that starts at the system's time and is moved forward by hand, so
//! a 24-hour retention is tested without waiting a day.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

/// Now, as the upkeep sees it; cheap to clone (clones of a manual clock move together).
#[derive(Clone, Default)]
pub struct Clock {
    /// Milliseconds added to the system's time; `None` for the system clock.
    offset: Option<Arc<AtomicI64>>,
}

impl Clock {
    /// The system's clock.
    pub fn system() -> Self {
        Self::default()
    }

    /// A clock at the system's time until [`Clock::advance`] moves it.
    pub fn manual() -> Self {
        Self {
            offset: Some(Arc::new(AtomicI64::new(0))),
        }
    }

    /// Moves a manual clock forward by `by` (the system clock does not move).
    pub fn advance(&self, by: Duration) {
        if let Some(offset) = &self.offset {
            let ms = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
            offset.fetch_add(ms, Ordering::SeqCst);
        }
    }

    /// The current time.
    pub fn now(&self) -> Timestamp {
        let now = Timestamp::now();
        match &self.offset {
            None => now,
            Some(offset) => {
                let ms = offset.load(Ordering::SeqCst);
                now.checked_add(SignedDuration::from_millis(ms))
                    .unwrap_or(now)
            }
        }
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.offset {
            None => f.write_str("Clock::system"),
            Some(o) => write!(f, "Clock::manual(+{} ms)", o.load(Ordering::SeqCst)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told_and_its_clones_follow() {
        let clock = Clock::manual();
        let copy = clock.clone();
        let before = copy.now();
        clock.advance(Duration::from_secs(25 * 3600));
        let gap = copy.now().duration_since(before);
        assert!(gap >= SignedDuration::from_hours(25), "{gap:?}");
        Clock::system().advance(Duration::from_secs(3600));
        let drift = Clock::system().now().duration_since(Timestamp::now());
        assert!(drift < SignedDuration::from_secs(60), "{drift:?}");
    }
}
