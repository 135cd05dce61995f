//! The fault suite: `ferry` (the real binary) under the faults a deployment meets, each test
//! named after what it proves. Nothing acknowledged is lost, nothing waits forever, and every
//! fault is answered for what it is.
//!
//! - [`disk`]: a full disk (a tiny tmpfs in a private mount namespace) answers 507 and keeps
//!   what was stored; freed space lets the upload finish byte-exact.
//! - [`crashes`]: `kill -9` again and again with many uploads in flight.
//! - [`network`]: connections cut mid-PATCH, stalled bodies, trickling clients.
//! - [`s3`]: S3 behind the fault proxy: a part that never answers ends the PATCH with 503
//!   within the S3 idle timeout, HEAD answers, and the upload resumes byte-exact; S3 cut off
//!   answers 503 with a message; Garage killed and restarted mid-uploads loses nothing
//!   acknowledged.
//! - [`redis`]: Redis killed and restarted under two instances.
//!
//! Figures (kills survived, bytes re-sent, time to recover) are printed with `--nocapture` and
//! kept in `bench/README.md`.

#[path = "../common/mod.rs"]
mod common;
mod crashes;
mod disk;
mod network;
#[cfg(feature = "s3")]
mod redis;
mod resume;
#[cfg(feature = "s3")]
mod s3;
mod tus;
