//! `/file/compress`: archives of a step's input files. With `use: {"steps": [...],
//! "bundle_steps": true}` every input goes into one archive; otherwise each input gets its own.
//! Supported: `format` (`tar`, the default, or `zip`), `gzip` (tar only: `.tar.gz`),
//! `compression_level` (`-9` .. `0`, default `-6`), `file_layout` (`advanced`, the default: a
//! folder per step and names prefixed with the ids' first letters; `simple`: every file at the
//! top, repeats numbered; `relative-path`: the folder the client sent as `relativePath`), and
//! `archive_name`. Not supported: `password`. Names are made safe by [`super::archive`].
//!
//! Ferry never reads archives (there is no `/file/decompress`), so no zip bomb can be expanded
//! here; what goes in is bounded by the Assembly's caps on files and sizes.

use serde_json::{Map, Value};

use super::archive::{self, Format, Member, Names};
use super::{Ctx, StepError};
use crate::assembly::record::FileRecord;
use crate::error::ApiError;
use crate::steps::Step;
use crate::steps::vars::Scope;

const OWN: [&str; 6] = [
    "format",
    "gzip",
    "password",
    "compression_level",
    "file_layout",
    "archive_name",
];

/// How members are named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    Advanced,
    Simple,
    RelativePath,
}

/// The checked parameters.
#[derive(Clone, Debug)]
struct Params {
    format: Format,
    level: u32,
    layout: Layout,
    archive_name: Option<String>,
}

fn parse(params: &Map<String, Value>) -> Result<Params, String> {
    for key in params.keys() {
        if !OWN.contains(&key.as_str()) && !super::BASE_PARAMS.contains(&key.as_str()) {
            return Err(format!("/file/compress takes no parameter {key:?}."));
        }
    }
    let text = |name: &str| match params.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{name} must be a string.")),
    };
    let gzip = match params.get("gzip") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("gzip must be true or false.".to_owned()),
    };
    let format = match text("format")?.as_deref() {
        None | Some("tar") if gzip => Format::TarGz,
        None | Some("tar") => Format::Tar,
        Some("zip") => Format::Zip,
        Some(other) => return Err(format!("format must be \"tar\" or \"zip\", not {other:?}.")),
    };
    if text("password")?.is_some_and(|p| !p.is_empty()) {
        return Err("password (encrypted archives) is not supported yet.".to_owned());
    }
    let level = match params.get("compression_level") {
        None | Some(Value::Null) => 6,
        Some(v) => v
            .as_i64()
            .filter(|l| (-9..=0).contains(l))
            .map(|l| l.unsigned_abs() as u32)
            .ok_or("compression_level must be a whole number from -9 to 0.")?,
    };
    let layout = match text("file_layout")?.as_deref() {
        None | Some("advanced") => Layout::Advanced,
        Some("simple") => Layout::Simple,
        Some("relative-path") => Layout::RelativePath,
        Some(other) => {
            return Err(format!(
                "file_layout must be \"advanced\", \"simple\" or \"relative-path\", not {other:?}."
            ));
        }
    };
    Ok(Params {
        format,
        level,
        layout,
        archive_name: text("archive_name")?,
    })
}

/// Checks the step's parameters when the Assembly is created.
pub fn validate(step: &str, params: &Map<String, Value>) -> Result<(), ApiError> {
    parse(params)
        .map(drop)
        .map_err(|why| ApiError::bad("FILE_COMPRESS_VALIDATION", format!("Step {step:?}: {why}")))
}

/// The first two characters of an id (the "unique prefix" letters of the advanced layout).
fn two(id: &crate::id::Id) -> &str {
    id.as_str().get(..2).unwrap_or_default()
}

/// The last part of `name` made safe: a file name, no folders.
fn leaf(name: &str) -> String {
    let safe = archive::safe_path(name);
    safe.rsplit('/').next().unwrap_or("file").to_owned()
}

/// The name `file` gets in the archive before it is made unique.
fn member_name(file: &FileRecord, layout: Layout) -> String {
    match layout {
        Layout::Simple => leaf(&file.name),
        Layout::RelativePath => match file.user_meta.get("relativePath").and_then(Value::as_str) {
            // Uppy sends the path with the file's name at its end.
            Some(rel) if !rel.is_empty() => rel.to_owned(),
            _ => leaf(&file.name),
        },
        Layout::Advanced if file.step == crate::steps::ORIGINAL => {
            format!("{}/{}_{}", file.step, two(&file.id), leaf(&file.name))
        }
        Layout::Advanced => format!(
            "{}/{}_{}_{}",
            file.step,
            two(&file.original_id),
            two(&file.id),
            leaf(&file.name)
        ),
    }
}

