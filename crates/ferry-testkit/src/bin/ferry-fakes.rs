//! `ferry-fakes`: starts the fake Google (with its consent page), the fake Instagram, the fake
//! Box (with its consent page), the fake Dropbox and the fake Microsoft on loopback with a small
//! fixture (a folder of files, a Google Doc, a shared drive; photos, a video and an album; a Box
//! folder of files; a Dropbox folder of files, ids being their `path_lower`; a OneDrive folder and
//! a SharePoint library, ids being `<driveId>~<itemId>`; a Zoom meeting recorded now, ids being
//! `<meeting uuid>~<file id>`; Facebook albums of photos), prints one JSON line on stdout (endpoints, app credentials, every
//! fixture file's id, name and sha256 of the bytes an import must store), and stops when stdin
//! closes. Unsplash (a search provider: any query finds its photos) is printed under `unsplash`.
//! The Google Photos Picker API (sharing the fake Google's tokens) is printed under
//! `googlePhotos` with a photo and a video every session picks, and `google.pickerToken` is an
//! access token as Google Identity Services hands one to a picker page.
//! The fake WebDAV server (a Nextcloud-like user collection, its folder `Holiday` shared by
//! link) is printed under `webdav`.
//! The e2e specs start the fakes through this binary, so the fixture exists once.
//!
//! `bench/providers/` adds a larger fixture to Google Drive, Dropbox, Box and OneDrive with flags
//! (all optional, off by default): `--folder-items N` (a folder "Bench big" of N tiny files, for
//! listing), `--small-files N` and `--small-size BYTES` (a folder "Bench small" of N random
//! files), and `--large-size BYTES` (one random file `bench-large.bin` at the root); the same
//! bytes in every fake (`ferry_testkit::fake::bench`), ids and digests printed under
//! `google.bench`, `dropbox.bench`, `box.bench` and `onedrive.bench`.
//!
//! `--paging-items N` (off by default) adds a folder "Many" of N tiny files to Dropbox, Box and
//! OneDrive, and N photos to Unsplash, so the Dashboard specs can page through `ferry` (which asks
//! up to 1000 items per page, 30 for Unsplash).
//!
//! While it runs, each line on stdin is a fault switch, acknowledged by one JSON line on stdout
//! (`{"ok": true}` or `{"error": "..."}`): `too-many <provider> <count> <seconds>` answers that
//! provider's next `count` API calls 429 with `Retry-After: <seconds>` (`google`, `instagram`,
//! `box`, `onedrive`, `dropbox`, `unsplash`), so a browser spec can see a rate limit;
//! `unavailable <provider> <count> <seconds>` answers its next `count` downloads 503 with
//! `Retry-After: <seconds>` (a throttled download host).

use bytes::Bytes;
use ferry_testkit::fake::bench::{Fixture, Sizes, describe};
use ferry_testkit::fake::r#box::FakeBox;
use ferry_testkit::fake::dropbox::{Dropbox, FakeDropbox};
use ferry_testkit::fake::facebook::{FacebookState, FakeFacebook};
use ferry_testkit::fake::google::FakeGoogle;
use ferry_testkit::fake::google_photos::FakePhotos;
use ferry_testkit::fake::instagram::FakeInstagram;
use ferry_testkit::fake::onedrive::FakeOneDrive;
use ferry_testkit::fake::unsplash::FakeUnsplash;
use ferry_testkit::fake::webdav::{FakeWebDav, WebDav};
use ferry_testkit::fake::zoom::{FakeZoom, ZoomFile, ZoomState};
use ferry_testkit::fake::{Faults, switches};
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

fn entry(id: &str, name: &str, bytes: &[u8]) -> Value {
    json!({"id": id, "name": name, "size": bytes.len(), "sha256": sha256_hex(bytes)})
}

/// The benchmark fixture's sizes, from the command line.
#[derive(Default)]
struct BenchArgs {
    folder_items: usize,
    small_files: usize,
    small_size: usize,
    large_size: usize,
    paging_items: usize,
}

impl BenchArgs {
    fn sizes(&self) -> Sizes {
        Sizes {
            folder_items: self.folder_items,
            small_files: self.small_files,
            small_size: self.small_size,
            large_size: self.large_size,
        }
    }

