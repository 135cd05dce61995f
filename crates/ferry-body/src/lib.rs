//! Request bodies as Ferry's upload routes read them (tus, the IETF draft, the form and raw
//! endpoints): one rule for a stalled body, one way to stop a body when a limit is reached, and
//! one way to tell afterwards why a body stopped.
//!
//! A body is read as a stream of `io::Result<Bytes>` chunks, so the stores and the form writer
//! need not know which rule ended it: the error's kind says, and [`Stop::of`] reads it back.
//!
//! # Layout
//!
//! - [`guarded`]: [`GuardedBody`], a body cut off when it delivers less than [`MIN_PROGRESS`]
//!   bytes in one idle window or when its stop signal fires (a newer request for the same
//!   upload).
//! - [`budget`]: [`Metered`], a body that draws every chunk from a [`Budget`] (a quota) and
//!   ends, after the bytes that fitted, once the budget says no more.

pub mod budget;
pub mod guarded;

use std::io;

pub use budget::{Budget, Metered};
pub use guarded::{GuardedBody, MIN_PROGRESS, StopCell, Trailers};

// The error kinds a body ends with, one per reason. Not `Interrupted`: copy loops retry that
// kind forever.
const SUPERSEDED: io::ErrorKind = io::ErrorKind::ResourceBusy;
const IDLE: io::ErrorKind = io::ErrorKind::TimedOut;
const CLIENT_GONE: io::ErrorKind = io::ErrorKind::ConnectionAborted;
// Not `QuotaExceeded` or `StorageFull`: those are a full disk's, answered 507.
const OVER_BUDGET: io::ErrorKind = io::ErrorKind::FileTooLarge;

/// Why a body stopped before its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Its stop signal fired: a newer request for the same upload took over.
    Superseded,
    /// It delivered less than [`MIN_PROGRESS`] bytes in one idle window.
    Idle,
    /// The client's body failed (connection cut, malformed chunking).
    ClientGone,
    /// Its [`Budget`] ran out; the budget knows which limit.
    OverBudget,
}

impl Stop {
    /// The reason of an error a guarded or metered body ended with; `None` for any other error
    /// (a disk's own, say).
    pub fn of(e: &io::Error) -> Option<Self> {
        match e.kind() {
            SUPERSEDED => Some(Self::Superseded),
            IDLE => Some(Self::Idle),
            CLIENT_GONE => Some(Self::ClientGone),
            OVER_BUDGET => Some(Self::OverBudget),
            _ => None,
        }
    }

    /// The error a body ends with for this reason.
    pub fn error(self) -> io::Error {
        let (kind, text) = match self {
            Self::Superseded => (SUPERSEDED, "superseded"),
            Self::Idle => (IDLE, "body idle"),
            Self::ClientGone => (CLIENT_GONE, "body failed"),
            Self::OverBudget => (OVER_BUDGET, "over budget"),
        };
        io::Error::new(kind, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reason_is_read_back_from_its_error() {
        for stop in [
            Stop::Superseded,
            Stop::Idle,
            Stop::ClientGone,
            Stop::OverBudget,
        ] {
            assert_eq!(Stop::of(&stop.error()), Some(stop));
        }
        assert_eq!(Stop::of(&io::Error::other("disk")), None);
    }
}
