//! The tus 1.0.0 wire vocabulary: header names, versions, and parsers for header values.
//! Nothing here does I/O, so every rule can be tested as a table.

pub mod checksum;
pub mod concat;
pub mod error;
pub mod headers;
pub mod ietf;
pub mod metadata;

pub use concat::ConcatRequest;
pub use error::TusError;
pub use metadata::Metadata;

/// The only protocol version this server speaks.
pub const TUS_VERSION: &str = "1.0.0";

/// The media type of a PATCH body.
pub const OFFSET_OCTET_STREAM: &str = "application/offset+octet-stream";