    /// Reads `--name N` pairs; anything else is a usage error (exit 2).
    fn parse(args: impl Iterator<Item = String>) -> Self {
        let mut out = Self {
            small_size: 64 * 1024,
            ..Self::default()
        };
        let mut args = args;
        while let Some(flag) = args.next() {
            let value = args.next().and_then(|v| v.parse::<usize>().ok());
            let slot = match flag.as_str() {
                "--folder-items" => &mut out.folder_items,
                "--small-files" => &mut out.small_files,
                "--small-size" => &mut out.small_size,
                "--large-size" => &mut out.large_size,
                "--paging-items" => &mut out.paging_items,
                _ => usage(&flag),
            };
            *slot = value.unwrap_or_else(|| usage(&flag));
        }
        out
    }
}

fn usage(flag: &str) -> ! {
    eprintln!(
        "ferry-fakes: bad argument {flag:?}; usage: ferry-fakes [--folder-items N] \
         [--small-files N] [--small-size BYTES] [--large-size BYTES] [--paging-items N]"
    );
    std::process::exit(2)
}

/// The OneDrive fixture: a folder of files in the person's OneDrive and a SharePoint library.
fn add_onedrive(g: &ferry_testkit::fake::onedrive::Graph) -> Value {
    let mut files = Vec::new();
    let own = g.my_drive.clone();
    let folder = g.add_folder(&own, "root", "Trips");
    for (name, mime, len) in [
        ("alps.jpg", "image/jpeg", 150_000),
        ("plan.txt", "text/plain", 1_500),
    ] {
        let bytes = random_bytes(len);
        let id = g.add_file(&own, &folder, name, mime, bytes.clone());
        files.push(entry(&format!("{own}~{id}"), name, &bytes));
    }
    let (_, library) = g.add_site_library("Marketing", "Documents");
    let bytes = random_bytes(400_000);
    let id = g.add_file(
        &library,
        "root",
        "brand.pdf",
        "application/pdf",
        bytes.clone(),
    );
    files.push(entry(&format!("{library}~{id}"), "brand.pdf", &bytes));
    json!(files)
}

/// The Box fixture (a folder of files and one at the root), behind the consent page.
fn add_box(b: &ferry_testkit::fake::r#box::BoxState) -> Value {
    b.oauth
        .consent_page
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let mut files = Vec::new();
    let folder = b.add_folder("0", "Projects");
    for (name, len) in [("sketch.png", 120_000), ("minutes.txt", 2_000)] {
        let bytes = random_bytes(len);
        let id = b.add_file(&folder, name, bytes.clone());
        files.push(entry(&id, name, &bytes));
    }
    let deck = random_bytes(700_000);
    let id = b.add_file("0", "deck.pdf", deck.clone());
    files.push(entry(&id, "deck.pdf", &deck));
    json!(files)
}

/// The Dropbox fixture: a folder of files and one at the root; ids are `path_lower`.
fn add_dropbox(d: &Dropbox) -> Value {
    let mut files = Vec::new();
    for (path, len) in [
        ("/Holiday/beach.jpg", 150_000),
        ("/Holiday/notes.txt", 2_000),
        ("/report.pdf", 600_000),
    ] {
        let bytes = random_bytes(len);
        d.add(path, bytes.clone());
        let name = path.rsplit('/').next().unwrap_or(path);
        files.push(entry(&path.to_lowercase(), name, &bytes));
    }
    json!(files)
}

/// A folder "Many" of `n` one-byte files in Dropbox, Box and OneDrive, and `n` more Unsplash photos.
fn add_paging(
    n: usize,
    d: &Dropbox,
    b: &ferry_testkit::fake::r#box::BoxState,
    g: &ferry_testkit::fake::onedrive::Graph,
    u: &ferry_testkit::fake::unsplash::Unsplash,
) {
    if n == 0 {
        return;
    }
    let tiny = Bytes::from_static(b"x");
    let box_many = b.add_folder("0", "Many");
    let own = g.my_drive.clone();
    let drive_many = g.add_folder(&own, "root", "Many");
    for i in 0..n {
        let name = format!("item-{i:05}.txt");
        d.add(&format!("/Many/{name}"), tiny.clone());
        b.add_file(&box_many, &name, tiny.clone());
        g.add_file(&own, &drive_many, &name, "text/plain", tiny.clone());
        u.add(
            Some(&format!("Many photo {i:05}")),
            "Grace Hopper",
            tiny.clone(),
        );
    }
}

