//! `/file/compress` through the Assembly API: zip, tar and tar.gz archives read back by real
//! readers (the `zip` and `tar` crates, and the system's `unzip` and `tar`), every member's
//! sha256 equal to its input's; a hostile name (climbing, absolute, with a NUL) stays inside;
//! repeated names are numbered; without `bundle_steps` each file gets its own archive.

mod common;

use std::collections::BTreeMap;
use std::io::Read;

use common::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

async fn fetch(file: &Value) -> Vec<u8> {
    reqwest::get(file["url"].as_str().expect("url"))
        .await
        .expect("get")
        .bytes()
        .await
        .expect("bytes")
        .to_vec()
}

/// Members of a zip: name → sha256.
fn zip_members(bytes: &[u8]) -> BTreeMap<String, String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip");
    (0..zip.len())
        .map(|i| {
            let mut entry = zip.by_index(i).expect("entry");
            let mut data = Vec::new();
            entry.read_to_end(&mut data).expect("read");
            (entry.name().to_owned(), sha(&data))
        })
        .collect()
}

/// Members of a tar (gzipped or not): name → sha256.
fn tar_members(bytes: &[u8], gz: bool) -> BTreeMap<String, String> {
    let reader: Box<dyn Read + '_> = if gz {
        Box::new(flate2::read::GzDecoder::new(bytes))
    } else {
        Box::new(bytes)
    };
    let mut tar = tar::Archive::new(reader);
    tar.entries()
        .expect("a tar")
        .map(|e| {
            let mut e = e.expect("entry");
            let name = e.path().expect("path").to_string_lossy().into_owned();
            let mut data = Vec::new();
            e.read_to_end(&mut data).expect("read");
            (name, sha(&data))
        })
        .collect()
}

