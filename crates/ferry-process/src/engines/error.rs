//! The one error type of the engine adapters. Robots map it to Transloadit's codes:
//! [`EngineError::is_validation`] → the robot's `*_VALIDATION` code, [`EngineError::TimedOut`] →
//! `INTERNAL_COMMAND_TIMEOUT`, the rest → the robot's `*_ERROR` / `INTERNAL_COMMAND_ERROR`.
//!
//! Messages name the program and the cause, never a secret: children run with a cleared
//! environment, and only the tail of their stderr is kept.

use std::time::Duration;

/// Why an engine call did not produce its output.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A parameter is outside what the robot accepts (bad value, option outside the allowed set).
    #[error("{0}")]
    Invalid(String),
    /// The installed engine cannot do this (e.g. libvips built without an AVIF encoder).
    #[error("{0}")]
    Unsupported(String),
    /// The program is not installed (or not found where configured).
    #[error("{engine} is not installed")]
    Missing {
        /// Program name, e.g. `ffmpeg`.
        engine: &'static str,
    },
    /// The input's dimensions exceed the pixel cap; refused before any decoding.
    #[error("the input is {width}x{height} pixels, over the limit of {max} pixels")]
    TooManyPixels {
        /// Width from the file's header.
        width: u64,
        /// Height from the file's header.
        height: u64,
        /// The cap (`Limits::max_pixels`).
        max: u64,
    },
    /// The input is larger than a size limit (e.g. clamd's stream limit).
    #[error("the input is {size} bytes, over the limit of {max} bytes")]
    TooLarge {
        /// Size of the input.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// The process ran past its time limit and was killed.
    #[error("{program} did not finish within {}s and was stopped", limit.as_secs_f64())]
    TimedOut {
        /// Program name.
        program: String,
        /// The limit that was hit.
        limit: Duration,
    },
    /// The job was canceled (assembly canceled, server shutting down); the process was killed.
    #[error("{program} was stopped: the job was canceled")]
    Canceled {
        /// Program name.
        program: String,
    },
    /// The process exited unsuccessfully.
    #[error("{program} failed ({status}): {stderr}")]
    Failed {
        /// Program name.
        program: String,
        /// `exit status 1`, `killed by signal 9`, ...
        status: String,
        /// The last lines of its stderr (capped), trimmed.
        stderr: String,
    },
    /// The program succeeded but its output could not be understood, or it wrote too much.
    #[error("{program} gave unexpected output: {detail}")]
    BadOutput {
        /// Program name.
        program: String,
        /// What was wrong.
        detail: String,
    },
    /// clamd answered with an error, or could not be reached.
    #[error("clamd: {0}")]
    Clamd(String),
    /// Reading or writing the job's files.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl EngineError {
    /// True when the request itself is at fault (a `*_VALIDATION` answer, 4xx), as opposed to
    /// an engine failing on an acceptable request.
    pub fn is_validation(&self) -> bool {
        matches!(
            self,
            Self::Invalid(_)
                | Self::Unsupported(_)
                | Self::TooManyPixels { .. }
                | Self::TooLarge { .. }
        )
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            context: context.into(),
            source,
        }
    }

    pub(crate) fn bad_output(program: &str, detail: impl Into<String>) -> Self {
        Self::BadOutput {
            program: program.to_owned(),
            detail: detail.into(),
        }
    }
}