/// The Zoom fixture (behind the consent page): a meeting recorded now, in this year's newest
/// month, with a video and a transcript; its UUID starts with `/` and holds `//` (double-encoded
/// to Zoom).
/// Ids are ferry's `{uuid}~{file id}`; names are what ferry lists (times in UTC).
fn add_zoom(z: &ZoomState) -> Value {
    z.oauth
        .consent_page
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let now = jiff::Timestamp::now();
    let start = now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let shown = now.strftime("%Y-%m-%d, %H:%M").to_string();
    let uuid = "/q3//T+9QxWl0mZ8r2YbHg==";
    let video = random_bytes(400_000);
    let transcript = b"WEBVTT\n\n1\n00:00:01.000 --> 00:00:02.000\nHello\n".to_vec();
    let ids = z.add_meeting(
        uuid,
        "Team sync",
        &start,
        vec![
            ZoomFile::new("MP4", video.clone()),
            ZoomFile::new("TRANSCRIPT", transcript.clone()),
        ],
    );
    json!({
        "year": now.strftime("%Y").to_string(),
        "meeting": format!("Team sync ({shown})"),
        "files": [
            entry(&format!("{uuid}~{}", ids[0]),
                &format!("Team sync - shared screen with speaker view ({shown}).mp4"), &video),
            entry(&format!("{uuid}~{}", ids[1]),
                &format!("Team sync - audio transcript ({shown}).vtt"), &transcript),
        ],
    })
}

/// The Facebook fixture (behind the consent page): an album of two photos (one captioned) and
/// another album; digests are of each photo's largest rendition, which an import stores.
fn add_facebook(f: &FacebookState) -> Value {
    f.oauth
        .consent_page
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let album = f.add_album("Summer trip");
    let mut files = Vec::new();
    for (caption, len) in [(Some("Beach"), 180_000), (Some("Sunset"), 90_000)] {
        let bytes = random_bytes(len);
        let id = f.add_photo(&album, caption, bytes.clone());
        files.push(entry(&id, caption.unwrap_or(&id), &bytes));
    }
    let other = f.add_album("Profile pictures");
    let bytes = random_bytes(50_000);
    let id = f.add_photo(&other, Some("Me"), bytes.clone());
    files.push(entry(&id, "Me", &bytes));
    json!({"album": album, "files": files})
}

