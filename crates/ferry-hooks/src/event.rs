//! What a hook receiver is told: the hook type, the upload and the HTTP request that caused it,
//! serialized exactly as tusd v2 sends its hook request, so a receiver written for tusd reads it
//! unchanged.
//!
//! The wire facts, from tusd's `pkg/hooks/hooks.go` (`HookRequest`), `pkg/handler/hooks.go`
//! (`HookEvent`), `pkg/handler/datastore.go` (`FileInfo`) and `pkg/handler/http.go`
//! (`HTTPRequest`), which Go encodes without JSON tags, so the keys are the field names:
//!
//! ```text
//! { "Type": "post-finish",
//!   "Event": { "Upload": { "ID", "Size", "SizeIsDeferred", "Offset", "MetaData", "IsPartial",
//!                          "IsFinal", "PartialUploads", "Storage" },
//!              "HTTPRequest": { "Method", "URI", "RemoteAddr", "Header" } } }
//! ```
//!
//! - `ID` is a string, `""` in pre-create (the upload has no id yet).
//! - `Size` is a number; tusd sends `0` with `SizeIsDeferred: true` while the length is
//!   unknown (its docs call that value null; a Go `int64` cannot be). Both are accepted on input.
//! - `MetaData` is an object of strings. Ferry always sends an object (`{}` when empty) where
//!   tusd could send `null`, so receivers may index it without a null check.
//! - `PartialUploads` is `null` unless the upload is a final concatenation; `Storage` is `null`
//!   until the store has placed the upload (always in pre-create).
//! - `Header` maps Go-canonical names (`Tus-Resumable`) to lists of values, `Host` included.
//!   Maps are sorted by key, as Go's encoder sorts them.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;

use http::{HeaderMap, Method, Uri};
use serde::{Deserialize, Serialize};

use crate::kind::HookType;

/// One hook to send: its type, the upload and the request that caused it.
///
/// Serializes to tusd's hook request `{Type, Event: {Upload, HTTPRequest}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookEvent {
    /// Which hook this is.
    #[serde(rename = "Type")]
    pub hook: HookType,
    /// The upload and the request.
    #[serde(rename = "Event")]
    pub event: EventBody,
}

/// The `Event` object of a hook request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventBody {
    /// The upload the hook is about.
    #[serde(rename = "Upload")]
    pub upload: Upload,
    /// The client's request that caused the hook.
    #[serde(rename = "HTTPRequest", default)]
    pub request: HttpRequestInfo,
}

impl HookEvent {
    /// A hook of type `hook` about `upload`, caused by `request`.
    pub fn new(hook: HookType, upload: Upload, request: HttpRequestInfo) -> Self {
        Self {
            hook,
            event: EventBody { upload, request },
        }
    }

    /// The upload the hook is about.
    pub fn upload(&self) -> &Upload {
        &self.event.upload
    }

    /// The client's request that caused the hook.
    pub fn request(&self) -> &HttpRequestInfo {
        &self.event.request
    }

    /// The same event as another hook type (an upload's pre-create becomes its post-create).
    pub fn with_hook(mut self, hook: HookType) -> Self {
        self.hook = hook;
        self
    }
}

/// An upload as tusd describes it to hooks (`FileInfo`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "UploadWire", into = "UploadWire")]
pub struct Upload {
    /// The upload's id; empty in pre-create.
    pub id: String,
    /// Total length in bytes; `None` while it is deferred or otherwise unknown.
    pub size: Option<u64>,
    /// Bytes received so far.
    pub offset: u64,
    /// The client's metadata (tus `Upload-Metadata`, decoded), or a form's fields.
    pub metadata: BTreeMap<String, String>,
    /// Part of a later concatenation (tus `Upload-Concat: partial`).
    pub is_partial: bool,
    /// A concatenation of partial uploads (tus `Upload-Concat: final;...`).
    pub is_final: bool,
    /// For a final upload, the ids of its parts in order.
    pub partial_uploads: Option<Vec<String>>,
    /// Where the bytes are stored; unknown before the upload is created.
    pub storage: Option<Storage>,
}

