//! A tus 1.0.0 resumable-upload server as a library.
//!
//! The crate knows nothing of the companion or of the binary that mounts it. The protocol layer
//! parses and renders headers without doing I/O; stores keep bytes and know nothing of HTTP; the
//! handler glues the two and advertises only the extensions the configured store supports.
//!
//! # Layout
//!
//! - [`protocol`]: the wire vocabulary with no I/O and no axum (it depends on `http` only):
//!   header names and numeric parsers, `Upload-Metadata`, `Upload-Checksum`, `Upload-Concat`,
//!   the IETF draft's headers, and the error table.
//! - [`store`]: the [`store::Store`] trait, its optional capabilities, the conformance suite,
//!   and the stores: [`store::fs::FsStore`] on local disk and, with the `s3` feature,
//!   `store::s3::S3Store` in a bucket.
//! - [`handler`]: the axum router, one module per verb, over one write path shared by tus and
//!   the IETF draft; errors become answers here.
//! - [`id`]: server-generated upload ids; anything else is rejected before touching storage.
//! - [`lock`]: one writer per upload, as the [`lock::UploadLock`] trait with an in-process
//!   implementation.

pub mod handler;
pub mod id;
pub mod lock;
pub mod protocol;
pub mod store;

pub use handler::{TusApi, TusConfig, TusState, router};
pub use id::UploadId;
pub use store::{Store, StoreError, UploadInfo};
