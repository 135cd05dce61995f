//! `/file/virusscan` against a real clamd: Debian's daemon started by this test with its own
//! config and a signature database made at test time (`sigtool --md5` of the EICAR test file,
//! since the official databases cannot be fetched here), stopped by PID at the end. EICAR is
//! found, a clean file passes, a file over the stream limit is refused unscanned, and a socket
//! nobody listens on is a clear error.
#![allow(clippy::unwrap_used)]

mod clamd_support;

use clamd_support::{eicar, ready, start_clamd};
use ferry_process::engines::EngineError;
use ferry_process::engines::clamd::{ClamdConfig, Verdict, scan_file};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn eicar_is_found_and_a_clean_file_passes() {
    let dir = tempfile::tempdir().unwrap();
    let (mut clamd, mut config) = start_clamd(dir.path());
    ready(&config, &mut clamd, dir.path()).await;

    let infected = dir.path().join("upload.bin");
    std::fs::write(&infected, eicar()).unwrap();
    let clean = dir.path().join("clean.txt");
    std::fs::write(&clean, "just some text\n".repeat(20_000)).unwrap();
    let cancel = CancellationToken::new();

    assert_eq!(
        scan_file(&config, &infected, &cancel).await.unwrap(),
        Verdict::Infected("Eicar-Test-Signature.UNOFFICIAL".into())
    );
    // 300 kB in 64 KiB chunks: the stream is reassembled before the verdict.
    assert_eq!(
        scan_file(&config, &clean, &cancel).await.unwrap(),
        Verdict::Clean
    );

    // Over ferry's limit: refused before sending, never "clean".
    config.max_stream_bytes = 1000;
    let err = scan_file(&config, &clean, &cancel).await.unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::TooLarge {
                size: 300_000,
                max: 1000
            }
        ),
        "{err:?}"
    );

    // Over clamd's own StreamMaxLength (1M here): clamd's error, not a verdict.
    let big = dir.path().join("big.bin");
    std::fs::write(&big, vec![b'a'; 2 * 1024 * 1024]).unwrap();
    config.max_stream_bytes = 4 * 1024 * 1024;
    let err = scan_file(&config, &big, &cancel).await.unwrap_err();
    assert!(err.to_string().contains("size limit exceeded"), "{err}");
}

#[tokio::test]
async fn no_clamd_on_the_socket_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    let config = ClamdConfig::new(dir.path().join("absent.sock"));
    let err = scan_file(&config, &file, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        err.to_string().starts_with(&format!(
            "clamd: cannot connect to {}",
            dir.path().join("absent.sock").display()
        )),
        "{err}"
    );
}
