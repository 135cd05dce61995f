//! `/file/virusscan` against a real clamd: Debian's daemon started by this test with its own
//! config and a signature database made at test time (`sigtool --md5` of the EICAR test file,
//! since the official databases cannot be fetched here), stopped by PID at the end. EICAR is
//! found, a clean file passes, a file over the stream limit is refused unscanned, and a socket
//! nobody listens on is a clear error.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ferry_process::engines::EngineError;
use ferry_process::engines::clamd::{ClamdConfig, Verdict, ping, scan_file};
use tokio_util::sync::CancellationToken;

/// EICAR's test string, split so this source file is not itself flagged by scanners.
fn eicar() -> Vec<u8> {
    [
        r"X5O!P%@AP[4\PZX54(P^)7CC)7}$",
        "EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*",
    ]
    .concat()
    .into_bytes()
}

/// clamd running in `dir`; killed by PID when dropped.
struct Clamd(Child);

impl Drop for Clamd {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_clamd(dir: &Path) -> (Clamd, ClamdConfig) {
    let db = dir.join("db");
    std::fs::create_dir(&db).unwrap();
    let sample = db.join("eicar.com");
    std::fs::write(&sample, eicar()).unwrap();
    let out = Command::new("sigtool")
        .arg("--md5")
        .arg(&sample)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "sigtool: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // sigtool writes `md5:size:filename`; the last field names the signature.
    let line = String::from_utf8(out.stdout).unwrap();
    let (hash_and_size, _) = line.trim().rsplit_once(':').unwrap();
    std::fs::write(
        db.join("test.hdb"),
        format!("{hash_and_size}:Eicar-Test-Signature\n"),
    )
    .unwrap();
    std::fs::remove_file(&sample).unwrap();
    let socket = dir.join("clamd.sock");
    let config = dir.join("clamd.conf");
    std::fs::write(
        &config,
        format!(
            "LocalSocket {}\nDatabaseDirectory {}\nForeground yes\nLogFile {}\nStreamMaxLength 1M\nSelfCheck 0\n",
            socket.display(),
            db.display(),
            dir.join("clamd.log").display()
        ),
    )
    .unwrap();
    let clamd_bin = ["/usr/sbin/clamd", "/usr/bin/clamd"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("clamd is not installed");
    let child = Command::new(clamd_bin)
        .arg("-c")
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (Clamd(child), ClamdConfig::new(socket))
}

/// Waits (bounded) until clamd answers PING: it loads its database before listening.
async fn ready(config: &ClamdConfig, clamd: &mut Clamd, dir: &Path) {
    for _ in 0..600 {
        if ping(config).await.is_ok() {
            return;
        }
        if let Ok(Some(status)) = clamd.0.try_wait() {
            panic!(
                "clamd exited ({status}): {}",
                std::fs::read_to_string(dir.join("clamd.log")).unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("clamd did not answer within 30 s");
}

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
