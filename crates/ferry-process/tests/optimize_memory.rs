//! `/image/optimize` streams: a 48 MiB JPEG (a real small JPEG with EXIF, then 48 MiB after its
//! end, which decoders ignore and the optimizer copies as image data) is stripped, and a 48 MiB
//! file of another type passed through, with the heap never growing by more than a few MiB. The
//! heap is counted by this test binary's own allocator (its only test, so nothing else runs);
//! the output is compared with the in-memory stripper's bytes.
#![allow(clippy::unwrap_used)]

mod engines_support;

use ferry_process::engines::Limits;
use ferry_process::engines::optimize::{OptimizeParams, optimize, strip_jpeg};
use peak_alloc::PeakAlloc;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use engines_support::{engines, make_image, with_exif};

/// The system allocator, counting live bytes and their peak.
#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

/// Bytes above the live heap at the start that were live at once while `work` ran.
async fn heap_growth<T>(work: impl std::future::Future<Output = T>) -> (T, usize) {
    let base = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let out = work.await;
    (out, HEAP.peak_usage().saturating_sub(base))
}

const BIG: usize = 48 * 1024 * 1024;
const BOUND: usize = 4 * 1024 * 1024;

#[tokio::test]
async fn large_inputs_are_optimized_without_being_held_in_memory() {
    let engines = engines().await;
    let dir = tempfile::tempdir().unwrap();
    let small = std::fs::read(make_image(dir.path(), "small.jpg", 64, 48)).unwrap();
    let mut jpeg = with_exif(&small, 6, "2021:03:04 05:06:07");
    jpeg.resize(jpeg.len() + BIG, 0x5A);
    let expected = Sha256::digest(strip_jpeg(&jpeg).unwrap());
    let input = dir.path().join("big.jpg");
    std::fs::write(&input, &jpeg).unwrap();
    drop(jpeg);
    let other = dir.path().join("big.bin");
    std::fs::write(&other, vec![7u8; BIG]).unwrap();
    let (limits, cancel) = (Limits::default(), CancellationToken::new());

    let params = OptimizeParams {
        preserve_meta_data: false,
    };
    let output = dir.path().join("out.jpg");
    let (done, growth) = heap_growth(optimize(
        &engines, &input, &output, params, &limits, &cancel,
    ))
    .await;
    let done = done.unwrap();
    assert!(growth < BOUND, "the JPEG took {growth} bytes of heap");
    assert!(done.size_after < done.size_before, "{done:?}");
    let written = std::fs::read(&output).unwrap();
    assert_eq!(Sha256::digest(&written), expected);
    assert_eq!(written.len() as u64, done.size_after);
    drop(written);

    let output = dir.path().join("out.bin");
    let (done, growth) = heap_growth(optimize(
        &engines,
        &other,
        &output,
        OptimizeParams::default(),
        &limits,
        &cancel,
    ))
    .await;
    let done = done.unwrap();
    assert!(
        growth < BOUND,
        "the pass-through took {growth} bytes of heap"
    );
    assert_eq!(done.size_after, BIG as u64);
    assert_eq!(
        Sha256::digest(std::fs::read(&output).unwrap()),
        Sha256::digest(vec![7u8; BIG])
    );
}
