//! Writing `/file/compress`'s archives: member names made safe and unique, then a zip, a tar or
//! a tar.gz streamed member by member from the Assembly's files (never a whole file in memory),
//! on a blocking thread. A cancel stops the copy between two reads.
//!
//! Names come from uploads, so they are hostile until cleaned: `\` counts as `/`, control
//! characters (NUL included) go, empty, `.` and `..` components are dropped, so no name is
//! absolute or climbs out of the directory it is extracted into; names equal but for case get
//! `_1`, `_2`, ... before their extension, so no member overwrites another on extraction.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

/// The archive kinds `/file/compress` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Zip,
    Tar,
    TarGz,
}

impl Format {
    /// The file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Zip => "zip",
            Format::Tar => "tar",
            Format::TarGz => "tar.gz",
        }
    }

    /// The MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            Format::Zip => "application/zip",
            Format::Tar => "application/x-tar",
            Format::TarGz => "application/gzip",
        }
    }
}

/// The longest member path kept, in bytes (longer ones are cut at a character boundary).
const MAX_NAME: usize = 1024;
/// The longest single path component, in bytes (what common file systems allow).
const MAX_COMPONENT: usize = 255;

/// `raw` as a relative path that stays inside the directory it is extracted into.
pub fn safe_path(raw: &str) -> String {
    let cleaned: String = raw
        .chars()
        .map(|c| if c == '\\' { '/' } else { c })
        .filter(|c| !c.is_control())
        .collect();
    let parts: Vec<&str> = cleaned
        .split('/')
        .map(str::trim)
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .map(|p| cut(p, MAX_COMPONENT))
        .collect();
    let joined = parts.join("/");
    let joined = cut(&joined, MAX_NAME).trim_end_matches('/');
    if joined.is_empty() {
        "file".to_owned()
    } else {
        joined.to_owned()
    }
}

/// `s` cut to at most `max` bytes at a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Hands out member names, each once: a repeat (ignoring case, as case-blind file systems
/// would overwrite it) gets `_1`, `_2`, ... before its extension.
#[derive(Debug, Default)]
pub struct Names(HashSet<String>);

impl Names {
    /// A unique, safe name for `raw`.
    pub fn take(&mut self, raw: &str) -> String {
        let name = safe_path(raw);
        if self.0.insert(name.to_lowercase()) {
            return name;
        }
        let (dir, file) = match name.rsplit_once('/') {
            Some((d, f)) => (format!("{d}/"), f.to_owned()),
            None => (String::new(), name.clone()),
        };
        let (stem, ext) = match file.split_once('.') {
            Some((s, e)) if !s.is_empty() => (s.to_owned(), format!(".{e}")),
            _ => (file.clone(), String::new()),
        };
        let mut n = 1u64;
        loop {
            let candidate = format!("{dir}{stem}_{n}{ext}");
            if self.0.insert(candidate.to_lowercase()) {
                return candidate;
            }
            n += 1;
        }
    }
}

/// One member: its name in the archive and the file holding its bytes.
#[derive(Clone, Debug)]
pub struct Member {
    pub name: String,
    pub source: PathBuf,
}

/// Writes `members` into a new archive at `out` in `format`; `level` 0 (store) to 9.
/// Returns the archive's size. Blocking: call it from `spawn_blocking`.
pub fn write(
    out: &Path,
    format: Format,
    level: u32,
    members: &[Member],
    cancel: &CancellationToken,
) -> io::Result<u64> {
    let file = File::create(out)?;
    match format {
        Format::Zip => write_zip(file, level, members, cancel)?,
        Format::Tar => {
            write_tar(&file, members, cancel)?;
            file.sync_all()?;
        }
        Format::TarGz => {
            let gz = flate2::write::GzEncoder::new(&file, flate2::Compression::new(level));
            write_tar(gz, members, cancel)?.finish()?;
            file.sync_all()?;
        }
    }
    Ok(std::fs::metadata(out)?.len())
}

fn open(member: &Member, cancel: &CancellationToken) -> io::Result<(Cancelable<File>, u64)> {
    let file = File::open(&member.source)?;
    let len = file.metadata()?.len();
    Ok((
        Cancelable {
            inner: file,
            cancel: cancel.clone(),
        },
        len,
    ))
}

fn write_zip(
    file: File,
    level: u32,
    members: &[Member],
    cancel: &CancellationToken,
) -> io::Result<()> {
    use zip::CompressionMethod;
    use zip::write::SimpleFileOptions;
    let mut zip = zip::ZipWriter::new(file);
    for member in members {
        let (mut reader, len) = open(member, cancel)?;
        let options = SimpleFileOptions::default()
            .unix_permissions(0o644)
            .large_file(len >= u64::from(u32::MAX));
        let options = if level == 0 {
            options.compression_method(CompressionMethod::Stored)
        } else {
            options
                .compression_method(CompressionMethod::Deflated)
                .compression_level(Some(i64::from(level)))
        };
        zip.start_file(member.name.as_str(), options)
            .map_err(io::Error::other)?;
        io::copy(&mut reader, &mut zip)?;
    }
    let file = zip.finish().map_err(io::Error::other)?;
    file.sync_all()
}

fn write_tar<W: Write>(out: W, members: &[Member], cancel: &CancellationToken) -> io::Result<W> {
    let mut tar = tar::Builder::new(out);
    for member in members {
        let (reader, len) = open(member, cancel)?;
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(len);
        header.set_mode(0o644);
        header.set_mtime(0);
        // The header says `len` bytes; a source that shrank meanwhile fails the copy.
        tar.append_data(&mut header, &member.name, reader.take(len))?;
    }
    tar.into_inner()
}

/// A reader that fails once `cancel` fires, so a long copy stops promptly.
struct Cancelable<R> {
    inner: R,
    cancel: CancellationToken,
}

impl<R: Read> Read for Cancelable<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.cancel.is_cancelled() {
            return Err(io::Error::other("canceled"));
        }
        self.inner.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_stay_inside() {
        assert_eq!(safe_path("../../etc/passwd"), "etc/passwd");
        assert_eq!(safe_path("/abs/x.txt"), "abs/x.txt");
        assert_eq!(safe_path("..\\..\\win.ini"), "win.ini");
        assert_eq!(safe_path("a/./b/../c"), "a/b/c");
        assert_eq!(safe_path("nul\0byte\n.txt"), "nulbyte.txt");
        assert_eq!(safe_path(".."), "file");
        assert_eq!(safe_path(""), "file");
        assert_eq!(safe_path(&"é".repeat(300)).len(), 254);
    }

    #[test]
    fn repeated_names_are_numbered() {
        let mut names = Names::default();
        assert_eq!(names.take("a.jpg"), "a.jpg");
        assert_eq!(names.take("A.jpg"), "A_1.jpg");
        assert_eq!(names.take("a.jpg"), "a_2.jpg");
        assert_eq!(names.take("d/x.tar.gz"), "d/x.tar.gz");
        assert_eq!(names.take("d/x.tar.gz"), "d/x_1.tar.gz");
        assert_eq!(names.take(".."), "file");
        assert_eq!(names.take("file"), "file_1");
    }
}
