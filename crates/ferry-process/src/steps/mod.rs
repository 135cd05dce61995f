//! Assembly Instructions: the `steps` object checked and put in order. Each step names a robot
//! and the steps whose results it `use`s (`:original` is the uploads); the graph must be acyclic,
//! name only known steps, and stay under the caps of [`crate::limits`].
//!
//! - [`vars`]: `${...}` Assembly variables in parameter values.
//! - [`template`]: `template_id` → the stored steps, and what a request may override.

pub mod template;
pub mod vars;

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::limits::{MAX_STEP_NAME, MAX_STEPS, MAX_USES};
use crate::robots::{self, Robot};

/// The reserved name of the uploads step.
pub const ORIGINAL: &str = ":original";

/// One checked step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The step's name.
    pub name: String,
    /// Its robot.
    pub robot: Robot,
    /// The steps whose results are its inputs, in order.
    pub uses: Vec<String>,
    /// `use: {"steps": [...], "bundle_steps": true}`: the robot gets every input at once
    /// (`/file/compress` makes one archive of them instead of one per file).
    #[serde(default)]
    pub bundle: bool,
    /// Whether its results are listed in the status (`result`; default: only steps no other
    /// step uses).
    pub export: bool,
    /// Its other parameters, for the robot.
    pub params: Map<String, Value>,
}

/// Checks `steps` (the params' `steps` object) and orders it so every step comes after the
/// steps it uses. `available` says whether a robot can run on this server.
pub fn plan(steps: &Value, available: &dyn Fn(Robot) -> bool) -> Result<Vec<Step>, ApiError> {
    let map = match steps {
        Value::Object(map) => map,
        _ => {
            return Err(ApiError::bad(
                "ASSEMBLY_INVALID_STEPS",
                "steps must be an object of named steps.",
            ));
        }
    };
    if map.is_empty() {
        return Err(ApiError::bad(
            "ASSEMBLY_EMPTY_STEPS",
            "The Assembly has no steps.",
        ));
    }
    if map.len() > MAX_STEPS {
        return Err(ApiError::bad(
            "ASSEMBLY_INVALID_STEPS",
            format!("An Assembly may have at most {MAX_STEPS} steps."),
        ));
    }
    let mut parsed = BTreeMap::new();
    for (name, body) in map {
        parsed.insert(name.clone(), parse_step(name, body, available)?);
    }
    for step in parsed.values() {
        for used in &step.uses {
            if used == &step.name {
                return Err(ApiError::bad(
                    "ASSEMBLY_STEP_INVALID_USE",
                    format!("Step {:?} uses itself.", step.name),
                ));
            }
            if used != ORIGINAL && !parsed.contains_key(used) {
                return Err(ApiError::bad(
                    "ASSEMBLY_STEP_UNKNOWN_USE",
                    format!("Step {:?} uses {used:?}, which is not a step.", step.name),
                ));
            }
        }
    }
    let used_by_others: std::collections::HashSet<&str> = parsed
        .values()
        .flat_map(|s| s.uses.iter().map(String::as_str))
        .collect();
    let mut steps = order(&parsed)?;
    for step in &mut steps {
        let asked = step.params.remove("result").and_then(|v| v.as_bool());
        step.export =
            asked.unwrap_or(step.name != ORIGINAL && !used_by_others.contains(step.name.as_str()));
    }
    Ok(steps)
}

