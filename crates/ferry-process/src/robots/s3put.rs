//! Writing one file to S3 for `/s3/store`, streamed from disk: one PUT up to [`PUT_MAX`], a
//! multipart upload above it (aborted if a part fails). Errors are turned into what the status
//! may show: the store's own words or a fixed sentence, never a signed URL.

use tokio::io::{AsyncReadExt, AsyncSeekExt};

use super::StepError;

/// Files up to this size go in one PUT; larger ones in parts of at least this size.
pub const PUT_MAX: u64 = 8 * 1024 * 1024;

/// A store error as the status shows it: the store's own words for a refused request, never
/// the cause of a transport failure (it may hold signed URLs); that goes to the log, scrubbed.
pub(super) fn failure(e: &Failure) -> StepError {
    match e {
        Failure::Io(e) => StepError::new("S3_STORE_ERROR", format!("cannot read the file: {e}")),
        Failure::S3(e) => {
            let detail = scrub(&e.detail());
            tracing::warn!(error = %detail, "/s3/store failed");
            if detail.contains("resolves only to addresses that are not allowed") {
                return StepError::new(
                    "S3_STORE_ACCESS_DENIED",
                    "The S3 host is an address this server may not connect to.",
                );
            }
            // ferry-s3 counts a 403 as a failure of ours (credentials), not of the request.
            if detail.contains(": 403 ") {
                return StepError::new(
                    "S3_STORE_ACCESS_DENIED",
                    "Storing on S3 failed: the store refused the request (403); check key, secret, bucket and acl.",
                );
            }
            StepError::new("S3_STORE_ERROR", format!("Storing on S3 failed: {e}"))
        }
    }
}

/// `text` with every URL's query string cut (presigned queries carry the access key id).
pub(super) fn scrub(text: &str) -> String {
    text.split_inclusive(char::is_whitespace)
        .map(|word| match word.find("://").and(word.find('?')) {
            Some(q) => format!(
                "{}?…{}",
                &word[..q],
                if word.ends_with(char::is_whitespace) {
                    " "
                } else {
                    ""
                }
            ),
            None => word.to_owned(),
        })
        .collect()
}

pub(super) enum Failure {
    Io(std::io::Error),
    S3(ferry_s3::S3Error),
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e)
    }
}

impl From<ferry_s3::S3Error> for Failure {
    fn from(e: ferry_s3::S3Error) -> Self {
        Self::S3(e)
    }
}

/// A part of `source` from `offset`, `len` bytes, as a streamed body.
async fn body(source: &std::path::Path, offset: u64, len: u64) -> std::io::Result<reqwest::Body> {
    let mut f = tokio::fs::File::open(source).await?;
    f.seek(std::io::SeekFrom::Start(offset)).await?;
    Ok(reqwest::Body::wrap_stream(
        tokio_util::io::ReaderStream::new(f.take(len)),
    ))
}

pub(super) async fn upload(
    client: &ferry_s3::S3Client,
    key: &str,
    headers: &[(String, String)],
    source: &std::path::Path,
) -> Result<(), Failure> {
    let size = tokio::fs::metadata(source).await?.len();
    if size <= PUT_MAX {
        let b = body(source, 0, size).await?;
        client.put_with(key, headers, size, b).await?;
        return Ok(());
    }
    // Parts of PUT_MAX, larger when the file would need more than S3's 10,000 parts.
    let part = PUT_MAX.max(size.div_ceil(u64::from(ferry_s3::MAX_PARTS)));
    let upload_id = client.create_multipart(key, headers).await?;
    let sent: Result<Vec<(u16, String)>, Failure> = async {
        let mut done = Vec::new();
        let mut offset = 0u64;
        let mut number = 1u16;
        while offset < size {
            let len = part.min(size - offset);
            let b = body(source, offset, len).await?;
            let etag = client.upload_part(key, &upload_id, number, len, b).await?;
            done.push((number, etag));
            offset += len;
            number += 1;
        }
        Ok(done)
    }
    .await;
    let completed = match sent {
        Ok(parts) => client
            .complete(key, &upload_id, &parts)
            .await
            .map(drop)
            .map_err(Failure::from),
        Err(e) => Err(e),
    };
    if completed.is_err() {
        // Best effort: a left-over upload only costs storage until the bucket's lifecycle.
        let _ = client.abort(key, &upload_id).await;
    }
    completed
}
