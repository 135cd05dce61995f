//! Caps on what one request may ask for, so hostile params cannot exhaust memory or CPU. Each
//! refusal is a documented error code and a 400.

use serde_json::Value;

use crate::error::ApiError;

/// Largest `params` field, in bytes.
pub const MAX_PARAMS_BYTES: usize = 256 * 1024;
/// Deepest nesting of arrays and objects in `params`.
pub const MAX_DEPTH: usize = 32;
/// Most steps in one Assembly.
pub const MAX_STEPS: usize = 100;
/// Longest step name.
pub const MAX_STEP_NAME: usize = 100;
/// Most entries in one step's `use`.
pub const MAX_USES: usize = 100;
/// Most form fields (besides params and signature) and `fields` entries.
pub const MAX_FIELDS: usize = 100;
/// Largest text form field, and all `fields` together once serialized, in bytes.
pub const MAX_FIELDS_BYTES: usize = 64 * 1024;
/// Most files one Assembly may receive.
pub const MAX_FILES: u64 = 1000;

/// Refuses `value` if it nests deeper than [`MAX_DEPTH`].
pub fn check_depth(value: &Value) -> Result<(), ApiError> {
    // Iterative, so the check itself cannot overflow the stack.
    let mut stack = vec![(value, 1usize)];
    while let Some((v, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            return Err(ApiError::bad(
                "INVALID_PARAMS_FIELD",
                format!("params nest deeper than {MAX_DEPTH} levels."),
            ));
        }
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, depth + 1))),
            _ => {}
        }
    }
    Ok(())
}

/// Parses the raw `params` field: size cap, JSON, an object, depth cap. serde_json's own
/// recursion limit (128) guards the parse; the depth cap comes after.
pub fn parse_params(raw: &str) -> Result<Value, ApiError> {
    if raw.len() > MAX_PARAMS_BYTES {
        return Err(ApiError::bad(
            "INVALID_PARAMS_FIELD",
            format!("The params field is larger than {MAX_PARAMS_BYTES} bytes."),
        ));
    }
    let value: Value = serde_json::from_str(raw).map_err(|e| {
        ApiError::bad(
            "INVALID_PARAMS_FIELD",
            format!("The params field is not valid JSON: {e}"),
        )
    })?;
    if !value.is_object() {
        return Err(ApiError::bad(
            "NO_OBJECT_PARAMS_FIELD",
            "The params field must be a JSON object.",
        ));
    }
    check_depth(&value)?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_params_are_refused_before_use() {
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(40), "]".repeat(40));
        assert_eq!(
            parse_params(&deep).map_err(|e| e.code),
            Err("INVALID_PARAMS_FIELD")
        );
        let deeper = format!("{{\"a\":{}1{}}}", "[".repeat(5000), "]".repeat(5000));
        assert_eq!(
            parse_params(&deeper).map_err(|e| e.code),
            Err("INVALID_PARAMS_FIELD")
        );
        assert_eq!(
            parse_params("[]").map_err(|e| e.code),
            Err("NO_OBJECT_PARAMS_FIELD")
        );
        assert!(parse_params("{\"a\":[[1]]}").is_ok());
    }
}
