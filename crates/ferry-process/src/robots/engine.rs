//! The robots that run an engine: `/image/resize`, `/image/optimize` (libvips), `/video/encode`,
//! `/video/thumbs`,
//! `/audio/encode` (ffmpeg), `/file/virusscan` (clamd). Each input file of a kind the robot
//! handles is handed to its adapter in [`crate::engines`] with an output path inside the
//! Assembly's `results/`; other files are skipped unless `force_accept` is set, as Transloadit's
//! robots skip them.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::media::{MediaParams, parse, validation_code};
use super::{Ctx, Robot, StepError};
use crate::assembly::record::FileRecord;
use crate::engines::clamd::{ClamdConfig, Verdict};
use crate::engines::image::ResizeParams;
use crate::engines::{EngineError, Limits};
use crate::id::Id;
use crate::steps::Step;

/// The engines this server found at startup, and their limits.
#[derive(Clone, Debug, Default)]
pub struct Engines {
    /// The programs (ffmpeg, ffprobe, vips).
    pub programs: Arc<crate::engines::Engines>,
    /// clamd's socket (`--clamd-socket`), when it answered at startup.
    pub clamd: Option<ClamdConfig>,
    /// Bounds of one engine job.
    pub limits: Limits,
}

impl Engines {
    /// Whether `robot` can run with these engines.
    pub fn runs(&self, robot: Robot) -> bool {
        let p = &self.programs;
        match robot {
            Robot::UploadHandle
            | Robot::FileFilter
            | Robot::HttpImport
            | Robot::FileCompress
            | Robot::S3Store => true,
            Robot::ImageResize | Robot::ImageOptimize => p.vips.is_some() && p.vipsheader.is_some(),
            Robot::VideoEncode | Robot::VideoThumbs | Robot::AudioEncode => {
                p.ffmpeg.is_some() && p.ffprobe.is_some()
            }
            Robot::FileVirusscan => self.clamd.is_some(),
        }
    }
}

/// Checks an engine robot's parameters when the Assembly is created (those holding `${...}`
/// variables are checked when the step runs).
pub fn validate(
    robot: Robot,
    step: &str,
    params: &Map<String, Value>,
) -> Result<(), crate::error::ApiError> {
    if Value::Object(params.clone()).to_string().contains("${") {
        return Ok(());
    }
    parse(robot, params).map(|_| ()).map_err(|why| {
        crate::error::ApiError::bad(validation_code(robot), format!("Step {step:?}: {why}"))
    })
}

/// Whether `robot` handles files of `kind`.
fn handles(robot: Robot, kind: Option<&str>) -> bool {
    match robot {
        Robot::ImageResize | Robot::ImageOptimize => kind == Some("image"),
        Robot::VideoEncode | Robot::VideoThumbs => kind == Some("video"),
        Robot::AudioEncode => matches!(kind, Some("audio" | "video")),
        _ => true,
    }
}

/// Runs an engine robot over `inputs`.
pub async fn run(
    ctx: &Ctx,
    step: &Step,
    inputs: Vec<FileRecord>,
) -> Result<Vec<FileRecord>, StepError> {
    let force = step.params.get("force_accept") == Some(&Value::Bool(true));
    let mut out = Vec::new();
    let jobs = inputs
        .iter()
        .filter(|f| force || handles(step.robot, f.kind.as_deref()))
        .count();
    let mut job = 0;
    for file in inputs {
        if !force && !handles(step.robot, file.kind.as_deref()) {
            continue;
        }
        // Execution progress: this job starts (its engine may report fractions of it).
        crate::live::progress::report(job, jobs, &file.original_id, 0.0);
        let scope = crate::steps::vars::Scope {
            assembly: &ctx.assembly,
            fields: &ctx.fields,
            file: Some(&file),
            unique_prefix: "",
        };
        let Value::Object(params) = scope.expand_value(&Value::Object(step.params.clone())) else {
            continue;
        };
        let parsed = parse(step.robot, &params)
            .map_err(|why| StepError::new(validation_code(step.robot), why))?;
        let input = ctx.dir.join(&file.path);
        out.extend(
            one(ctx, step, &file, &input, parsed)
                .await
                .map_err(|e| failure(step.robot, e))?,
        );
        crate::live::progress::report(job, jobs, &file.original_id, 1.0);
        job += 1;
    }
    Ok(out)
}

