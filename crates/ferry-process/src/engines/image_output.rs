//! Where an image engine's output goes: its format (the one asked for, else the input's when
//! libvips can write it, else PNG), its path (the output base plus that format's extension) and
//! a scratch directory beside it for intermediates, so they stay on the output's file system.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::EngineError;
use super::image::ImageFormat;
use super::limits;
use super::vips::Header;

/// The format `/image/resize` writes: `wanted`, else the input's, else PNG; one the installed
/// libvips cannot write is refused.
pub(crate) fn output_format(
    wanted: Option<ImageFormat>,
    header: &Header,
    writable: &BTreeSet<ImageFormat>,
) -> Result<ImageFormat, EngineError> {
    let format = wanted
        .or_else(|| ImageFormat::from_loader(&header.loader).filter(|f| writable.contains(f)))
        .unwrap_or(ImageFormat::Png);
    if !writable.contains(&format) {
        return Err(EngineError::Unsupported(format!(
            "the installed libvips cannot write {}",
            format.extension()
        )));
    }
    Ok(format)
}

/// `base` with `format`'s extension, checked as an engine path.
pub(crate) fn with_extension(base: &Path, format: ImageFormat) -> Result<PathBuf, EngineError> {
    let mut name: OsString = base.as_os_str().to_owned();
    name.push(".");
    name.push(format.extension());
    let path = PathBuf::from(name);
    limits::check_path(&path)?;
    Ok(path)
}

/// A temporary directory beside `output`, removed when dropped.
pub(crate) fn scratch_dir(output: &Path) -> Result<tempfile::TempDir, EngineError> {
    let parent = output.parent().unwrap_or(Path::new("/"));
    tempfile::Builder::new()
        .prefix(".vips-")
        .tempdir_in(parent)
        .map_err(|e| {
            EngineError::io(
                format!("creating a scratch directory in {}", parent.display()),
                e,
            )
        })
}
