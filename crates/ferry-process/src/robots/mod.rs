//! The robots: which exist, which run here, their parameter checks, and running one step over
//! its input files.
//!
//! - [`filter`]: `/file/filter`; [`import`]: `/http/import`;
//! - [`engine`]: the robots that run an engine (`/image/resize`, `/image/optimize`,
//!   `/video/encode`, ...), through the adapters in [`crate::engines`]; [`media`]: their
//!   parameters.
//! - [`compress`]: `/file/compress` (zip, tar, tar.gz; [`archive`] writes them);
//!   [`s3store`]: `/s3/store` (through `ferry-s3`; `s3put` writes one file).

pub mod archive;
pub mod compress;
pub mod engine;
pub mod filter;
pub mod import;
pub mod media;
mod s3put;
pub mod s3store;

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::assembly::record::FileRecord;
use crate::error::ApiError;
use crate::id::Id;
use crate::steps::Step;

/// The robots this server knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Robot {
    #[serde(rename = "/upload/handle")]
    UploadHandle,
    #[serde(rename = "/file/filter")]
    FileFilter,
    #[serde(rename = "/http/import")]
    HttpImport,
    #[serde(rename = "/image/resize")]
    ImageResize,
    #[serde(rename = "/video/encode")]
    VideoEncode,
    #[serde(rename = "/video/thumbs")]
    VideoThumbs,
    #[serde(rename = "/audio/encode")]
    AudioEncode,
    #[serde(rename = "/file/virusscan")]
    FileVirusscan,
    #[serde(rename = "/image/optimize")]
    ImageOptimize,
    #[serde(rename = "/file/compress")]
    FileCompress,
    #[serde(rename = "/s3/store")]
    S3Store,
}

impl Robot {
    /// Every robot, in the order the docs list them.
    pub const ALL: [Robot; 11] = [
        Robot::UploadHandle,
        Robot::FileFilter,
        Robot::HttpImport,
        Robot::ImageResize,
        Robot::VideoEncode,
        Robot::VideoThumbs,
        Robot::AudioEncode,
        Robot::FileVirusscan,
        Robot::ImageOptimize,
        Robot::FileCompress,
        Robot::S3Store,
    ];

    /// The robot named `name` (`/image/resize`).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.name() == name)
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Robot::UploadHandle => "/upload/handle",
            Robot::FileFilter => "/file/filter",
            Robot::HttpImport => "/http/import",
            Robot::ImageResize => "/image/resize",
            Robot::VideoEncode => "/video/encode",
            Robot::VideoThumbs => "/video/thumbs",
            Robot::AudioEncode => "/audio/encode",
            Robot::FileVirusscan => "/file/virusscan",
            Robot::ImageOptimize => "/image/optimize",
            Robot::FileCompress => "/file/compress",
            Robot::S3Store => "/s3/store",
        }
    }
}

/// What a robot needs that is missing, for the "not available" message.
pub fn missing_engine(robot: Robot) -> &'static str {
    match robot {
        Robot::ImageResize | Robot::ImageOptimize => "no image engine",
        Robot::VideoEncode | Robot::VideoThumbs | Robot::AudioEncode => "no ffmpeg",
        Robot::FileVirusscan => "no --clamd-socket",
        _ => "disabled",
    }
}

/// Parameters every robot takes.
const BASE_PARAMS: [&str; 5] = [
    "result",
    "force_accept",
    "ignore_errors",
    "output_meta",
    "queue",
];

/// Checks a step's parameters when the Assembly is created.
pub fn validate(robot: Robot, step: &str, params: &Map<String, Value>) -> Result<(), ApiError> {
    let own: &[&str] = match robot {
        Robot::UploadHandle => &[],
        Robot::FileFilter => return filter::validate(step, params),
        Robot::HttpImport => return import::validate(step, params),
        Robot::FileCompress => return compress::validate(step, params),
        Robot::S3Store => return s3store::validate(step, params),
        _ => return engine::validate(robot, step, params),
    };
    for key in params.keys() {
        if !own.contains(&key.as_str()) && !BASE_PARAMS.contains(&key.as_str()) {
            return Err(ApiError::bad(
                "ASSEMBLY_STEP_INVALID",
                format!(
                    "Step {step:?}: {} takes no parameter {key:?}.",
                    robot.name()
                ),
            ));
        }
    }
    Ok(())
}

/// A step's failure: a documented code and a message; the Assembly ends with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepError {
    pub code: &'static str,
    pub message: String,
}

impl StepError {
    /// A failure with `code`.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// What a step runs with.
#[derive(Clone, Debug)]
pub struct Ctx {
    /// The Assembly's id and directory (results go under `results/`).
    pub assembly: Id,
    pub dir: PathBuf,
    /// The Assembly's fields, for variables.
    pub fields: Map<String, Value>,
    /// Fired on cancel: the robot stops.
    pub cancel: CancellationToken,
    /// The outbound client of `/http/import`.
    pub egress: Option<Arc<ferry_companion::egress::Egress>>,
    /// Largest file a robot may write or import, in bytes.
    pub max_size: Option<u64>,
    /// The engines and their limits.
    pub engines: engine::Engines,
    /// The Assembly's steps (a resize step learns which others read the same upload).
    pub steps: Arc<[Step]>,
}

impl Ctx {
    /// A fresh result path (relative) and id.
    pub fn new_result(&self) -> (Id, String) {
        let id = Id::random();
        let rel = format!("results/{id}");
        (id, rel)
    }
}

/// Runs `step` over `inputs` (the results of the steps it uses).
pub async fn run(
    ctx: &Ctx,
    step: &Step,
    inputs: Vec<FileRecord>,
) -> Result<Vec<FileRecord>, StepError> {
    match step.robot {
        Robot::UploadHandle => Ok(inputs),
        Robot::FileFilter => filter::run(ctx, step, inputs),
        Robot::HttpImport => import::run(ctx, step).await,
        Robot::FileCompress => compress::run(ctx, step, inputs).await,
        Robot::S3Store => s3store::run(ctx, step, inputs).await,
        _ => engine::run(ctx, step, inputs).await,
    }
}
