//! Templates: `--assembly-templates DIR` holds one `{template_id}.json` per template,
//! `{"steps": {...}, "allow_steps_override": true}`. A request naming `template_id` gets the
//! template's steps; its own `steps` are merged over them, step by step and key by key, unless
//! the template sets `allow_steps_override: false`.

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::ApiError;

/// Largest template file read, in bytes.
const MAX_TEMPLATE_BYTES: u64 = 256 * 1024;

/// The steps of `params`: its own, or its template's with its own merged over them.
pub async fn resolve(params: &Value, dir: Option<&Path>) -> Result<Value, ApiError> {
    let own = params.get("steps");
    let Some(template_id) = params.get("template_id") else {
        return own.cloned().ok_or_else(|| {
            ApiError::bad(
                "ASSEMBLY_NO_STEPS",
                "The params have neither steps nor a template_id.",
            )
        });
    };
    let Value::String(id) = template_id else {
        return Err(ApiError::bad(
            "INVALID_TEMPLATE_FIELD",
            "template_id must be a string.",
        ));
    };
    let unknown = || {
        ApiError::bad(
            "INVALID_TEMPLATE_FIELD",
            format!("There is no template {id:?}."),
        )
    };
    // The id names a file: nothing but a plain name may reach the path.
    if id.is_empty()
        || id.len() > 64
        || !id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(unknown());
    }
    let dir = dir.ok_or_else(unknown)?;
    let path = dir.join(format!("{id}.json"));
    let meta = tokio::fs::metadata(&path).await.map_err(|_| unknown())?;
    if !meta.is_file() || meta.len() > MAX_TEMPLATE_BYTES {
        return Err(unknown());
    }
    let text = tokio::fs::read_to_string(&path)
        .await
        .map_err(|_| unknown())?;
    let template: Value = serde_json::from_str(&text).map_err(|e| {
        tracing::error!(template = %id, error = %e, "template is not valid JSON");
        unknown()
    })?;
    crate::limits::check_depth(&template)?;
    let base = template
        .get("steps")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    let Some(own) = own else {
        return Ok(base);
    };
    if template.get("allow_steps_override") == Some(&Value::Bool(false)) {
        return Err(ApiError::bad(
            "TEMPLATE_DENIES_STEPS_OVERRIDE",
            format!("Template {id:?} does not allow its steps to be overridden."),
        ));
    }
    Ok(merge(base, own))
}

/// `over`'s steps merged into `base`: a step in both gets `over`'s keys on top of `base`'s.
fn merge(base: Value, over: &Value) -> Value {
    match (base, over) {
        (Value::Object(mut base), Value::Object(over)) => {
            for (name, step) in over {
                let merged = match (base.remove(name), step) {
                    (Some(Value::Object(mut b)), Value::Object(o)) => {
                        b.extend(o.clone());
                        Value::Object(b)
                    }
                    (_, o) => o.clone(),
                };
                base.insert(name.clone(), merged);
            }
            Value::Object(base)
        }
        (_, over) => over.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn templates_resolve_and_merge() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let t =
            json!({"steps": {"f": {"robot": "/file/filter", "use": ":original", "accepts": []}}});
        std::fs::write(dir.path().join("t1.json"), t.to_string()).unwrap_or_else(|e| panic!("{e}"));
        let locked = json!({"steps": {}, "allow_steps_override": false});
        std::fs::write(dir.path().join("locked.json"), locked.to_string())
            .unwrap_or_else(|e| panic!("{e}"));

        let got = resolve(
            &json!({"template_id": "t1", "steps": {"f": {"accepts": null}}}),
            Some(dir.path()),
        )
        .await;
        assert_eq!(
            got,
            Ok(json!({"f": {"robot": "/file/filter", "use": ":original", "accepts": null}}))
        );
        for id in ["nope", "../t1", "t1.json", ""] {
            let got = resolve(&json!({"template_id": id}), Some(dir.path())).await;
            assert_eq!(
                got.map_err(|e| e.code),
                Err("INVALID_TEMPLATE_FIELD"),
                "{id}"
            );
        }
        let got = resolve(
            &json!({"template_id": "locked", "steps": {}}),
            Some(dir.path()),
        )
        .await;
        assert_eq!(
            got.map_err(|e| e.code),
            Err("TEMPLATE_DENIES_STEPS_OVERRIDE")
        );
        let got = resolve(&json!({}), Some(dir.path())).await;
        assert_eq!(got.map_err(|e| e.code), Err("ASSEMBLY_NO_STEPS"));
    }
}
