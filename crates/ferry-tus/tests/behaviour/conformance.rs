//! The store conformance suite on the fs store, under both sync policies.

use ferry_tus::store::conformance;
use ferry_tus::store::fs::{FsStore, Fsync};

async fn conforms(fsync: Fsync) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = FsStore::open(dir.path())
        .await
        .expect("store")
        .with_fsync(fsync);
    if let Err(e) = conformance::run(&store).await {
        panic!("fs store ({fsync:?}): {e}");
    }
}

#[tokio::test]
async fn fs_store_conforms() {
    conforms(Fsync::Always).await;
}

#[tokio::test]
async fn fs_store_conforms_without_fsync() {
    conforms(Fsync::Never).await;
}
