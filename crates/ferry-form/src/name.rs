//! File names as a client gives them (`?name=` of a raw upload, a form part's `filename`),
//! reduced to a plain base name before anything sees them: no directories, no control
//! characters, never `.` or `..`. Files are stored by id, so a name never reached a path; it
//! does reach hooks, answers and download headers, where `../../x` has no business either.

/// The name used when a client gives none, or one with nothing left.
pub(crate) const UNNAMED: &str = "upload";

/// `raw` without directories or control characters; [`UNNAMED`] when nothing is left.
pub(crate) fn base_name(raw: &str) -> String {
    let last = raw.rsplit(['/', '\\']).next().unwrap_or_default();
    let clean: String = last.chars().filter(|c| !c.is_control()).collect();
    let clean = clean.trim();
    if clean.is_empty() || clean == "." || clean == ".." {
        UNNAMED.to_owned()
    } else {
        clean.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_directories_and_control_characters() {
        for (raw, want) in [
            ("photo.jpg", "photo.jpg"),
            ("../../evil.html", "evil.html"),
            ("..\\..\\evil.html", "evil.html"),
            ("/etc/passwd", "passwd"),
            ("a\r\nb.txt", "ab.txt"),
            ("dir/", UNNAMED),
            ("..", UNNAMED),
            (" . ", UNNAMED),
            ("", UNNAMED),
            ("résumé 2026.pdf", "résumé 2026.pdf"),
        ] {
            assert_eq!(base_name(raw), want, "{raw:?}");
        }
    }
}
