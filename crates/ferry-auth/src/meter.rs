//! Charging a file of unknown size as its bytes arrive: a [`Meter`] is the [`Budget`] a request
//! body is read under ([`ferry_body::Metered`]), so the body stops the moment the subject's
//! quota would be crossed, and the refusal is the quota's own (413 or 429 with its message).
//! Bytes charged but not stored are given back, so a resumed upload is charged once.

use std::sync::{Arc, Mutex};

use ferry_body::Budget;

use crate::error::AuthError;
use crate::quota::Quota;

/// The charges of one request's body for one file. Clones share them, so the route keeps one
/// while the body reads with another.
#[derive(Clone, Debug)]
pub struct Meter {
    quota: Arc<Quota>,
    subject: Arc<str>,
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    /// Bytes of the file charged so far, before this request and by it.
    file: u64,
    /// Bytes this meter charged (and still holds).
    charged: u64,
    /// Why the last charge was cut short.
    refusal: Option<AuthError>,
}

impl Meter {
    /// A meter for `subject`'s file of which `before` bytes were charged already.
    pub(crate) fn new(quota: Arc<Quota>, subject: &str, before: u64) -> Self {
        Self {
            quota,
            subject: Arc::from(subject),
            state: Arc::new(Mutex::new(State {
                file: before,
                ..State::default()
            })),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock only means a reader panicked mid-chunk; the counts are still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Charges `n` bytes, all or none (a body whose length the client declared, before it is
    /// read); the refusal is the quota's.
    pub fn reserve(&self, n: u64) -> Result<(), AuthError> {
        let mut state = self.state();
        self.quota.reserve_more(&self.subject, state.file, n)?;
        state.file += n;
        state.charged += n;
        Ok(())
    }

    /// Why the body was stopped, when it was.
    pub fn refusal(&self) -> Option<AuthError> {
        self.state().refusal.clone()
    }

    /// Bytes this meter charged.
    pub fn charged(&self) -> u64 {
        self.state().charged
    }

    /// Keeps only `stored` of the bytes this meter charged and gives the rest back (bytes read
    /// but not stored: a chunk cut off, a write that failed, a file not kept).
    pub fn keep(&self, stored: u64) {
        let mut state = self.state();
        let back = state.charged.saturating_sub(stored);
        if back > 0 {
            self.quota.release(&self.subject, back);
            state.charged -= back;
            state.file -= back;
        }
    }
}

impl Budget for Meter {
    fn take(&mut self, n: u64) -> u64 {
        let mut state = self.state();
        let (granted, outcome) = self.quota.take(&self.subject, state.file, n);
        state.file += granted;
        state.charged += granted;
        if let Err(refusal) = outcome {
            state.refusal = Some(refusal);
        }
        granted
    }
}
