//! Engine adapters: the external programs (ffmpeg, ffprobe, libvips, clamd) behind the robots, as
//! plain async functions. Each takes the detected [`Engines`], the input path, an output path
//! base chosen by the caller inside the assembly's directory, checked parameters, [`Limits`] and
//! a `CancellationToken`; each returns what it wrote or an [`EngineError`].
//!
//! Layout:
//! - [`limits`] — the child-process runner (one process per job, time limit, cancel, capped stderr).
//! - [`detect`] — which engines, encoders and image formats this machine has.
//! - [`probe`] — file meta (Transloadit's `meta`) from ffprobe, plus EXIF from libvips.
//! - [`vips`], [`image`], [`image_plan`], [`native`], [`optimize`] — `/image/resize` (in process for
//!   JPEG to JPEG/WebP, else libvips) and `/image/optimize`.
//! - [`ffmpeg`], [`ffopts`], [`video`], [`thumbs`], [`audio`] — `/video/encode`, `/video/thumbs`,
//!   `/audio/encode`, the `ffmpeg` options object and progress.
//! - [`clamd`] — `/file/virusscan` over clamd's socket.
//! - [`cache`] — what was read about a file (header, probe), kept per file.
//! - [`error`] — [`EngineError`].

pub mod audio;
mod cache;
pub mod clamd;
pub mod detect;
pub mod error;
pub mod ffmpeg;
pub mod ffopts;
pub mod image;
mod image_output;
mod image_plan;
pub mod limits;
mod native;
pub mod optimize;
pub mod probe;
pub mod thumbs;
pub mod video;
pub mod vips;

pub use detect::Engines;
pub use error::EngineError;
pub use limits::Limits;