fn parse_step(
    name: &str,
    body: &Value,
    available: &dyn Fn(Robot) -> bool,
) -> Result<Step, ApiError> {
    if name.is_empty()
        || name.len() > MAX_STEP_NAME
        || name.chars().any(|c| c.is_control() || c == '/')
    {
        return Err(ApiError::bad(
            "INVALID_STEP_NAME",
            format!(
                "{name:?} is not a valid step name (1 to {MAX_STEP_NAME} characters, no / or control characters)."
            ),
        ));
    }
    let Value::Object(body) = body else {
        return Err(ApiError::bad(
            "ASSEMBLY_STEP_INVALID",
            format!("Step {name:?} must be an object."),
        ));
    };
    let robot_name = match body.get("robot") {
        None => {
            return Err(ApiError::bad(
                "ASSEMBLY_STEP_NO_ROBOT",
                format!("Step {name:?} names no robot."),
            ));
        }
        Some(Value::String(r)) => r,
        Some(_) => {
            return Err(ApiError::bad(
                "ASSEMBLY_STEP_INVALID_ROBOT",
                format!("Step {name:?}: robot must be a string."),
            ));
        }
    };
    let robot = Robot::parse(robot_name).ok_or_else(|| {
        ApiError::bad(
            "ASSEMBLY_STEP_UNKNOWN_ROBOT",
            format!("Step {name:?} uses the unknown robot {robot_name:?}."),
        )
    })?;
    if !available(robot) {
        return Err(ApiError::bad(
            "ASSEMBLY_STEP_INVALID_ROBOT",
            format!(
                "Step {name:?}: the robot {} is not available on this server ({}).",
                robot.name(),
                robots::missing_engine(robot)
            ),
        ));
    }
    if (robot == Robot::UploadHandle) != (name == ORIGINAL) {
        return Err(ApiError::bad(
            "INVALID_UPLOAD_HANDLE_STEP_NAME",
            "The /upload/handle robot runs as the step named :original, and only it.",
        ));
    }
    let uses = match body.get("use") {
        None | Some(Value::Null) => Vec::new(),
        Some(u) => parse_use(name, u)?,
    };
    let bundle = match body.get("use").and_then(|u| u.get("bundle_steps")) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(ApiError::bad(
                "ASSEMBLY_STEP_INVALID_USE",
                format!("Step {name:?}: bundle_steps must be true or false."),
            ));
        }
    };
    if (robot == Robot::UploadHandle || robot == Robot::HttpImport) && !uses.is_empty() {
        return Err(ApiError::bad(
            "ASSEMBLY_STEP_INVALID_USE",
            format!("Step {name:?}: the robot {} takes no use.", robot.name()),
        ));
    }
    let mut params = body.clone();
    params.remove("robot");
    params.remove("use");
    robots::validate(robot, name, &params)?;
    Ok(Step {
        name: name.to_owned(),
        robot,
        uses,
        bundle,
        export: false,
        params,
    })
}

/// The names in a `use`: a name, an array of names or of `{name, as}`, or `{steps: [...]}`.
fn parse_use(step: &str, raw: &Value) -> Result<Vec<String>, ApiError> {
    let invalid = || {
        ApiError::bad(
            "ASSEMBLY_STEP_INVALID_USE",
            format!(
                "Step {step:?}: use must be a step name, an array of them, or {{\"steps\": [...]}}."
            ),
        )
    };
    let list = match raw {
        Value::String(s) => return Ok(vec![s.clone()]),
        Value::Array(items) => items,
        Value::Object(o) => match o.get("steps") {
            Some(Value::Array(items)) => items,
            _ => return Err(invalid()),
        },
        _ => return Err(invalid()),
    };
    if list.len() > MAX_USES {
        return Err(ApiError::bad(
            "ASSEMBLY_STEP_INVALID_USE",
            format!("Step {step:?} uses more than {MAX_USES} steps."),
        ));
    }
    list.iter()
        .map(|item| match item {
            Value::String(s) => Ok(s.clone()),
            Value::Object(o) => match o.get("name") {
                Some(Value::String(s)) => Ok(s.clone()),
                _ => Err(invalid()),
            },
            _ => Err(invalid()),
        })
        .collect()
}

