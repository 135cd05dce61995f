//! The tus store chosen by `--store`: `fs` under `--data-dir` (synced per `--fsync`), or `s3` in
//! the `--s3-*` bucket (objects under `{--s3-key-prefix}tus/`).

use std::io;
use std::sync::Arc;

use ferry_tus::Store;
use ferry_tus::store::fs::{FsStore, Fsync};

use crate::ServeConfig;
use crate::config::{FsyncPolicy, StoreKind};

/// Opens the configured store; a missing setting is an error naming the flag.
pub async fn open(config: &ServeConfig) -> io::Result<Arc<dyn Store>> {
    match config.tus.store {
        StoreKind::Fs => {
            let fsync = match config.tus.fsync {
                FsyncPolicy::Always => Fsync::Always,
                FsyncPolicy::Never => Fsync::Never,
            };
            let store = FsStore::open(config.data_dir.join("tus")).await?;
            Ok(Arc::new(store.with_fsync(fsync)))
        }
        StoreKind::S3 => s3(config),
    }
}

#[cfg(feature = "s3")]
fn s3(config: &ServeConfig) -> io::Result<Arc<dyn Store>> {
    use ferry_tus::store::s3::{S3Config, S3Store};

    let s3 = &config.s3;
    let need = |value: &Option<String>, flag: &str| {
        value
            .clone()
            .ok_or_else(|| io::Error::other(format!("--store s3 needs {flag}")))
    };
    let endpoint = s3
        .endpoint
        .clone()
        .unwrap_or_else(|| format!("https://s3.{}.amazonaws.com", s3.region));
    let store = S3Store::new(S3Config {
        endpoint,
        bucket: need(&s3.bucket, "--s3-bucket")?,
        region: s3.region.clone(),
        access_key: need(&s3.access_key, "--s3-access-key")?,
        secret_key: need(&s3.secret_key, "--s3-secret-key")?,
        force_path_style: s3.force_path_style,
        prefix: format!("{}tus/", s3.key_prefix),
        // 8 MiB parts: 80 GB at S3's 10,000 parts, 8 MiB of memory per write in flight.
        part_size: 8 * 1024 * 1024,
    })
    .map_err(io::Error::other)?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "s3"))]
fn s3(_: &ServeConfig) -> io::Result<Arc<dyn Store>> {
    Err(io::Error::other(
        "this ferry was built without the s3 feature",
    ))
}
