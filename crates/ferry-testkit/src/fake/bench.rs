//! The benchmark fixture of `bench/providers/` (through `ferry-fakes --folder-items N
//! --small-files N --small-size BYTES --large-size BYTES`), added the same way to every fake
//! whose provider the suite measures (Google Drive, Dropbox, Box, OneDrive): a folder "Bench big"
//! of N one-byte files (for listing), a folder "Bench small" of N random files, and one random
//! file `bench-large.bin` at the root. The bytes are drawn once and shared by every fake
//! ([`Bytes`] clones are reference counts), so the large file is in memory once, not once per
//! provider; the fakes stream it out in 64 KiB slices ([`super::download`]).
//!
//! [`describe`] adds the fixture to one fake and answers the `bench` section of the JSON line
//! `ferry-fakes` prints: `bigFolder` / `smallFolder` / file `id`s are what Ferry's routes take as
//! a `requestPath` once URL-encoded (`encodeURIComponent`).

use bytes::Bytes;
use serde_json::{Value, json};

use super::r#box::BoxState;
use super::dropbox::Dropbox;
use super::google::Google;
use super::onedrive::Graph;
use crate::{random_bytes, sha256_hex};

/// The fixture's sizes (all 0: no fixture).
#[derive(Clone, Copy, Debug, Default)]
pub struct Sizes {
    pub folder_items: usize,
    pub small_files: usize,
    pub small_size: usize,
    pub large_size: usize,
}

/// One file's bytes with their digest (hashed once, however many fakes serve them).
#[derive(Clone, Debug)]
struct Drawn {
    name: String,
    bytes: Bytes,
    sha256: String,
}

impl Drawn {
    fn new(name: String, len: usize) -> Self {
        let bytes = Bytes::from(random_bytes(len));
        let sha256 = sha256_hex(&bytes);
        Self {
            name,
            bytes,
            sha256,
        }
    }
}

/// The fixture's bytes, drawn once.
#[derive(Clone, Debug, Default)]
pub struct Fixture {
    items: usize,
    small: Vec<Drawn>,
    large: Option<Drawn>,
}

impl Fixture {
    /// Draws the random files of `sizes`.
    pub fn draw(sizes: Sizes) -> Self {
        Self {
            items: sizes.folder_items,
            small: (0..sizes.small_files)
                .map(|i| Drawn::new(format!("small-{i:03}.bin"), sizes.small_size))
                .collect(),
            large: (sizes.large_size > 0)
                .then(|| Drawn::new("bench-large.bin".into(), sizes.large_size)),
        }
    }
}

/// A fake the fixture can be added to.
pub trait Target {
    /// Adds a folder at the root; its id (a `requestPath` once URL-encoded).
    fn folder(&self, name: &str) -> String;
    /// Adds a file in `folder` (an id from [`Target::folder`]) or at the root; its id.
    fn file(&self, folder: Option<&str>, name: &str, content: Bytes) -> String;
}

impl Target for Google {
    fn folder(&self, name: &str) -> String {
        self.add_folder("root", name)
    }
    fn file(&self, folder: Option<&str>, name: &str, content: Bytes) -> String {
        let parent = folder.unwrap_or("root");
        self.add_file(parent, name, "application/octet-stream", content)
    }
}

impl Target for BoxState {
    fn folder(&self, name: &str) -> String {
        self.add_folder("0", name)
    }
    fn file(&self, folder: Option<&str>, name: &str, content: Bytes) -> String {
        self.add_file(folder.unwrap_or("0"), name, content)
    }
}

/// Ids are `{driveId}~{itemId}` in the person's own drive.
impl Target for Graph {
    fn folder(&self, name: &str) -> String {
        let drive = &self.my_drive;
        format!("{drive}~{}", self.add_folder(drive, "root", name))
    }
    fn file(&self, folder: Option<&str>, name: &str, content: Bytes) -> String {
        let drive = &self.my_drive;
        let parent = folder
            .and_then(|f| f.split_once('~'))
            .map_or("root", |(_, item)| item);
        let id = self.add_file(drive, parent, name, "application/octet-stream", content);
        format!("{drive}~{id}")
    }
}

/// Ids are `path_lower`; folders exist through the files in them (names kept lower case, so
/// the path added is the id).
impl Target for Dropbox {
    fn folder(&self, name: &str) -> String {
        format!("/{}", name.to_lowercase())
    }
    fn file(&self, folder: Option<&str>, name: &str, content: Bytes) -> String {
        let path = format!("{}/{}", folder.unwrap_or(""), name.to_lowercase());
        self.add(&path, content);
        path
    }
}

/// Adds `fixture` to `target`; the `bench` section describing it.
pub fn describe(target: &impl Target, fixture: &Fixture) -> Value {
    let mut out = json!({});
    if fixture.items > 0 {
        let big = target.folder("Bench big");
        // One shared byte: listing needs names, not distinct bytes.
        let tiny = Bytes::from_static(b"x");
        for i in 0..fixture.items {
            target.file(Some(&big), &format!("item-{i:05}.txt"), tiny.clone());
        }
        out["bigFolder"] = json!(big);
        out["bigItems"] = json!(fixture.items);
    }
    let entry = |id: String, f: &Drawn| json!({"id": id, "name": f.name, "size": f.bytes.len(), "sha256": f.sha256});
    if !fixture.small.is_empty() {
        let small = target.folder("Bench small");
        let files: Vec<Value> = fixture
            .small
            .iter()
            .map(|f| entry(target.file(Some(&small), &f.name, f.bytes.clone()), f))
            .collect();
        out["smallFolder"] = json!(small);
        out["small"] = json!(files);
    }
    if let Some(f) = &fixture.large {
        out["large"] = entry(target.file(None, &f.name, f.bytes.clone()), f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every fake gets the same bytes, and the ids name them the way each fake files them.
    #[tokio::test]
    async fn every_fake_serves_the_same_fixture_under_its_own_ids() {
        let fixture = Fixture::draw(Sizes {
            folder_items: 3,
            small_files: 2,
            small_size: 100,
            large_size: 1000,
        });
        let dropbox = super::super::dropbox::FakeDropbox::start("k", "s").await;
        let graph = super::super::onedrive::FakeOneDrive::start("k", "s").await;
        let d = describe(&*dropbox.state, &fixture);
        let o = describe(&*graph.state, &fixture);
        assert_eq!(d["bigFolder"], "/bench big");
        assert_eq!(d["small"][1]["id"], "/bench small/small-001.bin");
        assert_eq!(d["large"]["id"], "/bench-large.bin");
        assert_eq!(d["large"]["sha256"], o["large"]["sha256"]);
        assert_eq!(d["large"]["size"], 1000);
        let drive = &graph.state.my_drive;
        let folder = o["bigFolder"].as_str().unwrap_or_default();
        assert!(folder.starts_with(&format!("{drive}~")), "{folder}");
        assert_eq!(o["bigItems"], 3);
    }
}
