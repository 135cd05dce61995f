//! Where a transfer's bytes come from. A source opens its file at a byte offset (destinations
//! resume from where they stopped) and says what it knows of the file; the engine does the rest
//! (length checks, the size cap, progress, the stall watchdog, pause / resume / cancel). The
//! first source is a public URL ([`super::url_source`]); a cloud provider's download is another
//! file implementing [`Source`].

use bytes::Bytes;
use futures_util::stream::BoxStream;

use super::TransferError;

/// The bytes of an open source; an error ends the transfer's attempt with it.
pub type ByteStream = BoxStream<'static, Result<Bytes, TransferError>>;

/// A source opened at some offset.
pub struct Opened {
    pub stream: ByteStream,
    /// Leading bytes of `stream` to discard: the source could not start at the offset asked
    /// for and sent the file from an earlier byte (the start, for a server ignoring `Range`).
    pub skip: u64,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("skip", &self.skip)
            .finish_non_exhaustive()
    }
}

/// A file to read, from any byte, as often as the destination needs.
#[async_trait::async_trait]
pub trait Source: Send + Sync + std::fmt::Debug {
    /// Opens the file at byte `from`. Failures worth another attempt (network, 5xx) are
    /// [`TransferError::Retryable`]; a refusal is [`TransferError::Fatal`]. A source reopened
    /// after a pause must make sure it still reads the same file (e.g. with `If-Range`).
    async fn open(&self, from: u64) -> Result<Opened, TransferError>;

    /// The file's full length, when known (for some sources only once opened).
    fn size(&self) -> Option<u64>;

    /// The file's name as the source knows it, when it has one.
    fn name(&self) -> Option<String>;

    /// Where the file came from, for hooks (`Storage.Source`): a URL, or a provider's name for
    /// the file.
    fn origin(&self) -> Option<String> {
        None
    }

    /// What identifies this version of the file (an `ETag` or `Last-Modified`), once known,
    /// so another instance resuming the transfer reads the same file.
    fn validator(&self) -> Option<String> {
        None
    }

    /// Takes a validator recorded by another instance (before the first open here).
    fn restore_validator(&self, _validator: &str) {}
}
