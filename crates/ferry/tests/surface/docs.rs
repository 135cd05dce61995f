//! `--help` and `docs/*.md` list every route and every option: generated blocks compared with
//! the code's tables, rewritten with `FERRY_BLESS_DOCS=1`.

/// `ferry serve --help` lists every route of the OpenAPI document (so it lists every route the
/// handlers declare), and `docs/server.md`'s copy of the table is the same table.
#[test]
fn help_and_server_docs_list_every_route() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--help"])
        .output()
        .expect("run ferry");
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).expect("utf-8");
    let operations = ferry::openapi::operations();
    assert!(operations.len() >= 28, "{operations:?}");
    for (path, methods) in &operations {
        assert!(!methods.is_empty(), "{path}");
        for method in methods {
            let row = format!("| {method} | {path} | ");
            assert!(help.contains(&row), "`{row}` missing from serve --help");
        }
    }
    let table = ferry::openapi::route_table();
    assert!(help.contains(table.trim_end()), "help holds the table");
    let mut docs = Docs::read();
    docs.keep_equal("docs/server.md", "routes", &table);
    docs.finish();
}

/// Every option of `ferry serve` is in the docs: each options struct's table (made from clap's
/// declarations, as `--help` is) stands once in `docs/*.md`, equal to what the code declares.
#[test]
fn docs_list_every_option() {
    let tables = ferry::reference::option_tables();
    assert!(tables.len() >= 6, "{tables:?}");
    let mut docs = Docs::read();
    for (group, table) in &tables {
        let file = docs
            .file_with(&format!("<!-- options:{group}:begin -->"))
            .unwrap_or_else(|| {
                panic!("no docs/*.md has a table for {group}: add `<!-- options:{group}:begin -->` and `<!-- options:{group}:end -->` where its options belong, then bless")
            });
        docs.keep_equal(&file, &format!("options:{group}"), table);
    }
    docs.finish();
}

/// `docs/*.md` with generated blocks between `<!-- NAME:begin -->` and `<!-- NAME:end -->`:
/// compared with the code's tables, or rewritten with `FERRY_BLESS_DOCS=1`.
struct Docs {
    files: Vec<(String, String)>,
    /// Blocks that differ, as `file: block`.
    stale: Vec<String>,
    bless: bool,
}

impl Docs {
    fn root() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    fn read() -> Self {
        let mut files: Vec<(String, String)> = std::fs::read_dir(Self::root().join("docs"))
            .expect("docs/")
            .map(|entry| {
                entry
                    .expect("entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|name| name.ends_with(".md"))
            .map(|name| {
                let rel = format!("docs/{name}");
                let text = std::fs::read_to_string(Self::root().join(&rel)).expect("read");
                (rel, text)
            })
            .collect();
        files.sort();
        Docs {
            files,
            stale: Vec::new(),
            bless: std::env::var_os("FERRY_BLESS_DOCS").is_some(),
        }
    }

    /// The one file holding `marker`.
    fn file_with(&self, marker: &str) -> Option<String> {
        let holders: Vec<&String> = self
            .files
            .iter()
            .filter(|(_, text)| text.contains(marker))
            .map(|(name, _)| name)
            .collect();
        assert!(holders.len() <= 1, "{marker} in several files: {holders:?}");
        holders.first().map(|name| (*name).clone())
    }

    /// The block `name` of `file` equals `want` (or becomes it when blessing).
    fn keep_equal(&mut self, file: &str, name: &str, want: &str) {
        let (begin, end) = (
            format!("<!-- {name}:begin -->\n"),
            format!("<!-- {name}:end -->"),
        );
        let text = &mut self
            .files
            .iter_mut()
            .find(|(f, _)| f == file)
            .unwrap_or_else(|| panic!("{file} missing"))
            .1;
        let start = text
            .find(&begin)
            .unwrap_or_else(|| panic!("{file}: no {begin}"))
            + begin.len();
        let stop = start
            + text[start..]
                .find(&end)
                .unwrap_or_else(|| panic!("{file}: no {end}"));
        if &text[start..stop] == want {
            return;
        }
        if self.bless {
            text.replace_range(start..stop, want);
        }
        self.stale.push(format!("{file}: {name}"));
    }

    /// Writes blessed files back (only those that changed: the two tests bless different
    /// blocks, one at a time with `--test-threads=1`), or fails naming every stale block.
    fn finish(self) {
        if self.bless {
            for (file, text) in &self.files {
                if self
                    .stale
                    .iter()
                    .any(|s| s.starts_with(&format!("{file}: ")))
                {
                    std::fs::write(Self::root().join(file), text).expect("write");
                }
            }
            return;
        }
        assert!(
            self.stale.is_empty(),
            "stale generated tables (run FERRY_BLESS_DOCS=1 cargo test -p ferry --test surface -- docs --test-threads=1): {:?}",
            self.stale
        );
    }
}
