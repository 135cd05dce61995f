//! Stored files: `{dir}/{id}` holds the bytes and `{dir}/{id}.json` the name, type and size.
//! Bytes are written chunk by chunk as they arrive; a failed or oversized write leaves nothing
//! behind.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use rand::Rng;
use serde::{Deserialize, Serialize};
use tokio::fs;
use tokio::io::AsyncWriteExt;

use crate::FormError;

/// What is kept beside a stored file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredInfo {
    /// The client's file name, as sent.
    pub name: String,
    /// The client's media type, as sent.
    #[serde(rename = "type")]
    pub content_type: String,
    /// Stored length in bytes.
    pub size: u64,
    /// The subject it was stored for under `--auth-secret`; only that subject fetches it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// A directory of uploaded files.
#[derive(Debug)]
pub struct FormStore {
    dir: PathBuf,
}

impl FormStore {
    /// Opens `dir`, creating it if needed.
    pub async fn open(dir: PathBuf) -> std::io::Result<Self> {
        fs::create_dir_all(&dir).await?;
        Ok(Self { dir })
    }

    /// Streams `body` into a new file; at most `max` bytes. Returns the new id and its info.
    pub async fn save<S, E>(
        &self,
        name: String,
        content_type: String,
        body: S,
        max: Option<u64>,
    ) -> Result<(String, StoredInfo), FormError>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin,
        E: Into<FormError>,
    {
        self.save_as(new_id(), name, content_type, body, max, None)
            .await
    }

    /// A fresh id for [`FormStore::save_as`], so hooks can name a file before it is stored.
    pub fn reserve_id() -> String {
        new_id()
    }

    /// [`FormStore::save`] under `id`, which must come from [`FormStore::reserve_id`], for
    /// `owner` (the token's subject, when access control is on).
    pub async fn save_as<S, E>(
        &self,
        id: String,
        name: String,
        content_type: String,
        mut body: S,
        max: Option<u64>,
        owner: Option<String>,
    ) -> Result<(String, StoredInfo), FormError>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin,
        E: Into<FormError>,
    {
        if !valid_id(&id) {
            return Err(FormError::NotFound);
        }
        let path = self.dir.join(&id);
        let mut file = fs::File::create(&path).await?;
        let mut size: u64 = 0;
        let outcome: Result<(), FormError> = async {
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(Into::into)?;
                size += chunk.len() as u64;
                if let Some(max) = max.filter(|max| size > *max) {
                    return Err(FormError::TooLarge { max });
                }
                file.write_all(&chunk).await?;
            }
            file.flush().await?;
            Ok(())
        }
        .await;
        drop(file);
        if let Err(e) = outcome {
            let _ = fs::remove_file(&path).await;
            return Err(e);
        }
        let info = StoredInfo {
            name,
            content_type,
            size,
            owner,
        };
        let sidecar = serde_json::to_vec(&info).map_err(std::io::Error::other)?;
        fs::write(self.sidecar(&id), sidecar).await?;
        Ok((id, info))
    }

    /// The path and info of stored file `id`.
    pub async fn get(&self, id: &str) -> Result<(PathBuf, StoredInfo), FormError> {
        if !valid_id(id) {
            return Err(FormError::NotFound);
        }
        let raw = match fs::read(self.sidecar(id)).await {
            Ok(raw) => raw,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(FormError::NotFound),
            Err(e) => return Err(e.into()),
        };
        let info: StoredInfo = serde_json::from_slice(&raw).map_err(std::io::Error::other)?;
        Ok((self.dir.join(id), info))
    }

    /// Deletes stored file `id` (best effort: used to undo a partly failed bundle).
    pub async fn remove(&self, id: &str) {
        if valid_id(id) {
            let _ = fs::remove_file(self.dir.join(id)).await;
            let _ = fs::remove_file(self.sidecar(id)).await;
        }
    }

    /// The directory files are stored in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the bytes and the sidecar of `id` are (for hooks).
    pub fn paths(&self, id: &str) -> (PathBuf, PathBuf) {
        (self.dir.join(id), self.sidecar(id))
    }

    fn sidecar(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }
}

/// 32 hex digits of randomness: unguessable and safe as a file name.
fn new_id() -> String {
    let bytes: [u8; 16] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Ids come from the URL: only what [`new_id`] makes is accepted, so no path tricks.
fn valid_id(id: &str) -> bool {
    id.len() == 32
        && id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked_strictly() {
        assert!(valid_id(&new_id()));
        assert!(!valid_id("../../etc/passwd"));
        assert!(!valid_id("0123456789ABCDEF0123456789abcdef"));
        assert!(!valid_id(""));
    }
}