/// Runs the step: one archive of all `inputs` when bundled, else one per input.
pub async fn run(
    ctx: &Ctx,
    step: &Step,
    inputs: Vec<FileRecord>,
) -> Result<Vec<FileRecord>, StepError> {
    let groups: Vec<Vec<FileRecord>> = if step.bundle {
        vec![inputs].into_iter().filter(|g| !g.is_empty()).collect()
    } else {
        inputs.into_iter().map(|f| vec![f]).collect()
    };
    let mut out = Vec::with_capacity(groups.len());
    for group in groups {
        out.push(one(ctx, step, group).await?);
    }
    Ok(out)
}

async fn one(ctx: &Ctx, step: &Step, group: Vec<FileRecord>) -> Result<FileRecord, StepError> {
    let error = |m: String| StepError::new("FILE_COMPRESS_ERROR", m);
    let first = group
        .first()
        .cloned()
        .ok_or_else(|| error("no input".into()))?;
    let scope = Scope {
        assembly: &ctx.assembly,
        fields: &ctx.fields,
        file: (!step.bundle).then_some(&first),
        unique_prefix: "",
    };
    let Value::Object(expanded) = scope.expand_value(&Value::Object(step.params.clone())) else {
        return Err(error("bad parameters".into()));
    };
    let params = parse(&expanded).map_err(|why| StepError::new("FILE_COMPRESS_VALIDATION", why))?;
    let mut names = Names::default();
    let members: Vec<Member> = group
        .iter()
        .map(|f| Member {
            name: names.take(&member_name(f, params.layout)),
            source: ctx.dir.join(&f.path),
        })
        .collect();
    let (id, rel) = ctx.new_result();
    let rel = format!("{rel}.{}", params.format.extension());
    let path = ctx.dir.join(&rel);
    let cancel = ctx.cancel.clone();
    let (format, level) = (params.format, params.level);
    let target = path.clone();
    let written = tokio::task::spawn_blocking(move || {
        archive::write(&target, format, level, &members, &cancel)
    })
    .await
    .map_err(|e| error(format!("the archiver stopped: {e}")))?;
    let size = match written {
        Ok(size) => size,
        Err(e) => {
            let _ = tokio::fs::remove_file(&path).await;
            return Err(error(format!("cannot write the archive: {e}")));
        }
    };
    if ctx.max_size.is_some_and(|max| size > max) {
        let _ = tokio::fs::remove_file(&path).await;
        return Err(error(format!(
            "the archive ({size} bytes) is larger than this server's size limit."
        )));
    }
    // A name, not a path: only its last part.
    let base = match params.archive_name.as_deref() {
        Some(n) => leaf(n),
        None if step.bundle => "archive".to_owned(),
        None => leaf(&first.basename),
    };
    let name = format!("{base}.{}", params.format.extension());
    Ok(FileRecord::derived(
        &first,
        &step.name,
        name,
        size,
        params.format.mime().to_owned(),
        rel,
        id,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(p: Value) -> Result<(Format, u32, Layout), String> {
        let map = p.as_object().cloned().unwrap_or_default();
        parse(&map).map(|p| (p.format, p.level, p.layout))
    }

    #[test]
    fn parameters_as_documented() {
        assert_eq!(check(json!({})), Ok((Format::Tar, 6, Layout::Advanced)));
        assert_eq!(
            check(json!({"format": "tar", "gzip": true, "compression_level": -9})),
            Ok((Format::TarGz, 9, Layout::Advanced))
        );
        assert_eq!(
            check(
                json!({"format": "zip", "gzip": true, "file_layout": "simple", "compression_level": 0})
            ),
            Ok((Format::Zip, 0, Layout::Simple))
        );
        assert!(check(json!({"format": "rar"})).is_err());
        assert!(check(json!({"compression_level": 3})).is_err());
        assert!(check(json!({"file_layout": "flat"})).is_err());
        assert!(check(json!({"password": "x"})).is_err());
        assert!(check(json!({"password": null})).is_ok());
        assert!(check(json!({"level": 1})).is_err());
    }
}
