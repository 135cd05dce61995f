//! Per-subject upload quotas: bytes charged over a sliding window (`--quota-bytes`,
//! `--quota-window`). Kept in process, so with several instances each enforces its own share.
//!
//! A file of known size is charged whole when it is admitted ([`Quota::reserve`]). A file whose
//! size is not known yet is charged as its bytes arrive ([`Quota::take`], through a
//! [`Meter`](crate::Meter)) and the rest once its size is declared ([`Quota::reserve_more`]);
//! bytes charged but never stored are given back ([`Quota::release`]), so a resumed upload is
//! charged once.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::AuthError;

/// Subjects kept before idle ones are forgotten in one sweep.
const SWEEP_AT: usize = 10_000;

/// Charges closer together than this share one entry, so a file charged chunk by chunk keeps
/// one entry per second, not one per chunk; its bytes leave the window with the entry's first
/// second (at most this much early).
const BUCKET: Duration = Duration::from_secs(1);

/// How many bytes each subject may upload per window.
#[derive(Debug)]
pub struct Quota {
    bytes: u64,
    window: Duration,
    /// Per subject: when each admitted upload was charged, and its size; oldest first.
    usage: Mutex<HashMap<String, VecDeque<(Instant, u64)>>>,
}

/// Whether a charge may be granted in part.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Grant {
    Whole,
    UpTo,
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
    /// size is charged nothing here (its bytes are charged as they arrive) but is refused once
    /// the quota is used up.
    pub fn reserve(&self, subject: &str, size: Option<u64>) -> Result<(), AuthError> {
        self.reserve_at(subject, size, Instant::now())
    }

    fn reserve_at(&self, subject: &str, size: Option<u64>, now: Instant) -> Result<(), AuthError> {
        if let Some(n) = size {
            return self.charge_at(subject, 0, n, Grant::Whole, now).1;
        }
        let mut usage = self.usage.lock().unwrap_or_else(|e| e.into_inner());
        let charges = self.charges(&mut usage, subject, now);
        let used = charges.iter().map(|(_, n)| n).sum();
        match used < self.bytes {
            true => Ok(()),
            false => Err(self.exhausted(charges, used, 1, now)),
        }
    }

    /// Charges `n` more bytes, all or none, to a file of which `before` bytes were charged
    /// already (a deferred length declared at last): refused as [`Quota::reserve`] refuses,
    /// the file being `before + n` bytes.
    pub fn reserve_more(&self, subject: &str, before: u64, n: u64) -> Result<(), AuthError> {
        self.charge_at(subject, before, n, Grant::Whole, Instant::now())
            .1
    }

    /// Charges up to `n` more bytes to a file of which `before` bytes were charged already
    /// (bytes arriving for a file of unknown size) and returns how many were granted; when
    /// fewer than `n`, also why.
    pub fn take(&self, subject: &str, before: u64, n: u64) -> (u64, Result<(), AuthError>) {
        self.charge_at(subject, before, n, Grant::UpTo, Instant::now())
    }

    /// Gives back `n` bytes charged to `subject` but never stored (a write cut short), newest
    /// charges first.
    pub fn release(&self, subject: &str, mut n: u64) {
        let mut usage = self.usage.lock().unwrap_or_else(|e| e.into_inner());
        let Some(charges) = usage.get_mut(subject) else {
            return;
        };
        while n > 0
            && let Some(last) = charges.back_mut()
        {
            let back = n.min(last.1);
            last.1 -= back;
            n -= back;
            if last.1 == 0 {
                charges.pop_back();
            }
        }
    }

    /// The one place charges are decided, under one lock so that concurrent uploads of a
    /// subject never both take the same room.
    fn charge_at(
        &self,
        subject: &str,
        before: u64,
        n: u64,
        grant: Grant,
        now: Instant,
    ) -> (u64, Result<(), AuthError>) {
        let file_room = self.bytes.saturating_sub(before);
        if grant == Grant::Whole && n > file_room {
            return (0, Err(self.over()));
        }
        let mut usage = self.usage.lock().unwrap_or_else(|e| e.into_inner());
        let charges = self.charges(&mut usage, subject, now);
        let used: u64 = charges.iter().map(|(_, n)| n).sum();
        let room = file_room.min(self.bytes.saturating_sub(used));
        let granted = match grant {
            _ if n <= room => n,
            Grant::UpTo => room,
            Grant::Whole => 0,
        };
        if granted > 0 {
            match charges.back_mut() {
                Some(last) if now.duration_since(last.0) < BUCKET => last.1 += granted,
                _ => charges.push_back((now, granted)),
            }
        }
        if granted == n {
            return (granted, Ok(()));
        }
        let refusal = match n > file_room {
            true => self.over(),
            false => self.exhausted(charges, used + granted, n - granted, now),
        };
        (granted, Err(refusal))
    }

    fn over(&self) -> AuthError {
        AuthError::OverQuota {
            quota: self.bytes,
            window: self.window.as_secs(),
        }
    }

    /// The refusal of `wanted` more bytes with `used` in the window: how long until the oldest
    /// `charges` leave enough room.
    fn exhausted(
        &self,
        charges: &VecDeque<(Instant, u64)>,
        used: u64,
        wanted: u64,
        now: Instant,
    ) -> AuthError {
        let mut left = used;
        let mut free_at = now;
        for (at, n) in charges {
            left = left.saturating_sub(*n);
            free_at = *at + self.window;
            if left + wanted <= self.bytes {
                break;
            }
        }
        let wait = free_at.saturating_duration_since(now);
        AuthError::QuotaExhausted {
            used,
            quota: self.bytes,
            window: self.window.as_secs(),
            retry_after: wait.as_secs() + u64::from(wait.subsec_nanos() > 0),
        }
    }

    /// `subject`'s charges still in the window ending `now`; older ones are forgotten.
    fn charges<'a>(
        &self,
        usage: &'a mut HashMap<String, VecDeque<(Instant, u64)>>,
        subject: &str,
        now: Instant,
    ) -> &'a mut VecDeque<(Instant, u64)> {
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
        charges
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

    #[test]
    fn bytes_arriving_are_granted_up_to_the_quota_and_given_back_when_not_stored() {
        let quota = Quota::new(100, Duration::from_secs(60));
        let t0 = Instant::now();
        assert_eq!(quota.charge_at("a", 0, 30, Grant::Whole, t0), (30, Ok(())));
        // A second file: 50 arrive, then 40 more of which 20 fit the window.
        assert_eq!(quota.charge_at("a", 0, 50, Grant::UpTo, t0), (50, Ok(())));
        assert_eq!(
            quota.charge_at("a", 50, 40, Grant::UpTo, t0 + Duration::from_secs(5)),
            (
                20,
                Err(AuthError::QuotaExhausted {
                    used: 100,
                    quota: 100,
                    window: 60,
                    retry_after: 55
                })
            )
        );
        // A file that alone outgrows the quota is told so, whatever the window holds.
        quota.release("a", 100);
        assert_eq!(
            quota.charge_at("a", 90, 20, Grant::UpTo, t0),
            (10, Err(quota.over()))
        );
        assert_eq!(
            quota.charge_at("a", 90, 20, Grant::Whole, t0),
            (0, Err(quota.over()))
        );
        // Given back newest first: 10 of the 10 just taken leave 0 charged.
        quota.release("a", 10);
        assert_eq!(quota.reserve_at("a", Some(100), t0), Ok(()));
    }
}
