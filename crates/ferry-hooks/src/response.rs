//! What a hook receiver answers, as tusd v2 reads it (`HookResponse` in tusd's
//! `pkg/hooks/hooks.go`, `HTTPResponse` in `pkg/handler/http.go`, `FileInfoChanges` in
//! `pkg/handler/datastore.go`):
//!
//! ```text
//! { "HTTPResponse": { "StatusCode": 400, "Body": "...", "Header": { "Name": "value" } },
//!   "RejectUpload": false, "RejectTermination": false,
//!   "ChangeFileInfo": { "ID": "...", "MetaData": { ... }, "Storage": { ... } },
//!   "StopUpload": false }
//! ```
//!
//! Every field is optional. tusd decodes with Go's `encoding/json`, which matches keys
//! case-insensitively (`"rejectUpload"` works), ignores unknown keys (tusd's own Python example
//! sends `"Headers"`, which tusd ignores), and treats `null` as absent; this parser does the
//! same, so a receiver written for tusd behaves identically here. A value of the wrong type is
//! an error, as in Go. This is the raw answer; [`crate::decision`] turns it into checked
//! decisions.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// A hook receiver's answer, field for field.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HookResponse {
    /// Changes to the HTTP answer sent to the client.
    #[serde(rename = "HTTPResponse")]
    pub http_response: HttpResponseChange,
    /// pre-create: refuse the upload.
    #[serde(rename = "RejectUpload")]
    pub reject_upload: bool,
    /// pre-terminate: refuse the deletion.
    #[serde(rename = "RejectTermination")]
    pub reject_termination: bool,
    /// pre-create: change the upload before it is created.
    #[serde(rename = "ChangeFileInfo")]
    pub change_file_info: FileInfoChanges,
    /// post-receive: stop the running upload.
    #[serde(rename = "StopUpload")]
    pub stop_upload: bool,
}

/// `HTTPResponse`: values that replace the client's answer's; zero or empty means unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HttpResponseChange {
    /// The status; `0` when not set.
    #[serde(rename = "StatusCode")]
    pub status_code: i64,
    /// The body; empty when not set.
    #[serde(rename = "Body")]
    pub body: String,
    /// Headers to set, one value each.
    #[serde(rename = "Header")]
    pub header: BTreeMap<String, String>,
}

/// `ChangeFileInfo`: per property, `None` (or an empty id) leaves the upload's own value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FileInfoChanges {
    /// A custom upload id.
    #[serde(rename = "ID")]
    pub id: String,
    /// Replaces the whole metadata (an empty map clears it).
    #[serde(rename = "MetaData")]
    pub metadata: Option<BTreeMap<String, String>>,
    /// Store-specific placement (tusd's filestore reads `Path`).
    #[serde(rename = "Storage")]
    pub storage: Option<BTreeMap<String, String>>,
}

impl HookResponse {
    /// Parses a receiver's JSON answer with Go's rules (see the module docs). An empty or
    /// `null` document is an empty answer.
    pub fn from_json(bytes: &[u8]) -> Result<Self, serde_json::Error> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self::default());
        }
        let value: Value = serde_json::from_slice(bytes)?;
        Self::from_value(&value).map_err(serde_json::Error::custom)
    }

    fn from_value(value: &Value) -> Result<Self, String> {
        let Some(object) = as_object(value, "hook response")? else {
            return Ok(Self::default());
        };
        let mut response = Self::default();
        if let Some(http) = as_object(field(object, "HTTPResponse"), "HTTPResponse")? {
            response.http_response = HttpResponseChange {
                status_code: as_int(field(http, "StatusCode"), "HTTPResponse.StatusCode")?,
                body: as_string(field(http, "Body"), "HTTPResponse.Body")?,
                header: as_string_map(field(http, "Header"), "HTTPResponse.Header")?
                    .unwrap_or_default(),
            };
        }
        response.reject_upload = as_bool(field(object, "RejectUpload"), "RejectUpload")?;
        response.reject_termination =
            as_bool(field(object, "RejectTermination"), "RejectTermination")?;
        response.stop_upload = as_bool(field(object, "StopUpload"), "StopUpload")?;
        if let Some(changes) = as_object(field(object, "ChangeFileInfo"), "ChangeFileInfo")? {
            response.change_file_info = FileInfoChanges {
                id: as_string(field(changes, "ID"), "ChangeFileInfo.ID")?,
                metadata: as_string_map(field(changes, "MetaData"), "ChangeFileInfo.MetaData")?,
                storage: as_string_map(field(changes, "Storage"), "ChangeFileInfo.Storage")?,
            };
        }
        Ok(response)
    }
}

impl<'de> Deserialize<'de> for HookResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Self::from_value(&value).map_err(D::Error::custom)
    }
}

const NULL: &Value = &Value::Null;

