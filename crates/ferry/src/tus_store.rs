//! The tus store chosen by `--store`: `fs` under `--data-dir` (synced per `--fsync`), or `s3` in
//! the `--s3-*` bucket (objects under `{--s3-key-prefix}tus/`).

use std::io;
use std::sync::Arc;

use ferry_tus::Store;
use ferry_tus::store::fs::{FsStore, Fsync};

use crate::ServeConfig;
use crate::config::{FsyncPolicy, StoreKind};
use ferry_s3::S3Bucket;

/// Opens the configured store; a missing setting is an error naming the flag.
pub async fn open(config: &ServeConfig, bucket: Option<S3Bucket>) -> io::Result<Arc<dyn Store>> {
    match config.tus.store {
        StoreKind::Fs => {
            let fsync = match config.tus.fsync {
                FsyncPolicy::Always => Fsync::Always,
                FsyncPolicy::Never => Fsync::Never,
            };
            let store = FsStore::open(config.data_dir.join("tus")).await?;
            Ok(Arc::new(store.with_fsync(fsync)))
        }
        StoreKind::S3 => s3(config, bucket),
    }
}

#[cfg(feature = "s3")]
fn s3(config: &ServeConfig, bucket: Option<S3Bucket>) -> io::Result<Arc<dyn Store>> {
    use ferry_tus::store::s3::S3Store;

    let missing = |flag: &str| io::Error::other(format!("--store s3 needs {flag}"));
    let bucket = bucket.ok_or_else(|| missing("--s3-bucket"))?;
    config
        .s3
        .access_key
        .as_ref()
        .ok_or_else(|| missing("--s3-access-key"))?;
    config
        .s3
        .secret_key
        .as_ref()
        .ok_or_else(|| missing("--s3-secret-key"))?;
    let prefix = format!("{}tus/", bucket.key_prefix);
    let client = ferry_s3::S3Client::new(bucket)
        .and_then(|c| c.with_timeouts(crate::s3::timeouts(&config.s3)))
        .map_err(|e| io::Error::other(e.to_string()))?;
    // 8 MiB parts: 80 GB at S3's 10,000 parts, 8 MiB of memory per write in flight.
    Ok(Arc::new(S3Store::new(client, prefix, 8 * 1024 * 1024)))
}

#[cfg(not(feature = "s3"))]
fn s3(_: &ServeConfig, _: Option<S3Bucket>) -> io::Result<Arc<dyn Store>> {
    Err(io::Error::other(
        "this ferry was built without the s3 feature",
    ))
}
