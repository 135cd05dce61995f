//! The store conformance suite on the fs store.

use ferry_tus::store::conformance;
use ferry_tus::store::fs::FsStore;

#[tokio::test]
async fn fs_store_conforms() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = FsStore::open(dir.path()).await.expect("store");
    if let Err(e) = conformance::run(&store).await {
        panic!("fs store: {e}");
    }
}