fn failure(robot: Robot, e: EngineError) -> StepError {
    if let EngineError::Invalid(m) = &e {
        if let Some(msg) = m.strip_prefix("DECLINED:") {
            return StepError::new("FILE_VIRUSSCAN_DECLINED_FILE", msg);
        }
    }
    let code = match (&e, robot) {
        (EngineError::TimedOut { .. }, _) => "INTERNAL_COMMAND_TIMEOUT",
        (e, r) if e.is_validation() => validation_code(r),
        (_, Robot::ImageResize) => "IMAGE_RESIZE_ERROR",
        (_, Robot::ImageOptimize) => "IMAGE_OPTIMIZE_ERROR",
        _ => "INTERNAL_COMMAND_ERROR",
    };
    StepError::new(code, e.to_string())
}

/// A result record for `path` (absolute, inside the Assembly) made from `input`.
async fn result(
    ctx: &Ctx,
    step: &Step,
    input: &FileRecord,
    id: Id,
    path: &Path,
    mime: &str,
    meta: Value,
) -> Result<FileRecord, EngineError> {
    let size = tokio::fs::metadata(path)
        .await
        .map_err(|e| EngineError::Invalid(format!("output missing: {e}")))?
        .len();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    let name = if ext.is_empty() {
        input.basename.clone()
    } else {
        format!("{}.{ext}", input.basename)
    };
    let rel = path
        .strip_prefix(&ctx.dir)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut rec = FileRecord::derived(input, &step.name, name, size, mime.to_owned(), rel, id);
    if let Value::Object(m) = meta {
        rec.meta = m;
    }
    Ok(rec)
}

/// The parameters, for `file`, of the Assembly's other `/image/resize` steps that use the same
/// steps as `step`: they run beside it over the same files, so a photo is decoded once for all
/// of them (a thumbnail, a large size and a WebP of it).
fn resize_siblings(ctx: &Ctx, step: &Step, file: &FileRecord) -> Vec<ResizeParams> {
    let scope = crate::steps::vars::Scope {
        assembly: &ctx.assembly,
        fields: &ctx.fields,
        file: Some(file),
        unique_prefix: "",
    };
    ctx.steps
        .iter()
        .filter(|s| s.robot == Robot::ImageResize && s.name != step.name && s.uses == step.uses)
        .filter_map(|s| {
            let Value::Object(params) = scope.expand_value(&Value::Object(s.params.clone())) else {
                return None;
            };
            match parse(Robot::ImageResize, &params) {
                Ok(MediaParams::Resize(p)) => Some(p),
                _ => None,
            }
        })
        .collect()
}