/// Kahn's algorithm, by name for a stable order; refuses a cycle.
fn order(steps: &BTreeMap<String, Step>) -> Result<Vec<Step>, ApiError> {
    let mut waiting: HashMap<&str, usize> = steps
        .values()
        .map(|s| {
            let deps = s
                .uses
                .iter()
                .filter(|u| u.as_str() != ORIGINAL || steps.contains_key(ORIGINAL));
            (s.name.as_str(), deps.count())
        })
        .collect();
    let mut out = Vec::with_capacity(steps.len());
    let mut ready: Vec<&str> = waiting
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(k, _)| *k)
        .collect();
    ready.sort_unstable_by(|a, b| b.cmp(a));
    while let Some(name) = ready.pop() {
        waiting.remove(name);
        out.push(steps[name].clone());
        let mut freed = Vec::new();
        for s in steps.values() {
            let count = s.uses.iter().filter(|u| u.as_str() == name).count();
            if count > 0 {
                if let Some(n) = waiting.get_mut(s.name.as_str()) {
                    *n -= count;
                    if *n == 0 {
                        freed.push(s.name.as_str());
                    }
                }
            }
        }
        ready.extend(freed);
        ready.sort_unstable_by(|a, b| b.cmp(a));
    }
    if !waiting.is_empty() {
        let mut names: Vec<&str> = waiting.keys().copied().collect();
        names.sort_unstable();
        return Err(ApiError::bad(
            "ASSEMBLY_STEP_INVALID_USE",
            format!("The steps {names:?} use each other in a cycle."),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn all(_: Robot) -> bool {
        true
    }

    #[test]
    fn steps_come_after_what_they_use() {
        let steps = json!({
            "b": {"robot": "/file/filter", "use": ["a"]},
            "a": {"robot": "/file/filter", "use": ":original"},
            ":original": {"robot": "/upload/handle"},
        });
        let names: Vec<String> = plan(&steps, &all)
            .map(|s| s.into_iter().map(|s| s.name).collect())
            .unwrap_or_default();
        assert_eq!(names, [":original", "a", "b"]);
        let exported: Vec<bool> = plan(&steps, &all)
            .map(|s| s.into_iter().map(|s| s.export).collect())
            .unwrap_or_default();
        assert_eq!(exported, [false, false, true]);
    }

    #[test]
    fn bundle_steps_is_read_from_the_use_object() {
        let bundled = |u: Value| {
            plan(&json!({"z": {"robot": "/file/compress", "use": u}}), &all)
                .map(|s| s[0].bundle)
                .map_err(|e| e.code)
        };
        assert_eq!(
            bundled(json!({"steps": [":original"], "bundle_steps": true})),
            Ok(true)
        );
        assert_eq!(bundled(json!({"steps": [":original"]})), Ok(false));
        assert_eq!(bundled(json!(":original")), Ok(false));
        assert_eq!(
            bundled(json!({"steps": [":original"], "bundle_steps": "yes"})),
            Err("ASSEMBLY_STEP_INVALID_USE")
        );
    }

    #[test]
    fn bad_graphs_get_their_documented_codes() {
        let cases = [
            (json!({}), "ASSEMBLY_EMPTY_STEPS"),
            (json!([]), "ASSEMBLY_INVALID_STEPS"),
            (json!({"a": {"use": ":original"}}), "ASSEMBLY_STEP_NO_ROBOT"),
            (
                json!({"a": {"robot": "/nope/nope"}}),
                "ASSEMBLY_STEP_UNKNOWN_ROBOT",
            ),
            (
                json!({"a": {"robot": "/file/filter", "use": "a"}}),
                "ASSEMBLY_STEP_INVALID_USE",
            ),
            (
                json!({"a": {"robot": "/file/filter", "use": "zz"}}),
                "ASSEMBLY_STEP_UNKNOWN_USE",
            ),
            (
                json!({"a": {"robot": "/file/filter", "use": "b"}, "b": {"robot": "/file/filter", "use": "a"}}),
                "ASSEMBLY_STEP_INVALID_USE",
            ),
            (
                json!({"up": {"robot": "/upload/handle"}}),
                "INVALID_UPLOAD_HANDLE_STEP_NAME",
            ),
            (
                json!({"a": {"robot": "/file/filter", "use": 5}}),
                "ASSEMBLY_STEP_INVALID_USE",
            ),
        ];
        for (steps, code) in cases {
            assert_eq!(
                plan(&steps, &all).err().map(|e| e.code),
                Some(code),
                "{steps}"
            );
        }
        let many: Map<String, Value> = (0..=MAX_STEPS)
            .map(|i| {
                (
                    format!("s{i}"),
                    json!({"robot": "/file/filter", "use": ":original"}),
                )
            })
            .collect();
        assert_eq!(
            plan(&Value::Object(many), &all).err().map(|e| e.code),
            Some("ASSEMBLY_INVALID_STEPS")
        );
        let none = |_: Robot| false;
        assert_eq!(
            plan(&json!({"a": {"robot": "/file/filter"}}), &none)
                .err()
                .map(|e| e.code),
            Some("ASSEMBLY_STEP_INVALID_ROBOT")
        );
    }
}
