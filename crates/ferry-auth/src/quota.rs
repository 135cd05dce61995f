//! Per-subject upload quotas: bytes declared over a sliding window (`--quota-bytes`,
//! `--quota-window`). Kept in process, so with several instances each enforces its own share.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::AuthError;

/// Subjects kept before idle ones are forgotten in one sweep.
const SWEEP_AT: usize = 10_000;

/// How many bytes each subject may upload per window.
#[derive(Debug)]
pub struct Quota {
    bytes: u64,
    window: Duration,
    /// Per subject: when each admitted upload was charged, and its size; oldest first.
    usage: Mutex<HashMap<String, VecDeque<(Instant, u64)>>>,
}

impl Quota {
    pub fn new(bytes: u64, window: Duration) -> Self {
        Self {
            bytes,
            window,
            usage: Mutex::new(HashMap::new()),
        }
    }

    /// Charges `size` bytes to `subject`, or refuses: 413 when the file alone exceeds the
    /// quota, 429 (with the wait) when what is left in the window does not hold it. An unknown
    /// size is charged nothing but still refused once the quota is used up.
    pub fn reserve(&self, subject: &str, size: Option<u64>) -> Result<(), AuthError> {
        self.reserve_at(subject, size, Instant::now())
    }

    fn reserve_at(&self, subject: &str, size: Option<u64>, now: Instant) -> Result<(), AuthError> {
        let window = self.window.as_secs();
        let wanted = size.unwrap_or(0);
        if wanted > self.bytes {
            return Err(AuthError::OverQuota {
                quota: self.bytes,
                window,
            });
        }
        // A poisoned lock only means another request panicked mid-update; the counts are
        // still usable.
        let mut usage = self.usage.lock().unwrap_or_else(|e| e.into_inner());
        if usage.len() >= SWEEP_AT {
            usage.retain(|_, charges| {
                charges.retain(|(at, _)| now.duration_since(*at) < self.window);
                !charges.is_empty()
            });
        }
        let charges = usage.entry(subject.to_owned()).or_default();
        while charges
            .front()
            .is_some_and(|(at, _)| now.duration_since(*at) >= self.window)
        {
            charges.pop_front();
        }
        let used: u64 = charges.iter().map(|(_, n)| n).sum();
        let fits = |used: u64| match size {
            Some(n) => used + n <= self.bytes,
            None => used < self.bytes,
        };
        if !fits(used) {
            // The wait: until enough of the oldest charges leave the window.
            let mut left = used;
            let mut free_at = now;
            for (at, n) in charges.iter() {
                left -= n;
                free_at = *at + self.window;
                if fits(left) {
                    break;
                }
            }
            let wait = free_at.saturating_duration_since(now);
            return Err(AuthError::QuotaExhausted {
                used,
                quota: self.bytes,
                window,
                retry_after: wait.as_secs() + u64::from(wait.subsec_nanos() > 0),
            });
        }
        if wanted > 0 {
            charges.push_back((now, wanted));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_leave_the_window_and_the_wait_is_exact() {
        let quota = Quota::new(100, Duration::from_secs(60));
        let t0 = Instant::now();
        assert_eq!(quota.reserve_at("a", Some(60), t0), Ok(()));
        assert_eq!(
            quota.reserve_at("a", Some(30), t0 + Duration::from_secs(10)),
            Ok(())
        );
        // Another subject has its own quota.
        assert_eq!(quota.reserve_at("b", Some(100), t0), Ok(()));
        // 90 used; 20 more needs the first charge (60 at t0) to leave: at t0+60, 30 s from now.
        assert_eq!(
            quota.reserve_at("a", Some(20), t0 + Duration::from_secs(30)),
            Err(AuthError::QuotaExhausted {
                used: 90,
                quota: 100,
                window: 60,
                retry_after: 30
            })
        );
        assert_eq!(
            quota.reserve_at("a", Some(20), t0 + Duration::from_secs(60)),
            Ok(())
        );
        assert_eq!(
            quota.reserve_at("a", Some(101), t0),
            Err(AuthError::OverQuota {
                quota: 100,
                window: 60
            })
        );
    }

    #[test]
    fn unknown_sizes_pass_until_the_quota_is_used_up() {
        let quota = Quota::new(10, Duration::from_secs(60));
        let t0 = Instant::now();
        assert_eq!(quota.reserve_at("a", None, t0), Ok(()));
        assert_eq!(quota.reserve_at("a", Some(10), t0), Ok(()));
        assert!(matches!(
            quota.reserve_at("a", None, t0),
            Err(AuthError::QuotaExhausted {
                retry_after: 60,
                ..
            })
        ));
    }
}