/// The value under `name`: the exact key if present, else the first key equal ignoring ASCII
/// case (Go's rule for struct fields).
fn field<'a>(object: &'a Map<String, Value>, name: &str) -> &'a Value {
    object
        .get(name)
        .or_else(|| {
            object
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
                .map(|(_, value)| value)
        })
        .unwrap_or(NULL)
}

fn as_object<'a>(value: &'a Value, what: &str) -> Result<Option<&'a Map<String, Value>>, String> {
    match value {
        Value::Null => Ok(None),
        Value::Object(object) => Ok(Some(object)),
        other => Err(format!("{what} must be an object, got {}", kind(other))),
    }
}

fn as_int(value: &Value, what: &str) -> Result<i64, String> {
    match value {
        Value::Null => Ok(0),
        Value::Number(n) => n
            .as_i64()
            .ok_or_else(|| format!("{what} must be an integer, got {n}")),
        other => Err(format!("{what} must be a number, got {}", kind(other))),
    }
}

fn as_bool(value: &Value, what: &str) -> Result<bool, String> {
    match value {
        Value::Null => Ok(false),
        Value::Bool(b) => Ok(*b),
        other => Err(format!("{what} must be a boolean, got {}", kind(other))),
    }
}

fn as_string(value: &Value, what: &str) -> Result<String, String> {
    match value {
        Value::Null => Ok(String::new()),
        Value::String(s) => Ok(s.clone()),
        other => Err(format!("{what} must be a string, got {}", kind(other))),
    }
}

fn as_string_map(value: &Value, what: &str) -> Result<Option<BTreeMap<String, String>>, String> {
    let Some(object) = as_object(value, what)? else {
        return Ok(None);
    };
    object
        .iter()
        .map(|(key, value)| Ok((key.clone(), as_string(value, &format!("{what}.{key}"))?)))
        .collect::<Result<_, String>>()
        .map(Some)
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_null_documents_are_empty_answers() {
        for doc in ["", "  \n", "null", "{}"] {
            assert_eq!(
                HookResponse::from_json(doc.as_bytes()).ok(),
                Some(HookResponse::default()),
                "{doc:?}"
            );
        }
    }

    #[test]
    fn keys_match_case_insensitively_and_unknown_keys_are_ignored() {
        let doc = br#"{"rejectupload": true, "httpResponse": {"statusCode": 403, "body": "no",
            "Headers": {"X-Ignored": "1"}}, "Extra": [1, 2], "changefileinfo": {"id": "x"}}"#;
        let parsed = HookResponse::from_json(doc).expect("parse");
        assert!(parsed.reject_upload);
        assert_eq!(parsed.http_response.status_code, 403);
        assert_eq!(parsed.http_response.body, "no");
        assert!(parsed.http_response.header.is_empty());
        assert_eq!(parsed.change_file_info.id, "x");
    }

    #[test]
    fn null_fields_are_absent_and_an_empty_metadata_map_is_kept() {
        let doc = br#"{"HTTPResponse": null, "RejectUpload": null,
            "ChangeFileInfo": {"ID": null, "MetaData": {}, "Storage": null}}"#;
        let parsed = HookResponse::from_json(doc).expect("parse");
        assert!(!parsed.reject_upload);
        assert_eq!(parsed.change_file_info.metadata, Some(BTreeMap::new()));
        assert_eq!(parsed.change_file_info.storage, None);
    }

    #[test]
    fn wrong_types_are_errors_naming_the_field() {
        for (doc, message) in [
            (
                r#"{"RejectUpload": "yes"}"#,
                "RejectUpload must be a boolean, got a string",
            ),
            (
                r#"{"HTTPResponse": {"StatusCode": "403"}}"#,
                "HTTPResponse.StatusCode must be a number, got a string",
            ),
            (
                r#"{"HTTPResponse": {"StatusCode": 403.5}}"#,
                "HTTPResponse.StatusCode must be an integer, got 403.5",
            ),
            (
                r#"{"ChangeFileInfo": {"MetaData": {"a": 1}}}"#,
                "ChangeFileInfo.MetaData.a must be a string, got a number",
            ),
            (r#"[]"#, "hook response must be an object, got an array"),
        ] {
            let err = HookResponse::from_json(doc.as_bytes()).expect_err(doc);
            assert_eq!(err.to_string(), message, "{doc}");
        }
        assert!(HookResponse::from_json(b"{not json").is_err());
    }

    #[test]
    fn serializes_every_field_like_go() {
        let value = serde_json::to_value(HookResponse::default()).expect("serialize");
        assert_eq!(
            value,
            serde_json::json!({
                "HTTPResponse": {"StatusCode": 0, "Body": "", "Header": {}},
                "RejectUpload": false,
                "RejectTermination": false,
                "ChangeFileInfo": {"ID": "", "MetaData": null, "Storage": null},
                "StopUpload": false
            })
        );
    }
}
