//! `/file/filter`: passes on the files its `accepts` conditions accept and its `declines`
//! conditions do not decline. A condition is `[left, operator, right]`, both sides with
//! Assembly variables (`${file.mime}`, `${file.size}`, `${file.meta.width}`); `condition_type`
//! `or` (default) or `and`. Declined files are dropped, or with `error_on_decline` end the
//! Assembly with `FILE_FILTER_DECLINED_FILE` and `error_msg`. JavaScript-expression conditions
//! (`"${...}"` as the whole of `accepts`) are not supported.

use serde_json::{Map, Value};

use super::{Ctx, StepError};
use crate::assembly::record::FileRecord;
use crate::error::ApiError;
use crate::steps::Step;
use crate::steps::vars::Scope;

const OWN: [&str; 5] = [
    "accepts",
    "declines",
    "condition_type",
    "error_on_decline",
    "error_msg",
];
const OPERATORS: [&str; 15] = [
    "=",
    "==",
    "===",
    "<",
    ">",
    "<=",
    ">=",
    "!=",
    "!==",
    "regex",
    "!regex",
    "includes",
    "!includes",
    "empty",
    "!empty",
];
/// Largest regex pattern.
const MAX_PATTERN: usize = 1000;

/// Checks the step's parameters.
pub fn validate(step: &str, params: &Map<String, Value>) -> Result<(), ApiError> {
    let invalid =
        |why: String| ApiError::bad("FILE_FILTER_VALIDATION", format!("Step {step:?}: {why}"));
    for key in params.keys() {
        if !OWN.contains(&key.as_str()) && !super::BASE_PARAMS.contains(&key.as_str()) {
            return Err(invalid(format!("/file/filter takes no parameter {key:?}.")));
        }
    }
    for key in ["accepts", "declines"] {
        match params.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Array(conds)) => {
                for c in conds {
                    let Some([_, Value::String(op), right]) = c.as_array().map(Vec::as_slice)
                    else {
                        return Err(invalid(format!(
                            "each of {key} must be [left, operator, right]."
                        )));
                    };
                    if !OPERATORS.contains(&op.as_str()) {
                        return Err(ApiError::bad(
                            "FILE_FILTER_INVALID_OPERATOR",
                            format!("Step {step:?}: {op:?} is not a filter operator."),
                        ));
                    }
                    if op.ends_with("regex") {
                        let pattern = right.as_str().unwrap_or_default();
                        if pattern.len() > MAX_PATTERN || regex_lite::Regex::new(pattern).is_err() {
                            return Err(invalid(format!("{pattern:?} is not a usable regex.")));
                        }
                    }
                }
            }
            Some(Value::String(_)) => {
                return Err(invalid(format!(
                    "{key} as a JavaScript expression is not supported here; use [left, operator, right] conditions."
                )));
            }
            Some(_) => return Err(invalid(format!("{key} must be an array of conditions."))),
        }
    }
    match params.get("condition_type") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s == "or" || s == "and" => {}
        Some(_) => {
            return Err(invalid(
                "condition_type must be \"or\" or \"and\".".to_owned(),
            ));
        }
    }
    Ok(())
}

/// Runs the filter over `inputs`.
pub fn run(ctx: &Ctx, step: &Step, inputs: Vec<FileRecord>) -> Result<Vec<FileRecord>, StepError> {
    let all = step.params.get("condition_type").and_then(Value::as_str) == Some("and");
    let mut out = Vec::with_capacity(inputs.len());
    for file in inputs {
        let scope = Scope {
            assembly: &ctx.assembly,
            fields: &ctx.fields,
            file: Some(&file),
            unique_prefix: "",
        };
        let accepted = match step.params.get("accepts") {
            Some(Value::Array(conds)) => matches(&scope, conds, all).unwrap_or(true),
            _ => true,
        };
        let declined = match step.params.get("declines") {
            Some(Value::Array(conds)) if !conds.is_empty() => {
                matches(&scope, conds, all).unwrap_or(false)
            }
            _ => false,
        };
        if accepted && !declined {
            let mut passed = file;
            passed.step = step.name.clone();
            out.push(passed);
        } else if step.params.get("error_on_decline") == Some(&Value::Bool(true)) {
            let msg = step
                .params
                .get("error_msg")
                .and_then(Value::as_str)
                .unwrap_or("One of your files was declined");
            return Err(StepError::new("FILE_FILTER_DECLINED_FILE", msg));
        }
    }
    Ok(out)
}

/// Whether `conds` hold for the scope's file (any, or all with `all`); `None` when no
/// condition applies (each names a property the file does not have). `[]` holds for nothing.
fn matches(scope: &Scope<'_>, conds: &[Value], all: bool) -> Option<bool> {
    if conds.is_empty() {
        return Some(false);
    }
    let results: Vec<bool> = conds.iter().filter_map(|c| eval(scope, c)).collect();
    if results.is_empty() {
        return None;
    }
    Some(if all {
        results.iter().all(|b| *b)
    } else {
        results.iter().any(|b| *b)
    })
}

