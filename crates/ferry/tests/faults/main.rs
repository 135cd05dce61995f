//! The fault suite: `ferry` (the real binary) under the faults a deployment meets, each test
//! named after what it proves. Nothing acknowledged is lost, nothing waits forever, and every
//! fault is answered for what it is.
//!
//! - [`disk`]: a full disk (a tiny tmpfs in a private mount namespace) answers 507 and keeps
//!   what was stored; freed space lets the upload finish byte-exact.
//! - [`crashes`]: `kill -9` again and again with many uploads in flight.
//! - [`network`]: connections cut mid-PATCH, stalled bodies, trickling clients.
//!
//! Figures (kills survived, bytes re-sent, time to recover) are printed with `--nocapture` and
//! kept in `bench/README.md`.

mod common;
mod crashes;
mod disk;
mod network;
