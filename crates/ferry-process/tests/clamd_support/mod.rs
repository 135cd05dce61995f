//! A real clamd for tests: Debian's daemon started with its own config and a signature
//! database made at test time (`sigtool --md5` of the EICAR test file, since the official
//! databases cannot be fetched here), killed by PID when dropped.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ferry_process::engines::clamd::{ClamdConfig, ping};

/// EICAR's test string, split so this source file is not itself flagged by scanners.
pub fn eicar() -> Vec<u8> {
    [
        r"X5O!P%@AP[4\PZX54(P^)7CC)7}$",
        "EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*",
    ]
    .concat()
    .into_bytes()
}

/// clamd running in `dir`; killed by PID when dropped.
pub struct Clamd(pub Child);

impl Drop for Clamd {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn start_clamd(dir: &Path) -> (Clamd, ClamdConfig) {
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
pub async fn ready(config: &ClamdConfig, clamd: &mut Clamd, dir: &Path) {
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