/// The names the system's `tool args... file` lists.
fn listed(dir: &std::path::Path, name: &str, bytes: &[u8], tool: &str, args: &[&str]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    let out = std::process::Command::new(tool)
        .args(args)
        .arg(&path)
        .output()
        .expect("run the system's archiver");
    assert!(
        out.status.success(),
        "{tool}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn archives_hold_every_file_byte_for_byte_under_safe_unique_names() {
    let dir = tempfile::tempdir().expect("dir");
    let hostile: &'static [u8] = b"imported with a hostile name\n";
    let (origin, _) = origin(hostile).await;
    let s = start(config(dir.path(), false)).await;
    let a: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
    let b = b"second file, same name as the first".to_vec();
    let c = b"a third".to_vec();
    let p = params(json!({
        "imported": {"robot": "/http/import", "url": format!("http://{origin}/file"), "force_name": "../../../etc/evil\u{0}.txt"},
        "zipped": {"robot": "/file/compress", "use": {"steps": [":original", "imported"], "bundle_steps": true}, "format": "zip", "file_layout": "simple", "archive_name": "../all"},
        "tgz": {"robot": "/file/compress", "use": {"steps": [":original", "imported"], "bundle_steps": true}, "format": "tar", "gzip": true, "compression_level": -9},
        "each": {"robot": "/file/compress", "use": ":original", "compression_level": 0},
    }));
    let (code, created) = create(
        &s.base,
        form(&p, &[("a.txt", &a), ("a.txt", &b), ("..", &c)]),
    )
    .await;
    assert_eq!(code, 200, "{created}");
    let done = settle(created["assembly_ssl_url"].as_str().expect("url")).await;
    assert_eq!(done["ok"], "ASSEMBLY_COMPLETED", "{done}");

    // One zip of everything, the simple layout: at the top, repeats numbered, nothing climbs.
    let zipped = done["results"]["zipped"].as_array().expect("zipped");
    assert_eq!(zipped.len(), 1, "{done}");
    assert_eq!(
        (zipped[0]["name"].as_str(), zipped[0]["mime"].as_str()),
        (Some("all.zip"), Some("application/zip"))
    );
    let bytes = fetch(&zipped[0]).await;
    assert_eq!(zipped[0]["size"].as_u64(), Some(bytes.len() as u64));
    let want: BTreeMap<String, String> = [
        ("a.txt", sha(&a)),
        ("a_1.txt", sha(&b)),
        ("file", sha(&c)),
        ("evil.txt", sha(hostile)),
    ]
    .into_iter()
    .map(|(n, h)| (n.to_owned(), h))
    .collect();
    assert_eq!(zip_members(&bytes), want);
    let unzip = listed(dir.path(), "all.zip", &bytes, "unzip", &["-l"]);
    for name in want.keys() {
        assert!(unzip.contains(name.as_str()), "{name} not in {unzip}");
    }
    assert!(!unzip.contains(".."), "{unzip}");

    // One tar.gz, the advanced layout: a folder per step, names prefixed by the ids.
    let tgz = done["results"]["tgz"].as_array().expect("tgz");
    assert_eq!(tgz.len(), 1);
    assert_eq!(tgz[0]["name"], "archive.tar.gz");
    let bytes = fetch(&tgz[0]).await;
    let members = tar_members(&bytes, true);
    let uploads = done["uploads"].as_array().expect("uploads");
    let prefix = |v: &Value| v.as_str().expect("id")[..2].to_owned();
    for (u, data) in uploads.iter().zip([&a, &b, &c]) {
        let name = u["name"].as_str().expect("name");
        let start = format!(":original/{}_", prefix(&u["id"]));
        let found = members
            .iter()
            .find(|(n, h)| n.starts_with(&start) && **h == sha(data))
            .map(|(n, _)| n.clone());
        assert!(found.is_some(), "{name} ({start}) not in {members:?}");
    }
    assert!(
        members
            .keys()
            .any(|n| n.starts_with("imported/") && n.ends_with("_evil.txt")),
        "{members:?}"
    );
    assert!(
        members.keys().all(|n| !n.split('/').any(|p| p == "..")),
        "{members:?}"
    );
    let listing = listed(dir.path(), "all.tar.gz", &bytes, "tar", &["tzf"]);
    assert_eq!(listing.lines().count(), 4, "{listing}");
    assert!(!listing.contains(".."), "{listing}");

    // Without bundle_steps: one plain tar per upload, named after it.
    let each = done["results"]["each"].as_array().expect("each");
    assert_eq!(each.len(), 3, "{done}");
    for (archive, data) in each.iter().zip([&a, &b, &c]) {
        assert_eq!(archive["mime"], "application/x-tar");
        let members = tar_members(&fetch(archive).await, false);
        assert_eq!(members.len(), 1, "{members:?}");
        assert_eq!(members.values().next(), Some(&sha(data)));
    }
    assert_eq!(each[0]["name"], "a.tar");
    assert_eq!(each[2]["name"], "file.tar");
}

#[tokio::test]
async fn bad_compress_parameters_are_refused_when_the_assembly_is_created() {
    let dir = tempfile::tempdir().expect("dir");
    let s = start(config(dir.path(), false)).await;
    for (step, why) in [
        (
            json!({"format": "rar"}),
            "format must be \"tar\" or \"zip\", not \"rar\".",
        ),
        (
            json!({"password": "x"}),
            "password (encrypted archives) is not supported yet.",
        ),
        (
            json!({"compression_level": 5}),
            "compression_level must be a whole number from -9 to 0.",
        ),
    ] {
        let mut body = json!({"robot": "/file/compress", "use": ":original"});
        if let (Value::Object(b), Value::Object(extra)) = (&mut body, step) {
            b.extend(extra);
        }
        let (code, answer) = create(&s.base, form(&params(json!({"z": body})), &[])).await;
        assert_eq!(
            (code, answer["error"].as_str(), answer["message"].as_str()),
            (
                400,
                Some("FILE_COMPRESS_VALIDATION"),
                Some(format!("Step \"z\": {why}").as_str())
            ),
            "{answer}"
        );
    }
}
