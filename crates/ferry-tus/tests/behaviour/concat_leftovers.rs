//! A concatenation that fails leaves no temporary file behind (the issue saw 200 MiB kept each
//! time a part vanished during the copy), and one a crash left is swept when the store opens.

use ferry_tus::protocol::Metadata;
use ferry_tus::store::{Concatenate, ConcatenateUnfinished};
use ferry_tus::{Store, StoreError, TusConfig, UploadId};

use crate::common::{Endpoint, V};

/// Names in the store's directory that end in `.concat.tmp`.
fn leftovers(ep: &Endpoint) -> Vec<String> {
    std::fs::read_dir(ep.dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".concat.tmp"))
        .collect()
}

async fn finished_part(ep: &Endpoint, bytes: &[u8]) -> String {
    let url = ep
        .create(Some(bytes.len() as u64), &[("Upload-Concat", "partial")])
        .await;
    assert_eq!(ep.patch(&url, 0, bytes).await.status, 204);
    url
}

/// The names in the store's directory, sorted.
fn names(ep: &Endpoint) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(ep.dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn id_of(path: &str) -> UploadId {
    UploadId::parse(path.rsplit('/').next().expect("id")).expect("an id")
}

/// The second part's bytes vanish after the handler checked the parts (a request cannot time
/// that, so the store is called as the handler calls it): the first part is copied when the
/// second cannot be opened.
#[tokio::test]
async fn a_concatenation_whose_part_vanishes_leaves_no_temporary_file() {
    let ep = Endpoint::start().await;
    let first = finished_part(&ep, &ferry_testkit::random_bytes(300_000)).await;
    let second = finished_part(&ep, b"tail").await;
    std::fs::remove_file(ep.dir.path().join(id_of(&second).as_str())).expect("remove");
    let before = names(&ep);

    let parts = [id_of(&first), id_of(&second)];
    let made = Concatenate::concatenate(&ep.store, &parts, Metadata::default(), None).await;
    assert!(matches!(made, Err(StoreError::NotFound)), "{made:?}");
    assert_eq!(leftovers(&ep), Vec::<String>::new());
    assert_eq!(names(&ep), before, "the failed final left files");
}

/// The same for a pending final finished when its last part completes.
#[tokio::test]
async fn a_pending_final_whose_part_vanishes_leaves_no_temporary_file() {
    let ep = Endpoint::start().await;
    let first = finished_part(&ep, &ferry_testkit::random_bytes(300_000)).await;
    let second = ep.create(Some(4), &[("Upload-Concat", "partial")]).await;
    let concat = format!("final;{first} {second}");
    let res = ep
        .send(
            "POST",
            "/files/",
            &[V, ("Upload-Concat", &concat)],
            Vec::new(),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let final_id = id_of(res.header("location").expect("location"));
    std::fs::remove_file(ep.dir.path().join(id_of(&second).as_str())).expect("remove");
    let before = names(&ep);

    let finished = ConcatenateUnfinished::finish_pending(&ep.store, &final_id).await;
    assert!(
        matches!(finished, Err(StoreError::NotFound)),
        "{finished:?}"
    );
    assert_eq!(leftovers(&ep), Vec::<String>::new());
    assert_eq!(names(&ep), before, "the failed final left files");
    let info = ep
        .store
        .info(&final_id)
        .await
        .expect("the final is still there");
    assert!(info.pending && info.offset == 0, "{info:?}");
}

#[tokio::test]
async fn leftovers_of_a_crash_are_swept_when_the_store_opens() {
    let ep = Endpoint::start().await;
    let bytes = ferry_testkit::random_bytes(1_000);
    let kept = finished_part(&ep, &bytes).await;
    let stray = format!("{}.concat.tmp", UploadId::generate());
    std::fs::write(ep.dir.path().join(&stray), &bytes).expect("leftover");
    assert_eq!(leftovers(&ep), [stray]);

    let ep = ep.restart(TusConfig::default()).await;
    assert_eq!(leftovers(&ep), Vec::<String>::new());
    // Nothing else was touched.
    let res = ep.send("GET", &kept, &[], Vec::new()).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.body, bytes);
}
