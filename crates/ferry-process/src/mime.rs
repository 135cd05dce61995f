//! MIME types of stored files: from their first bytes where a well-known signature says, else
//! from the name. The client's claim is never trusted (`${file.mime}` drives `/file/filter`).

/// The type of a file named `name`, from its extension.
pub fn guess(name: &str) -> String {
    mime_guess::from_path(name)
        .first()
        .map(|m| m.essence_str().to_owned())
        .unwrap_or_else(|| "application/octet-stream".to_owned())
}

/// The type of `head` (the file's first bytes), or from `name` if no signature matches.
pub fn sniff(head: &[u8], name: &str) -> String {
    let sig: &[(&[u8], usize, &str)] = &[
        (b"\xFF\xD8\xFF", 0, "image/jpeg"),
        (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
        (b"GIF8", 0, "image/gif"),
        (b"WEBP", 8, "image/webp"),
        (b"%PDF-", 0, "application/pdf"),
        (b"PK\x03\x04", 0, "application/zip"),
        (b"\x1f\x8b", 0, "application/gzip"),
        (b"\x1aE\xdf\xa3", 0, "video/webm"),
        (b"OggS", 0, "audio/ogg"),
        (b"ID3", 0, "audio/mpeg"),
        (b"fLaC", 0, "audio/flac"),
        (b"WAVE", 8, "audio/wav"),
        (b"ftyp", 4, "video/mp4"),
    ];
    for (magic, at, mime) in sig {
        if head.len() >= at + magic.len() && &head[*at..at + magic.len()] == *magic {
            // An MP4 container holding only audio says so in its brand.
            if *mime == "video/mp4" && head.get(8..11) == Some(b"M4A") {
                return "audio/mp4".to_owned();
            }
            return (*mime).to_owned();
        }
    }
    guess(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_win_over_names() {
        assert_eq!(sniff(b"\xFF\xD8\xFF\xE0rest", "x.txt"), "image/jpeg");
        assert_eq!(sniff(b"hello", "notes.txt"), "text/plain");
        assert_eq!(sniff(b"", "blob"), "application/octet-stream");
        assert_eq!(sniff(b"\0\0\0\x20ftypisom", "v"), "video/mp4");
    }
}
