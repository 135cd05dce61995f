//! The documentation's links resolve: every relative link in `README.md` and `docs/*.md` names
//! a file or directory of the repository, and every `#anchor` (in the same file or another
//! Markdown file) names one of its headings, slugged as GitHub does. No network: absolute URLs
//! are not followed. Links inside code (fenced blocks, code spans) are not links.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Markdown files whose links are checked.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The text with fenced code blocks blanked and code spans removed (a span may cross lines).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        match fence {
            Some(marker) if trimmed.starts_with(marker) => fence = None,
            Some(_) => {}
            None if trimmed.starts_with("```") || trimmed.starts_with("~~~") => {
                fence = Some(&trimmed[..3]);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    strip_code_spans(&out)
}

/// Removes each run of n backticks up to the next run of exactly n (CommonMark code spans).
fn strip_code_spans(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let run_at = |i: usize| chars[i..].iter().take_while(|c| **c == '`').count();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let n = run_at(i);
        let mut j = i + n;
        let close = loop {
            if j >= chars.len() {
                break None;
            }
            if chars[j] == '`' {
                let m = run_at(j);
                if m == n {
                    break Some(j + m);
                }
                j += m;
            } else {
                j += 1;
            }
        };
        match close {
            Some(end) => i = end,
            None => {
                // An unmatched run is literal text.
                out.extend(&chars[i..i + n]);
                i += n;
            }
        }
    }
    out
}

/// Every link target: inline `[text](target "title")` and reference definitions `[x]: target`.
fn links(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut out = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').unwrap_or(after.len());
        let target = after[..end].split_whitespace().next().unwrap_or("");
        out.push(target.trim_matches(['<', '>']).to_owned());
        rest = &after[end..];
    }
    for line in prose.lines() {
        let line = line.trim_start();
        if let Some(close) = line.strip_prefix('[').and_then(|l| l.find("]: ")) {
            let target = line[close + 4..].split_whitespace().next().unwrap_or("");
            out.push(target.to_owned());
        }
    }
    out
}

/// The anchors GitHub gives a file's headings: lower case, inline markup and punctuation
/// dropped (letters, digits, `_` and `-` kept), spaces as `-`, repeats numbered `-1`, `-2`.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut fence = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if fence || hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let heading = link_texts(line[hashes..].trim());
        let base: String = heading
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut slug = base.clone();
        let mut n = 0;
        while seen.contains(&slug) {
            n += 1;
            slug = format!("{base}-{n}");
        }
        seen.insert(slug);
    }
    seen
}

/// `[text](target)` -> `text`, as a heading renders.
fn link_texts(heading: &str) -> String {
    let mut out = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](") else {
            break;
        };
        let Some(close) = rest[open + mid..].find(')') else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..open + mid]);
        rest = &rest[open + mid + close + 1..];
    }
    out.push_str(rest);
    out
}

/// What is wrong with `file`'s links, one line each.
fn broken_links(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).expect("read");
    let dir = file.parent().expect("parent");
    let mut problems = Vec::new();
    for link in links(&text) {
        if link.is_empty() {
            problems.push(format!("{}: an empty link", file.display()));
            continue;
        }
        if link.contains("://") || link.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match link.split_once('#') {
            Some((path, anchor)) => (path, Some(anchor)),
            None => (link.as_str(), None),
        };
        let target = if path.is_empty() {
            file.to_owned()
        } else {
            dir.join(path)
        };
        if !target.exists() {
            problems.push(format!("{}: {link}: no such file", file.display()));
            continue;
        }
        let Some(anchor) = anchor else { continue };
        let is_markdown = target.extension().is_some_and(|e| e == "md");
        let known = is_markdown
            && anchors(&std::fs::read_to_string(&target).expect("read")).contains(anchor);
        if !known {
            problems.push(format!("{}: {link}: no such heading", file.display()));
        }
    }
    problems
}

#[test]
fn readme_and_docs_links_resolve() {
    let root = root();
    let files = documents(&root);
    assert!(files.len() > 1, "{files:?}");
    let problems: Vec<String> = files.iter().flat_map(|f| broken_links(f)).collect();
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

/// The checker itself: broken files and anchors are found, good ones and code are not.
#[test]
fn the_checker_finds_broken_links_and_only_those() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("docs")).expect("mkdir");
    std::fs::write(
        dir.path().join("docs/other.md"),
        "# Other page\n\n## The `ferry` binary\n\n## Hooks: told (tusd's format)\n\n## Hooks: told (tusd's format)\n",
    )
    .expect("write");
    let readme = dir.path().join("README.md");
    std::fs::write(
        &readme,
        "# Top\n\n## Same file\n\n\
         [ok](docs/other.md) [ok](docs/other.md#the-ferry-binary) [ok](#same-file)\n\
         [ok](docs/other.md#hooks-told-tusds-format-1) [ok](docs) [ok](https://example.com/x)\n\
         [missing](docs/nope.md) [bad anchor](docs/other.md#nope) [bad here](#other-page)\n\
         `[in code](nope.md)` and ``[in `code`](nope.md)``\n\n\
         ```md\n[in a fence](nope.md)\n# Not a heading\n```\n\n\
         [ref]: docs/gone.md\n",
    )
    .expect("write");
    let problems = broken_links(&readme);
    let names: Vec<&str> = problems
        .iter()
        .map(|p| p.split(": ").nth(1).expect("link"))
        .collect();
    assert_eq!(
        names,
        [
            "docs/nope.md",
            "docs/other.md#nope",
            "#other-page",
            "docs/gone.md"
        ],
        "{problems:?}"
    );
}
