//! `ferry-fakes`: starts the fake Google (with its consent page) and the fake Instagram on
//! loopback with a small fixture (a folder of files, a Google Doc, a shared drive; photos, a
//! video and an album), prints one JSON line on stdout (endpoints, app credentials, every
//! fixture file's id, name and sha256 of the bytes an import must store), and stops when stdin
//! closes. The e2e specs start the fakes through this binary, so the fixture exists once.

use bytes::Bytes;
use ferry_testkit::fake::google::FakeGoogle;
use ferry_testkit::fake::instagram::FakeInstagram;
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

fn entry(id: &str, name: &str, bytes: &[u8]) -> Value {
    json!({"id": id, "name": name, "size": bytes.len(), "sha256": sha256_hex(bytes)})
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let google = FakeGoogle::start("google-client", "google-secret").await;
    let ig = FakeInstagram::start("ig-client", "ig-secret").await;
    google
        .state
        .consent_page
        .store(true, std::sync::atomic::Ordering::SeqCst);

    let g = &google.state;
    let mut files = Vec::new();
    let folder = g.add_folder("root", "Holiday");
    for (name, mime, len) in [
        ("beach.jpg", "image/jpeg", 200_000),
        ("notes.txt", "text/plain", 3_000),
        ("clip.mp4", "video/mp4", 500_000),
    ] {
        let bytes = random_bytes(len);
        let id = g.add_file(&folder, name, mime, bytes.clone());
        files.push(entry(&id, name, &bytes));
    }
    let doc = random_bytes(30_000);
    let doc_id = g.add_file(
        "root",
        "Plan",
        "application/vnd.google-apps.document",
        doc.clone(),
    );
    files.push(entry(&doc_id, "Plan.docx", &doc));
    let pdf = random_bytes(1_000_000);
    let pdf_id = g.add_file("root", "report.pdf", "application/pdf", pdf.clone());
    files.push(entry(&pdf_id, "report.pdf", &pdf));
    g.add_file(
        "root",
        "Survey",
        "application/vnd.google-apps.form",
        Vec::new(),
    );
    let team = g.add_drive("Team");
    let shared = random_bytes(10_000);
    let shared_id = g.add_file(
        &team,
        "budget.xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        shared.clone(),
    );
    files.push(entry(&shared_id, "budget.xlsx", &shared));

    let mut media = Vec::new();
    for i in 0..3 {
        let bytes = random_bytes(50_000 + i * 1000);
        let id = ig.state.add("IMAGE", bytes.clone());
        media.push(entry(&id, "image", &bytes));
    }
    let video = random_bytes(300_000);
    let video_id = ig.state.add("VIDEO", video.clone());
    media.push(entry(&video_id, "video", &video));
    let (a, b) = (random_bytes(40_000), random_bytes(41_000));
    let ids = ig.state.add_album(vec![
        ("IMAGE", Bytes::from(a.clone())),
        ("IMAGE", Bytes::from(b.clone())),
    ]);
    media.push(entry(&ids[0], "album image 1", &a));
    media.push(entry(&ids[1], "album image 2", &b));

    let out = json!({
        "google": {
            "authUrl": google.auth_url(), "tokenUrl": google.token_url(), "apiUrl": google.api_url(),
            "key": "google-client", "secret": "google-secret", "email": g.email, "files": files,
        },
        "instagram": {
            "authUrl": ig.auth_url(), "tokenUrl": ig.token_url(), "graphUrl": ig.graph_url(),
            "key": "ig-client", "secret": "ig-secret", "username": ig.state.username, "media": media,
        },
    });
    println!("{out}");
    // Until the parent closes stdin (or exits).
    let mut sink = Vec::new();
    let _ = tokio::io::stdin().read_to_end(&mut sink).await;
}
