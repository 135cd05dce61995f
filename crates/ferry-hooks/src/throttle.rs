//! When to send post-receive: at most once per progress interval for one upload, only when the
//! offset moved, and once more when the request ends if the last bytes were not reported yet.
//! That is tusd's rhythm (`sendProgressMessages` in `pkg/handler/unrouted_handler.go`: a tick
//! per interval emitting only a changed offset, and a last emission when the request is done),
//! driven by the writes themselves instead of a timer task per request.

use std::time::Duration;

use tokio::time::Instant;

/// Decides, write by write, whether a post-receive is due. One per writing request.
#[derive(Debug, Clone)]
pub struct ProgressThrottle {
    interval: Duration,
    last_sent: Instant,
    last_offset: u64,
}

impl ProgressThrottle {
    /// Starts the clock now, for a request that begins writing at `start_offset`. The first
    /// post-receive is due one interval later, as in tusd.
    pub fn new(interval: Duration, start_offset: u64) -> Self {
        Self {
            interval,
            last_sent: Instant::now(),
            last_offset: start_offset,
        }
    }

    /// After a write reached `offset`: `true` if a post-receive should be sent now.
    pub fn tick(&mut self, offset: u64) -> bool {
        let now = Instant::now();
        if offset == self.last_offset || now.duration_since(self.last_sent) < self.interval {
            return false;
        }
        self.last_sent = now;
        self.last_offset = offset;
        true
    }

    /// When the request ends at `offset`: `true` if that offset was not reported yet.
    pub fn finish(&mut self, offset: u64) -> bool {
        if offset == self.last_offset {
            return false;
        }
        self.last_sent = Instant::now();
        self.last_offset = offset;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn emits_once_per_interval_only_when_the_offset_moved() {
        let interval = Duration::from_millis(1000);
        let mut throttle = ProgressThrottle::new(interval, 100);
        // Writes within the first interval are not reported.
        assert!(!throttle.tick(200));
        tokio::time::advance(Duration::from_millis(999)).await;
        assert!(!throttle.tick(300));
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(throttle.tick(400));
        // The interval restarts from the emission.
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(!throttle.tick(500));
        tokio::time::advance(Duration::from_millis(600)).await;
        assert!(throttle.tick(600));
        // A stalled upload (same offset) is not reported again, however long it waits.
        tokio::time::advance(Duration::from_secs(60)).await;
        assert!(!throttle.tick(600));
        // The end of the request reports the last offset once.
        assert!(throttle.finish(650));
        assert!(!throttle.finish(650));
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_that_wrote_nothing_reports_nothing() {
        let mut throttle = ProgressThrottle::new(Duration::from_secs(1), 42);
        tokio::time::advance(Duration::from_secs(5)).await;
        assert!(!throttle.tick(42));
        assert!(!throttle.finish(42));
    }

    #[tokio::test(start_paused = true)]
    async fn a_short_request_is_reported_at_its_end() {
        let mut throttle = ProgressThrottle::new(Duration::from_secs(1), 0);
        assert!(!throttle.tick(10));
        tokio::time::advance(Duration::from_millis(20)).await;
        assert!(!throttle.tick(20));
        assert!(throttle.finish(20));
    }
}
