//! Where a transfer's bytes go. A destination parses its own fields of the `/url/get` body,
//! then the engine calls [`Destination::attempt`] until one finishes: again after a pause, and
//! after a retryable failure when [`Destination::retries`] says so. A new destination is one
//! file implementing the trait plus one line in [`PROTOCOLS`].

use ferry_hooks::Storage;
use url::Url;

use super::request::UploadBody;
use super::{Done, Transfer, TransferError, multipart, s3, tus};
use crate::error::CompanionError;
use crate::state::AppState;

/// One upload to a destination, driven over one or more attempts.
#[async_trait::async_trait]
pub trait Destination: Send + std::fmt::Debug {
    /// One attempt, from wherever the destination stands to the end of the source. The future
    /// is dropped when the client pauses or cancels or the transfer stalls; the next attempt
    /// starts over from what the destination kept.
    async fn attempt(&mut self, transfer: &Transfer) -> Result<Done, TransferError>;

    /// Best-effort cleanup after the client cancelled (terminate, abort).
    async fn cancel(&mut self, _transfer: &Transfer) {}

    /// Takes over what another instance recorded with [`Transfer::remember`] (an upload URL,
    /// a multipart upload), so the first attempt here continues that upload. A destination
    /// that cannot resume ignores them and starts over.
    fn restore(&mut self, _hints: &crate::jobs::Hints) {}

    /// Whether a [`TransferError::Retryable`] failure is worth another attempt (with the
    /// configured delays); otherwise it ends the transfer.
    fn retries(&self) -> bool {
        false
    }

    /// Where a finished transfer stored the file, for hooks (tusd's `Storage` vocabulary):
    /// `Type` names the destination, `URL` is the uploaded file's URL.
    fn storage(&self, done: &Done) -> Storage {
        Storage::default()
            .with("Type", "url")
            .with("URL", done.url.as_str())
    }
}

/// Builds a protocol's destination from the body; `endpoint` is the body's `endpoint`, already
/// held to the allowlist.
type Parse =
    fn(&AppState, &UploadBody, Option<Url>) -> Result<Box<dyn Destination>, CompanionError>;

/// The protocols `/url/get` accepts (Companion's names).
const PROTOCOLS: &[(&str, Parse)] = &[
    ("tus", tus::TusDestination::parse),
    ("multipart", multipart::MultipartDestination::parse),
    ("s3-multipart", s3::S3Destination::parse),
];

/// The destination `body.protocol` names (`multipart` when absent).
pub fn parse(
    state: &AppState,
    body: &UploadBody,
    endpoint: Option<Url>,
) -> Result<Box<dyn Destination>, CompanionError> {
    let protocol = body.protocol.as_deref().unwrap_or("multipart");
    let (_, parse) = PROTOCOLS
        .iter()
        .find(|(name, _)| *name == protocol)
        .ok_or_else(|| CompanionError::BadRequest("unsupported protocol specified".into()))?;
    parse(state, body, endpoint)
}
