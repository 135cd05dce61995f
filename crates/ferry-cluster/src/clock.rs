//! The crate's two clock conversions, for Redis arguments: a duration in whole milliseconds
//! (`PX`, `PEXPIRE`, idle times) and the wall clock in Unix milliseconds (record timestamps and
//! the publish time in replay envelopes, which other instances compare with their own clock).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `d` in whole milliseconds, saturating.
pub(crate) fn ms(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

/// Milliseconds since the Unix epoch (0 for a clock set before 1970).
pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, ms)
}