/// The JSON shape of [`Upload`], with tusd's key names and its null rules.
#[derive(Serialize, Deserialize)]
struct UploadWire {
    #[serde(rename = "ID", default)]
    id: Option<String>,
    #[serde(rename = "Size", default)]
    size: Option<u64>,
    #[serde(rename = "SizeIsDeferred", default)]
    size_is_deferred: bool,
    #[serde(rename = "Offset", default)]
    offset: Option<u64>,
    #[serde(rename = "MetaData", default)]
    metadata: Option<BTreeMap<String, String>>,
    #[serde(rename = "IsPartial", default)]
    is_partial: bool,
    #[serde(rename = "IsFinal", default)]
    is_final: bool,
    #[serde(rename = "PartialUploads", default)]
    partial_uploads: Option<Vec<String>>,
    #[serde(rename = "Storage", default)]
    storage: Option<Storage>,
}

impl From<Upload> for UploadWire {
    fn from(upload: Upload) -> Self {
        Self {
            id: Some(upload.id),
            // tusd's value for an unknown length: 0, flagged by SizeIsDeferred.
            size: Some(upload.size.unwrap_or(0)),
            size_is_deferred: upload.size.is_none(),
            offset: Some(upload.offset),
            metadata: Some(upload.metadata),
            is_partial: upload.is_partial,
            is_final: upload.is_final,
            partial_uploads: upload.partial_uploads,
            storage: upload.storage,
        }
    }
}

impl From<UploadWire> for Upload {
    fn from(wire: UploadWire) -> Self {
        Self {
            id: wire.id.unwrap_or_default(),
            size: if wire.size_is_deferred {
                None
            } else {
                wire.size
            },
            offset: wire.offset.unwrap_or(0),
            metadata: wire.metadata.unwrap_or_default(),
            is_partial: wire.is_partial,
            is_final: wire.is_final,
            partial_uploads: wire.partial_uploads,
            storage: wire.storage,
        }
    }
}

/// Where an upload's bytes are: a flat map of strings whose `Type` names the store, with the
/// keys tusd's stores use (`filestore`: `Path`, `InfoPath`; `s3store`: `Bucket`, `Key`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Storage(pub BTreeMap<String, String>);

impl Storage {
    /// A file on local disk, as tusd's filestore reports it.
    pub fn filestore(path: &Path, info_path: Option<&Path>) -> Self {
        let storage = Self::default()
            .with("Type", "filestore")
            .with("Path", path.to_string_lossy());
        match info_path {
            Some(info) => storage.with("InfoPath", info.to_string_lossy()),
            None => storage,
        }
    }

    /// An object in a bucket, as tusd's s3store reports it.
    pub fn s3store(bucket: &str, key: &str) -> Self {
        Self::default()
            .with("Type", "s3store")
            .with("Bucket", bucket)
            .with("Key", key)
    }

    /// Adds or replaces one entry (for example where a companion import came from).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.0.insert(key.into(), value.into());
        self
    }

    /// One entry.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }
}

/// The client's request that caused a hook (tusd's `HTTPRequest`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpRequestInfo {
    /// `POST`, `PATCH`, ...
    #[serde(rename = "Method", default)]
    pub method: String,
    /// Path and query as the client sent them.
    #[serde(rename = "URI", default)]
    pub uri: String,
    /// The peer's `ip:port` (the end user or a proxy); empty when unknown.
    #[serde(rename = "RemoteAddr", default)]
    pub remote_addr: String,
    /// Every request header under its Go-canonical name, each with all its values.
    #[serde(rename = "Header", default, deserialize_with = "null_as_default")]
    pub header: BTreeMap<String, Vec<String>>,
}

impl HttpRequestInfo {
    /// Captures a request's parts. Header names are canonicalized as Go does (tusd's receivers
    /// look up `Authorization`, not `authorization`); `Host` is taken from the URI's authority
    /// when the headers lack it (HTTP/2 carries it there).
    pub fn from_parts(
        method: &Method,
        uri: &Uri,
        remote_addr: Option<SocketAddr>,
        headers: &HeaderMap,
    ) -> Self {
        let mut header: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, value) in headers {
            header
                .entry(canonical_header_name(name.as_str()))
                .or_default()
                .push(String::from_utf8_lossy(value.as_bytes()).into_owned());
        }
        if let Some(authority) = uri.authority() {
            header
                .entry("Host".to_owned())
                .or_insert_with(|| vec![authority.to_string()]);
        }
        Self {
            method: method.as_str().to_owned(),
            uri: uri
                .path_and_query()
                .map_or_else(|| "/".to_owned(), ToString::to_string),
            remote_addr: remote_addr.map(|addr| addr.to_string()).unwrap_or_default(),
            header,
        }
    }

    /// The values of header `name`, looked up case-insensitively.
    pub fn header_values(&self, name: &str) -> &[String] {
        self.header
            .get(&canonical_header_name(name))
            .or_else(|| {
                self.header
                    .iter()
                    .find(|(key, _)| key.eq_ignore_ascii_case(name))
                    .map(|(_, values)| values)
            })
            .map_or(&[], Vec::as_slice)
    }
}

