//! Ferry's one S3 layer. The tus S3 store, the companion's signing routes and its s3-multipart
//! transfers all reach object storage through this crate, so S3's quirks (an error inside a
//! 200 answer, paged listings, the part limits) are handled once.
//!
//! Requests are presigned with `rusty-s3` (SigV4 without I/O) right before they are sent with
//! one `reqwest` client.
//!
//! # Layout
//!
//! - [`bucket`]: [`S3Bucket`], where and how to reach a bucket (its secret key a
//!   [`ferry_auth::Secret`]).
//! - [`client`]: [`S3Client`], every call Ferry makes (multipart, listing, get/put/delete).
//! - [`error`]: [`S3Error`], the one error type.
//! - [`timeouts`]: [`S3Timeouts`], the connect and idle bounds on every call.
//! - `xml`: reading the few fields Ferry needs from S3's small, flat XML answers.

pub mod bucket;
pub mod client;
pub mod error;
mod retry;
pub mod timeouts;
mod xml;

pub use bucket::S3Bucket;
pub use client::{Part, S3Client};
pub use error::S3Error;
pub use timeouts::{Payload, S3Timeouts};

/// The smallest part S3 accepts, except for the last one.
pub const MIN_PART: u64 = 5 * 1024 * 1024;
/// The most parts one multipart upload may have.
pub const MAX_PARTS: u16 = 10_000;