async fn one(
    ctx: &Ctx,
    step: &Step,
    file: &FileRecord,
    input: &Path,
    params: MediaParams,
) -> Result<Vec<FileRecord>, EngineError> {
    let e = &ctx.engines;
    let (id, rel) = ctx.new_result();
    let base = ctx.dir.join(&rel);
    let mut progress = |p: crate::engines::ffmpeg::Progress| {
        if let Some(f) = p.fraction {
            crate::live::progress::report_fraction(&file.original_id, f);
        }
    };
    Ok(match params {
        MediaParams::Resize(p) => {
            let siblings = resize_siblings(ctx, step, file);
            let o = crate::engines::image::resize_among(
                &e.programs,
                input,
                &base,
                &p,
                &siblings,
                &e.limits,
                &ctx.cancel,
            )
            .await?;
            let meta = serde_json::json!({"width": o.width, "height": o.height});
            vec![result(ctx, step, file, id, &o.path, o.format.mime(), meta).await?]
        }
        MediaParams::Video(p) => {
            let o = crate::engines::video::encode_video(
                &e.programs,
                input,
                &base,
                &p,
                &e.limits,
                &ctx.cancel,
                &mut progress,
            )
            .await?;
            let meta = serde_json::to_value(&o.meta).unwrap_or_default();
            vec![result(ctx, step, file, id, &o.path, o.mime, meta).await?]
        }
        MediaParams::Audio(p) => {
            let o = crate::engines::audio::encode_audio(
                &e.programs,
                input,
                &base,
                &p,
                &e.limits,
                &ctx.cancel,
                &mut progress,
            )
            .await?;
            let meta = serde_json::to_value(&o.meta).unwrap_or_default();
            vec![result(ctx, step, file, id, &o.path, o.mime, meta).await?]
        }
        MediaParams::Thumbs(p) => {
            let thumbs = crate::engines::thumbs::thumbs(
                &e.programs,
                input,
                &base,
                &p,
                &e.limits,
                &ctx.cancel,
            )
            .await?;
            let mut out = Vec::new();
            for (i, t) in thumbs.iter().enumerate() {
                // Each thumbnail is its own result with its own id.
                let tid = if i == 0 { id.clone() } else { Id::random() };
                let mime = if t.path.extension().is_some_and(|x| x == "png") {
                    "image/png"
                } else {
                    "image/jpeg"
                };
                let meta = serde_json::json!({"thumb_offset": t.position});
                out.push(result(ctx, step, file, tid, &t.path, mime, meta).await?);
            }
            out
        }
        MediaParams::Optimize(p) => {
            // Same format out as in: the input's extension when it is a plain one.
            let ext = Some(file.ext.as_str()).filter(|x| {
                !x.is_empty() && x.len() <= 8 && x.bytes().all(|b| b.is_ascii_alphanumeric())
            });
            let out = match ext {
                Some(x) => base.with_extension(x),
                None => base,
            };
            let o = crate::engines::optimize::optimize(
                &e.programs,
                input,
                &out,
                p,
                &e.limits,
                &ctx.cancel,
            )
            .await?;
            // The optimizer keeps the pixels: the upload's meta (from ffprobe) still holds,
            // with the dimensions libvips read.
            let mut meta = file.meta.clone();
            if let (Some(w), Some(h)) = (o.width, o.height) {
                meta.insert("width".into(), w.into());
                meta.insert("height".into(), h.into());
            }
            let mime = o.format.map_or(file.mime.as_str(), |f| f.mime());
            vec![result(ctx, step, file, id, &o.path, mime, Value::Object(meta)).await?]
        }
        MediaParams::Scan => {
            let Some(clamd) = &e.clamd else {
                return Err(EngineError::Missing { engine: "clamd" });
            };
            match crate::engines::clamd::scan_file(clamd, input, &ctx.cancel).await? {
                Verdict::Clean => {
                    let mut passed = file.clone();
                    passed.step = step.name.clone();
                    vec![passed]
                }
                Verdict::Infected(sig) => {
                    tracing::info!(assembly = %ctx.assembly, signature = %sig, "virus scan declined a file");
                    if step.params.get("error_on_decline") == Some(&Value::Bool(true)) {
                        let msg = step
                            .params
                            .get("error_msg")
                            .and_then(Value::as_str)
                            .unwrap_or("One of your files was declined");
                        return Err(EngineError::Invalid(format!("DECLINED:{msg}")));
                    }
                    Vec::new()
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn step(name: &str, robot: Robot, uses: &str, params: Value) -> Step {
        let Value::Object(params) = params else {
            panic!("object")
        };
        Step {
            name: name.into(),
            robot,
            uses: vec![uses.into()],
            bundle: false,
            export: true,
            params,
        }
    }

    #[test]
    fn a_resize_steps_siblings_are_the_other_resizes_of_the_same_inputs() {
        let steps = [
            step(
                "thumb",
                Robot::ImageResize,
                ":original",
                json!({"width": 320}),
            ),
            step(
                "large",
                Robot::ImageResize,
                ":original",
                json!({"width": 1280}),
            ),
            step(
                "webp",
                Robot::ImageResize,
                ":original",
                json!({"width": 1000, "format": "${fields.f}"}),
            ),
            step(
                "of_thumb",
                Robot::ImageResize,
                "thumb",
                json!({"width": 100}),
            ),
            step("scan", Robot::FileVirusscan, ":original", json!({})),
        ];
        let ctx = Ctx {
            assembly: Id::random(),
            dir: ".".into(),
            fields: json!({"f": "webp"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            cancel: Default::default(),
            egress: None,
            max_size: None,
            engines: Default::default(),
            steps: steps.to_vec().into(),
        };
        let file = FileRecord::upload(
            Id::random(),
            "a.jpg".into(),
            1,
            "image/jpeg".into(),
            "file".into(),
        );
        let widths = |s: &Step| -> Vec<Option<u32>> {
            resize_siblings(&ctx, s, &file)
                .iter()
                .map(|p| p.width)
                .collect()
        };
        // Variables are expanded for the file; a step over another step's results is no sibling.
        assert_eq!(widths(&steps[0]), [Some(1280), Some(1000)]);
        assert_eq!(widths(&steps[2]), [Some(320), Some(1280)]);
        assert!(widths(&steps[3]).is_empty());
        let formats: Vec<_> = resize_siblings(&ctx, &steps[0], &file)
            .iter()
            .map(|p| p.format)
            .collect();
        assert_eq!(
            formats,
            [None, Some(crate::engines::image::ImageFormat::Webp)]
        );
    }
}