/// Go's canonical form of a header name: the first letter and every letter after a hyphen in
/// upper case, the rest in lower case (`content-type` -> `Content-Type`).
pub fn canonical_header_name(name: &str) -> String {
    let mut upper = true;
    name.chars()
        .map(|c| {
            let out = if upper {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            };
            upper = c == '-';
            out
        })
        .collect()
}

fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use serde_json::json;

    #[test]
    fn pre_create_upload_has_empty_id_null_storage_and_deferred_size() {
        let event = HookEvent::new(
            HookType::PreCreate,
            Upload {
                metadata: BTreeMap::from([("filename".to_owned(), "a.txt".to_owned())]),
                ..Upload::default()
            },
            HttpRequestInfo::default(),
        );
        let value = serde_json::to_value(&event).expect("serialize");
        assert_eq!(
            value,
            json!({
                "Type": "pre-create",
                "Event": {
                    "Upload": {
                        "ID": "",
                        "Size": 0,
                        "SizeIsDeferred": true,
                        "Offset": 0,
                        "MetaData": {"filename": "a.txt"},
                        "IsPartial": false,
                        "IsFinal": false,
                        "PartialUploads": null,
                        "Storage": null
                    },
                    "HTTPRequest": {"Method": "", "URI": "", "RemoteAddr": "", "Header": {}}
                }
            })
        );
        let back: HookEvent = serde_json::from_value(value).expect("deserialize");
        assert_eq!(back, event);
    }

    #[test]
    fn request_parts_are_captured_with_go_canonical_names() {
        let mut headers = HeaderMap::new();
        headers.insert("tus-resumable", HeaderValue::from_static("1.0.0"));
        headers.append("cookie", HeaderValue::from_static("a=1"));
        headers.append("cookie", HeaderValue::from_static("b=2"));
        headers.insert("x-forwarded-for", HeaderValue::from_static("10.0.0.1"));
        let uri: Uri = "http://files.example:8080/files/abc?x=1"
            .parse()
            .expect("uri");
        let addr: SocketAddr = "[::1]:59395".parse().expect("addr");
        let info = HttpRequestInfo::from_parts(&Method::PATCH, &uri, Some(addr), &headers);
        assert_eq!(info.method, "PATCH");
        assert_eq!(info.uri, "/files/abc?x=1");
        assert_eq!(info.remote_addr, "[::1]:59395");
        assert_eq!(
            info.header.keys().collect::<Vec<_>>(),
            ["Cookie", "Host", "Tus-Resumable", "X-Forwarded-For"]
        );
        assert_eq!(info.header["Cookie"], ["a=1", "b=2"]);
        assert_eq!(info.header["Host"], ["files.example:8080"]);
        assert_eq!(info.header_values("COOKIE"), ["a=1", "b=2"]);
        assert!(info.header_values("Authorization").is_empty());
    }

    #[test]
    fn storage_uses_tusd_store_keys() {
        let fs = Storage::filestore(Path::new("/d/abc"), Some(Path::new("/d/abc.info")));
        assert_eq!(
            serde_json::to_value(&fs).expect("serialize"),
            json!({"Type": "filestore", "Path": "/d/abc", "InfoPath": "/d/abc.info"})
        );
        let s3 = Storage::s3store("bucket", "prefix/abc").with("Source", "https://x/y");
        assert_eq!(s3.get("Key"), Some("prefix/abc"));
        assert_eq!(
            serde_json::to_value(&s3).expect("serialize"),
            json!({"Type": "s3store", "Bucket": "bucket", "Key": "prefix/abc", "Source": "https://x/y"})
        );
    }

    #[test]
    fn canonical_names_follow_go() {
        for (raw, canonical) in [
            ("content-type", "Content-Type"),
            ("x-http-method-override", "X-Http-Method-Override"),
            ("WWW-AUTHENTICATE", "Www-Authenticate"),
            ("upload-offset", "Upload-Offset"),
        ] {
            assert_eq!(canonical_header_name(raw), canonical);
        }
    }
}
