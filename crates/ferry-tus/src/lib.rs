//! A tus 1.0.0 resumable-upload server as a library.
//!
//! The crate knows nothing of the companion or of the binary that mounts it. The protocol layer
//! parses and renders headers without doing I/O; stores keep bytes and know nothing of HTTP; the
//! handler glues the two and advertises only the extensions the configured store supports.
//!
//! # Layout
//!
//! - [`protocol`]: header names, `Upload-Metadata` parsing, the error table (no I/O).
//! - [`store`]: the [`store::Store`] trait, its optional capabilities, and the stores
//!   ([`store::fs::FsStore`] on local disk).
//! - [`handler`]: the axum router, one module per verb.
//! - [`id`]: server-generated upload ids; anything else is rejected before touching storage.
//! - [`lock`]: one writer per upload.

pub mod handler;
pub mod id;
pub mod lock;
pub mod protocol;
pub mod store;

pub use handler::{TusConfig, TusState, router};
pub use id::UploadId;
pub use store::{Store, StoreError, UploadInfo};