/// One condition; `None` if a side names an unknown property.
fn eval(scope: &Scope<'_>, cond: &Value) -> Option<bool> {
    let [left, Value::String(op), right] = cond.as_array()?.as_slice() else {
        return None;
    };
    let side = |v: &Value| -> Option<String> {
        let s = match v {
            Value::String(s) => scope.expand(s),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        (!s.contains("${")).then_some(s)
    };
    let l = side(left)?;
    let r = side(right)?;
    let num = |s: &str| size(s);
    Some(match op.as_str() {
        "=" | "==" | "===" => match (num(&l), num(&r)) {
            (Some(a), Some(b)) => a == b,
            _ => l == r,
        },
        "!=" | "!==" => match (num(&l), num(&r)) {
            (Some(a), Some(b)) => a != b,
            _ => l != r,
        },
        "<" | ">" | "<=" | ">=" => {
            let (Some(a), Some(b)) = (num(&l), num(&r)) else {
                return Some(false);
            };
            match op.as_str() {
                "<" => a < b,
                ">" => a > b,
                "<=" => a <= b,
                _ => a >= b,
            }
        }
        "regex" | "!regex" => {
            let re = regex_lite::Regex::new(&format!("(?i){r}")).ok()?;
            re.is_match(&l) == (op == "regex")
        }
        "includes" => l.contains(&r),
        "!includes" => !l.contains(&r),
        "empty" => is_empty(&l),
        "!empty" => !is_empty(&l),
        _ => return None,
    })
}

fn is_empty(s: &str) -> bool {
    matches!(s.trim(), "" | "null" | "[]" | "{}" | "undefined")
}

/// A number, or a size such as `20mb` or `1.5 KB` (1024-based).
fn size(raw: &str) -> Option<f64> {
    let s = raw.trim().to_ascii_lowercase();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: f64 = n.parse().ok()?;
    let mult = match unit.trim() {
        "" | "b" => 1.0,
        "kb" | "k" => 1024.0,
        "mb" | "m" => 1024.0 * 1024.0,
        "gb" | "g" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(n * mult)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::Id;
    use serde_json::json;

    fn file(name: &str, size: u64, mime: &str) -> FileRecord {
        FileRecord::upload(
            Id::random(),
            name.to_owned(),
            size,
            mime.to_owned(),
            "file".to_owned(),
        )
    }

    fn step(params: Value) -> Step {
        let Value::Object(params) = params else {
            panic!("object")
        };
        Step {
            name: "f".into(),
            robot: super::super::Robot::FileFilter,
            uses: vec![],
            bundle: false,
            export: true,
            params,
        }
    }

    fn ctx() -> Ctx {
        Ctx {
            assembly: Id::random(),
            dir: ".".into(),
            fields: Map::new(),
            cancel: Default::default(),
            egress: None,
            max_size: None,
            engines: Default::default(),
            steps: Vec::new().into(),
        }
    }

    #[test]
    fn accepts_and_declines_pick_files() {
        let inputs = vec![
            file("a.jpg", 10, "image/jpeg"),
            file("b.mp4", 5 * 1024 * 1024, "video/mp4"),
            file("c.txt", 1, "text/plain"),
        ];
        let names = |p: Value| -> Vec<String> {
            run(&ctx(), &step(p), inputs.clone())
                .map(|v| v.into_iter().map(|f| f.name).collect())
                .unwrap_or_default()
        };
        assert_eq!(
            names(json!({"accepts": [["${file.mime}", "regex", "^image/"]]})),
            ["a.jpg"]
        );
        assert_eq!(
            names(json!({"declines": [["${file.size}", ">", "1mb"]]})),
            ["a.jpg", "c.txt"]
        );
        assert_eq!(
            names(
                json!({"accepts": [["${file.mime}", "includes", "o"], ["${file.size}", "<=", "10"]], "condition_type": "and"})
            ),
            Vec::<String>::new()
        );
        assert_eq!(
            names(json!({"accepts": [["${file.meta.width}", ">", "1"]]})),
            ["a.jpg", "b.mp4", "c.txt"],
            "unknown properties are ignored"
        );
        assert_eq!(names(json!({"accepts": []})), Vec::<String>::new());
        let declined = run(
            &ctx(),
            &step(
                json!({"accepts": [["${file.ext}", "=", "jpg"]], "error_on_decline": true, "error_msg": "images only"}),
            ),
            inputs.clone(),
        );
        assert_eq!(
            declined,
            Err(StepError::new("FILE_FILTER_DECLINED_FILE", "images only"))
        );
    }

    #[test]
    fn bad_filters_are_refused_at_creation() {
        let check =
            |p: Value| validate("f", p.as_object().unwrap_or(&Map::new())).map_err(|e| e.code);
        assert_eq!(
            check(json!({"accepts": [["a", "~=", "b"]]})),
            Err("FILE_FILTER_INVALID_OPERATOR")
        );
        assert_eq!(
            check(json!({"accepts": "${file.size > 1}"})),
            Err("FILE_FILTER_VALIDATION")
        );
        assert_eq!(
            check(json!({"accepts": [["a", "regex", "("]]})),
            Err("FILE_FILTER_VALIDATION")
        );
        assert_eq!(check(json!({"nope": 1})), Err("FILE_FILTER_VALIDATION"));
        assert_eq!(
            check(json!({"accepts": [["a", "==", "b"]], "result": true})),
            Ok(())
        );
    }
}
