//! Every error the tus endpoint answers with: one status and one stable message per case,
//! defined here once. Internal causes are logged, never sent to the client. Rendering the answer
//! is the handler's job (`handler/error.rs`).

use http::StatusCode;

use super::concat::MAX_CONCAT_PARTS;

#[derive(Debug, thiserror::Error)]
pub enum TusError {
    #[error("unsupported tus version; this server speaks 1.0.0")]
    UnsupportedVersion,
    #[error("upload not found")]
    NotFound,
    #[error("upload expired")]
    Gone,
    #[error("invalid {0} header")]
    InvalidHeader(String),
    #[error("invalid Upload-Metadata: {0}")]
    InvalidMetadata(String),
    #[error("Upload-Metadata is too large")]
    MetadataTooLarge,
    #[error("Upload-Length or Upload-Defer-Length: 1 is required")]
    MissingLength,
    #[error("Upload-Offset is required")]
    MissingOffset,
    #[error("Upload-Offset {sent} does not match the upload's offset {current}")]
    OffsetMismatch { sent: u64, current: u64 },
    #[error("Content-Type must be application/offset+octet-stream")]
    UnsupportedMediaType,
    #[error("upload is larger than the maximum size")]
    TooLarge,
    #[error("body is longer than the upload's remaining length")]
    BodyTooLong,
    #[error("upload is already complete")]
    AlreadyComplete,
    #[error("the request was superseded by a newer request for the same upload")]
    Superseded,
    #[error("the request body was idle for too long")]
    IdleTimeout,
    #[error("the request body ended before it was complete")]
    BodyInterrupted,
    #[error("Upload-Checksum names an unsupported algorithm")]
    UnsupportedChecksum,
    #[error("invalid Upload-Checksum header")]
    InvalidChecksum,
    #[error("checksum mismatch")]
    ChecksumMismatch,
    #[error("Upload-Length cannot be changed once set")]
    LengthImmutable,
    #[error("a final upload cannot be patched")]
    FinalUpload,
    #[error("a final upload can only be made from finished partial uploads of this server")]
    InvalidConcatParts,
    /// A final naming one partial upload twice would store its bytes twice for nothing.
    #[error("Upload-Concat names the same partial upload more than once")]
    RepeatedConcatPart,
    #[error("Upload-Concat names more than {MAX_CONCAT_PARTS} partial uploads")]
    TooManyConcatParts,
    #[error("a final upload needs the lengths of all its parts while a size limit applies")]
    UnknownPartLength,
    #[error("this extension is not supported by the store")]
    UnsupportedExtension,
    #[error("too many uploads are being written by this client at once")]
    TooManyUploads,
    #[error("the upload cannot be locked right now; try again shortly")]
    LockUnavailable,
    #[error("an upload with this id or storage key already exists")]
    IdTaken,
    /// The token's `prefix` would put the upload outside the store (`../`, an absolute path).
    #[error("the token's prefix must be a relative path of A-Z a-z 0-9 . _ - segments")]
    UnsafePrefix,
    /// A blocking hook could not be asked (receiver down, too slow, nonsense answer): the
    /// status (502 or 504) and the public message of the hook error.
    #[error("{message}")]
    HookFailed { status: StatusCode, message: String },
    /// A hook refused the request (pre-create, pre-terminate) or stopped the upload
    /// (post-receive): the answer it chose, sent as it is plus `Tus-Resumable`.
    #[error("refused by the application's hook")]
    Refused(Box<http::Response<String>>),
    /// The disk is full (ENOSPC, or the disk quota): the bytes stored before stay counted.
    #[error("no space left on the server to store the upload")]
    NoSpace,
    /// The storage service (S3) could not be reached, did not answer in time or failed; the
    /// request can be tried again (what was stored before stays counted).
    #[error("the storage service is unavailable; try again shortly")]
    StorageUnavailable,
    #[error("internal server error")]
    Internal,
}

impl TusError {
    pub fn status_code(&self) -> StatusCode {
        match self {
            Self::UnsupportedVersion => StatusCode::PRECONDITION_FAILED,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Gone => StatusCode::GONE,
            Self::InvalidHeader(_)
            | Self::InvalidMetadata(_)
            | Self::MissingLength
            | Self::MissingOffset => StatusCode::BAD_REQUEST,
            Self::MetadataTooLarge
            | Self::UnsupportedChecksum
            | Self::InvalidChecksum
            | Self::LengthImmutable
            | Self::InvalidConcatParts
            | Self::RepeatedConcatPart
            | Self::TooManyConcatParts
            | Self::UnknownPartLength
            | Self::UnsupportedExtension
            | Self::BodyInterrupted => StatusCode::BAD_REQUEST,
            Self::IdleTimeout => StatusCode::REQUEST_TIMEOUT,
            Self::ChecksumMismatch => checksum_mismatch(),
            Self::FinalUpload | Self::UnsafePrefix => StatusCode::FORBIDDEN,
            Self::TooManyUploads => StatusCode::TOO_MANY_REQUESTS,
            Self::OffsetMismatch { .. } | Self::Superseded => StatusCode::CONFLICT,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::TooLarge | Self::BodyTooLong => StatusCode::PAYLOAD_TOO_LARGE,
            Self::AlreadyComplete => StatusCode::FORBIDDEN,
            Self::LockUnavailable | Self::StorageUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            Self::NoSpace => StatusCode::INSUFFICIENT_STORAGE,
            Self::IdTaken => StatusCode::CONFLICT,
            Self::HookFailed { status, .. } => *status,
            Self::Refused(answer) => answer.status(),
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// 460 Checksum Mismatch, the checksum extension's own status.
fn checksum_mismatch() -> StatusCode {
    StatusCode::from_u16(460).unwrap_or(StatusCode::BAD_REQUEST)
}
