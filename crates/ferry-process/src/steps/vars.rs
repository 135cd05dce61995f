//! Assembly variables: `${assembly.id}`, `${unique_prefix}`, `${file.url_name}`,
//! `${file.meta.width}`, `${fields.NAME}`, ... replaced in a step's string parameters before its
//! robot sees them. An unknown variable is left as written, as Transloadit leaves it.

use serde_json::{Map, Value};

use crate::assembly::record::FileRecord;
use crate::id::Id;

/// What variables can refer to while one file passes through one step.
#[derive(Debug)]
pub struct Scope<'a> {
    /// The Assembly's id.
    pub assembly: &'a Id,
    /// The Assembly's fields.
    pub fields: &'a Map<String, Value>,
    /// The file, if the step runs on one.
    pub file: Option<&'a FileRecord>,
    /// A fresh `ab/cdef...` prefix for this result.
    pub unique_prefix: &'a str,
}

impl Scope<'_> {
    /// The value of the variable `name` (without `${}`), if known.
    pub fn lookup(&self, name: &str) -> Option<String> {
        let name = name.trim();
        if let Some(field) = name.strip_prefix("fields.") {
            return self.fields.get(field).map(text);
        }
        match name {
            "assembly.id" => return Some(self.assembly.to_string()),
            "unique_prefix" => return Some(self.unique_prefix.to_owned()),
            _ => {}
        }
        let file = self.file?;
        if let Some(key) = name.strip_prefix("file.meta.") {
            return file.meta.get(key).map(text);
        }
        if let Some(key) = name.strip_prefix("file.user_meta.") {
            return file.user_meta.get(key).map(text);
        }
        Some(match name {
            "unique_original_prefix" => prefix_of(&file.original_id),
            "file.id" => file.id.to_string(),
            "file.name" => file.name.clone(),
            "file.url_name" => url_name(&file.name),
            "file.basename" => file.basename.clone(),
            "file.ext" => file.ext.clone(),
            "file.size" => file.size.to_string(),
            "file.mime" => file.mime.clone(),
            "file.type" => file.kind.clone().unwrap_or_default(),
            "file.field" => file.field.clone(),
            "file.original_id" => file.original_id.to_string(),
            "file.original_name" => file.original_name.clone(),
            "file.original_basename" => file.original_basename.clone(),
            _ => return None,
        })
    }

    /// `raw` with every known `${...}` replaced.
    pub fn expand(&self, raw: &str) -> String {
        let mut out = String::with_capacity(raw.len());
        let mut rest = raw;
        while let Some(start) = rest.find("${") {
            let Some(len) = rest[start..].find('}') else {
                break;
            };
            let name = &rest[start + 2..start + len];
            out.push_str(&rest[..start]);
            match self.lookup(name) {
                Some(v) => out.push_str(&v),
                None => out.push_str(&rest[start..=start + len]),
            }
            rest = &rest[start + len + 1..];
        }
        out.push_str(rest);
        out
    }

    /// `value` with every string in it expanded.
    pub fn expand_value(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.expand(s)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.expand_value(v)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.expand_value(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// A value as variable text: strings bare, the rest as JSON.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `ab/cdef...`: an id split after two characters, so store paths fan out into directories.
pub fn prefix_of(id: &Id) -> String {
    let s = id.as_str();
    format!("{}/{}", &s[..2], &s[2..])
}

/// A file name safe in a URL path: letters, digits, `.`, `-` and `_`; anything else `_`.
pub fn url_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let trimmed = cleaned.trim_start_matches('.');
    if trimmed.is_empty() {
        "file".to_owned()
    } else {
        trimmed.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn variables_expand_and_unknown_ones_stay() {
        let id = Id::random();
        let fields = json!({"folder": "inbox", "n": 3});
        let Value::Object(fields) = fields else {
            return;
        };
        let mut file = FileRecord::upload(
            Id::random(),
            "my photo (1).JPG".into(),
            10,
            "image/jpeg".into(),
            "file".into(),
        );
        file.meta.insert("width".into(), json!(640));
        let scope = Scope {
            assembly: &id,
            fields: &fields,
            file: Some(&file),
            unique_prefix: "ab/cd",
        };
        assert_eq!(
            scope.expand("${fields.folder}/${unique_prefix}/${file.url_name}:${file.meta.width}:${fields.n}:${nope}:${file.ext}"),
            "inbox/ab/cd/my_photo__1_.JPG:640:3:${nope}:jpg"
        );
        assert_eq!(scope.expand("${assembly.id}"), id.to_string());
        assert_eq!(scope.expand("open ${ never closed"), "open ${ never closed");
        assert_eq!(url_name("../../etc/passwd"), "_.._etc_passwd");
    }
}