/// The WebDAV fixture: a folder of files (shared by link) and one at the root; ids are
/// Companion's (`encodeURIComponent` of the path).
fn add_webdav(w: &WebDav) -> Value {
    let mut files = Vec::new();
    for (path, id, mime, len) in [
        (
            "/Holiday/beach day.jpg",
            "%2FHoliday%2Fbeach%20day.jpg",
            "image/jpeg",
            180_000,
        ),
        (
            "/Holiday/notes.txt",
            "%2FHoliday%2Fnotes.txt",
            "text/plain",
            2_500,
        ),
        ("/report.pdf", "%2Freport.pdf", "application/pdf", 500_000),
    ] {
        let bytes = random_bytes(len);
        w.add_file(path, mime, bytes.clone());
        let name = path.rsplit('/').next().unwrap_or(path);
        files.push(entry(id, name, &bytes));
    }
    w.share("/Holiday");
    json!(files)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let bench = BenchArgs::parse(std::env::args().skip(1));
    let paging = bench.paging_items;
    let google = FakeGoogle::start("google-client", "google-secret").await;
    let ig = FakeInstagram::start("ig-client", "ig-secret").await;
    let boxed = FakeBox::start("box-client", "box-secret").await;
    let ms = FakeOneDrive::start("onedrive-client", "onedrive-secret").await;
    let unsplash = FakeUnsplash::start("unsplash-access-key").await;
    let dropbox = FakeDropbox::start("dropbox-client", "dropbox-secret").await;
    let zoom = FakeZoom::start("zoom-client", "zoom-secret").await;
    let facebook = FakeFacebook::start("facebook-client", "facebook-secret").await;
    let webdav = FakeWebDav::start("alice", "app-password").await;
    google
        .state
        .oauth
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

    // Drawn once: every provider serves the same bytes (one copy in memory).
    let fixture = Fixture::draw(bench.sizes());
    let bench = describe(&**g, &fixture);

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

    let box_files = add_box(&boxed.state);
    let onedrive_files = add_onedrive(&ms.state);
    let photos: Vec<Value> = [("Misty forest at dawn", 90_000), ("Red fox", 40_000)]
        .into_iter()
        .map(|(description, len)| {
            let bytes = random_bytes(len);
            let id = unsplash
                .state
                .add(Some(description), "Ada Lovelace", bytes.clone());
            json!({"id": id, "name": format!("{description}.jpg"), "sha256": sha256_hex(&bytes)})
        })
        .collect();
    let dropbox_files = add_dropbox(&dropbox.state);
    let box_bench = describe(&*boxed.state, &fixture);
    let onedrive_bench = describe(&*ms.state, &fixture);
    let dropbox_bench = describe(&*dropbox.state, &fixture);
    add_paging(
        paging,
        &dropbox.state,
        &boxed.state,
        &ms.state,
        &unsplash.state,
    );
    let picker_photos = FakePhotos::start(google.state.clone()).await;
    let picked: Vec<Value> = [
        ("IMG_0001.jpg", "image/jpeg", 120_000),
        ("VID_0001.mp4", "video/mp4", 260_000),
    ]
    .into_iter()
    .map(|(name, mime, len)| {
        let bytes = random_bytes(len);
        let id = picker_photos.state.add(name, mime, bytes.clone());
        entry(&id, name, &bytes)
    })
    .collect();
    let zoom_fixture = add_zoom(&zoom.state);
    let facebook_fixture = add_facebook(&facebook.state);
    let webdav_files = add_webdav(&webdav.state);

    let out = json!({
        "google": {
            "authUrl": google.auth_url(), "tokenUrl": google.token_url(), "apiUrl": google.api_url(),
            "key": "google-client", "secret": "google-secret", "email": g.email, "files": files,
            "bench": bench, "pickerToken": g.issue_access_token(),
        },
        "googlePhotos": {
            "apiUrl": picker_photos.api_url(), "contentUrl": picker_photos.content_url(),
            "items": picked,
        },
        "instagram": {
            "authUrl": ig.auth_url(), "tokenUrl": ig.token_url(), "graphUrl": ig.graph_url(),
            "key": "ig-client", "secret": "ig-secret", "username": ig.state.username, "media": media,
        },
        "onedrive": {
            "authUrl": ms.auth_url(), "tokenUrl": ms.token_url(), "apiUrl": ms.api_url(),
            "key": "onedrive-client", "secret": "onedrive-secret", "mail": ms.state.mail,
            "files": onedrive_files, "bench": onedrive_bench,
        },
        "box": {
            "authUrl": boxed.auth_url(), "tokenUrl": boxed.token_url(), "apiUrl": boxed.api_url(),
            "key": "box-client", "secret": "box-secret", "login": boxed.state.login,
            "files": box_files, "bench": box_bench,
        },
        "unsplash": {
            "apiUrl": unsplash.api_url(), "key": "unsplash-access-key", "photos": photos,
        },
        "dropbox": {
            "authUrl": dropbox.auth_url(), "tokenUrl": dropbox.token_url(),
            "apiUrl": dropbox.api_url(), "contentUrl": dropbox.content_url(),
            "key": "dropbox-client", "secret": "dropbox-secret", "email": dropbox.state.email,
            "files": dropbox_files, "bench": dropbox_bench,
        },
        "zoom": {
            "authUrl": zoom.auth_url(), "tokenUrl": zoom.token_url(), "apiUrl": zoom.api_url(),
            "key": "zoom-client", "secret": "zoom-secret", "email": zoom.state.email,
            "year": zoom_fixture["year"], "meeting": zoom_fixture["meeting"],
            "files": zoom_fixture["files"],
        },
        "facebook": {
            "authUrl": facebook.auth_url(), "apiUrl": facebook.api_url(),
            "key": "facebook-client", "secret": "facebook-secret", "email": facebook.state.email,
            "album": facebook_fixture["album"], "files": facebook_fixture["files"],
        },
        "webdav": {
            "url": webdav.user_url(), "user": "alice", "password": "app-password",
            "urlWithPassword": webdav.user_url_with("alice", "app-password"),
            "shareUrl": webdav.share_url(), "files": webdav_files,
        },
    });
    println!("{out}");
    let faults: [(&str, &Faults); 6] = [
        ("google", &google.state.faults),
        ("instagram", &ig.state.faults),
        ("box", &boxed.state.faults),
        ("onedrive", &ms.state.faults),
        ("dropbox", &dropbox.state.faults),
        ("unsplash", &unsplash.state.faults),
    ];
    // Fault switches, one a line, until the parent closes stdin (or exits).
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let answer = match switches::switch(&faults, &line) {
            Ok(()) => json!({"ok": true}),
            Err(e) => json!({"error": e}),
        };
        println!("{answer}");
    }
}
