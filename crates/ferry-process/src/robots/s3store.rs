//! `/s3/store`: each input file written to an S3 bucket (AWS or any S3-compatible store) through
//! `ferry-s3`, streamed from disk by [`super::s3put`].
//! Supported: `key`, `secret`, `bucket`, `bucket_region`, `host` (an S3-compatible endpoint;
//! `http://` unless a scheme is given, as documented), `no_vhost` (path-style addressing, also
//! used for IP and `localhost` hosts), `path` (default `${unique_prefix}/${file.url_name}`, with
//! every Assembly variable), `acl` (`public-read`, the default, `public`, `private`,
//! `bucket-default`: no ACL header), `headers` (default `Content-Type: ${file.mime}`) and
//! `url_prefix` (the result's `url` and `ssl_url`). Not supported: `credentials` (Template
//! Credentials), `session_token`, `tags`, `check_integrity`, `sign_urls_for`.
//!
//! The endpoint is reached through the egress client, so it must be a public address unless
//! `--allow-local-urls` is set. It is checked when the Assembly is created ([`check_host`]) if
//! its host is literal or made of values known then (fields, the Assembly id); a host naming a
//! per-file value is checked when the step runs. The key and secret are never logged, never in
//! an error, and redacted from the params the status echoes ([`redact`]).

use serde_json::{Map, Value};

use super::s3put::{failure, upload};
use super::{Ctx, StepError};
use crate::assembly::record::FileRecord;
use crate::error::ApiError;
use crate::id::Id;
use crate::steps::Step;
use crate::steps::vars::{Scope, prefix_of};

const OWN: [&str; 11] = [
    "key",
    "secret",
    "bucket",
    "bucket_region",
    "host",
    "no_vhost",
    "path",
    "acl",
    "headers",
    "url_prefix",
    "credentials",
];
/// Parameters that hold credentials: redacted wherever params are shown.
const SECRET_PARAMS: [&str; 3] = ["key", "secret", "session_token"];
/// Headers S3 signing or framing owns; a step may not set them.
const RESERVED_HEADERS: [&str; 8] = [
    "host",
    "authorization",
    "content-length",
    "transfer-encoding",
    "expect",
    "x-amz-date",
    "x-amz-content-sha256",
    "x-amz-security-token",
];
const DEFAULT_PATH: &str = "${unique_prefix}/${file.url_name}";

fn invalid(why: impl Into<String>) -> StepError {
    StepError::new("S3_STORE_VALIDATION", why)
}

/// Checks the step's parameters when the Assembly is created (values holding variables are
/// checked again once expanded).
pub fn validate(step: &str, params: &Map<String, Value>) -> Result<(), ApiError> {
    check(params, true)
        .map(drop)
        .map_err(|e| ApiError::bad(e.code, format!("Step {step:?}: {}", e.message)))
}

/// Refuses, when the Assembly is created, a step whose store is an address the egress rules
/// forbid (a private or loopback host without `--allow-local-urls`): the documented 403
/// `S3_STORE_ACCESS_DENIED`, before any file is received. A host made of variables known at
/// create (`${fields.NAME}`, `${assembly.id}`) is expanded with the Assembly's `fields` and
/// checked the same way; one that names a per-file value (`${file.*}`, `${unique_prefix}`, ...)
/// is only known when the step runs, and is checked then.
pub fn check_host(
    step: &str,
    params: &Map<String, Value>,
    fields: &Map<String, Value>,
    assembly: &Id,
    egress: &ferry_companion::egress::Egress,
) -> Result<(), ApiError> {
    // `${unique_prefix}` differs per result: left as written, like every per-file variable.
    let at_create = Scope {
        assembly,
        fields,
        file: None,
        unique_prefix: "${unique_prefix}",
    };
    let mut params = params.clone();
    for name in ["host", "bucket", "bucket_region"] {
        if let Some(Value::String(v)) = params.get_mut(name) {
            *v = at_create.expand(v);
        }
    }
    // The endpoint comes from the host (or, without one, the region): still holding a
    // variable, it depends on the file.
    let per_file = ["host", "bucket_region"].iter().any(|k| {
        params
            .get(*k)
            .and_then(Value::as_str)
            .is_some_and(|v| v.contains("${"))
    });
    if per_file {
        return Ok(());
    }
    let target = check(&params, true)
        .map_err(|e| ApiError::bad(e.code, format!("Step {step:?}: {}", e.message)))?;
    if egress.check(&target.bucket.endpoint).is_err() {
        return Err(ApiError::new(
            axum::http::StatusCode::FORBIDDEN,
            "S3_STORE_ACCESS_DENIED",
            format!("Step {step:?}: {ACCESS_DENIED}"),
        ));
    }
    Ok(())
}

/// Why a store on a forbidden address is refused.
const ACCESS_DENIED: &str = "The S3 host is an address this server may not connect to.";

/// Settings of one store, checked.
struct Target {
    bucket: ferry_s3::S3Bucket,
    acl: Option<&'static str>,
    headers: Vec<(String, String)>,
    url_prefix: Option<String>,
}

fn check(params: &Map<String, Value>, early: bool) -> Result<Target, StepError> {
    for key in params.keys() {
        if !OWN.contains(&key.as_str()) && !super::BASE_PARAMS.contains(&key.as_str()) {
            return Err(invalid(format!("/s3/store takes no parameter {key:?}.")));
        }
    }
    if params.contains_key("credentials") {
        return Err(invalid(
            "credentials (Template Credentials) are not supported here; give key, secret, bucket and bucket_region.",
        ));
    }
    let text = |name: &str| -> Result<Option<String>, StepError> {
        match params.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(invalid(format!("{name} must be a string."))),
        }
    };
    let required = |name: &str| -> Result<String, StepError> {
        text(name)?
            .filter(|v| !v.is_empty())
            .ok_or_else(|| invalid(format!("{name} is required.")))
    };
    let (key, secret, bucket) = (required("key")?, required("secret")?, required("bucket")?);
    let region = text("bucket_region")?.unwrap_or_else(|| "us-east-1".to_owned());
    let no_vhost = match params.get("no_vhost") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(invalid("no_vhost must be true or false.")),
    };
    let acl = match text("acl")?.as_deref() {
        None | Some("public-read" | "public") => Some("public-read"),
        Some("private") => Some("private"),
        Some("bucket-default") => None,
        Some(other) => {
            return Err(invalid(format!(
                "acl must be \"public-read\", \"public\", \"private\" or \"bucket-default\", not {other:?}."
            )));
        }
    };
    let (endpoint, path_style) = match text("host")?.filter(|h| h != "s3.amazonaws.com") {
        None => (ferry_s3::S3Bucket::aws_endpoint(&region), no_vhost),
        Some(host) => {
            let endpoint = if host.contains("://") {
                host.clone()
            } else {
                format!("http://{host}")
            };
            let url = url::Url::parse(&endpoint)
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
                .ok_or_else(|| invalid(format!("host {host:?} is not a host name or URL.")))?;
            // Virtual-host addressing needs a DNS name to put the bucket in front of.
            let literal = !matches!(url.host(), Some(url::Host::Domain(d)) if d != "localhost");
            (endpoint, no_vhost || literal)
        }
    };
    let headers = match params.get("headers") {
        None | Some(Value::Null) => vec![("content-type".to_owned(), "${file.mime}".to_owned())],
        Some(Value::Object(h)) => h
            .iter()
            .map(|(name, value)| {
                let name = name.to_ascii_lowercase();
                let value = value
                    .as_str()
                    .ok_or_else(|| invalid(format!("headers.{name} must be a string.")))?;
                let valid_name = reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_ok();
                if !valid_name || RESERVED_HEADERS.contains(&name.as_str()) {
                    return Err(invalid(format!("headers may not set {name:?}.")));
                }
                if !early && reqwest::header::HeaderValue::from_str(value).is_err() {
                    return Err(invalid(format!(
                        "headers.{name} is not a valid header value."
                    )));
                }
                Ok((name, value.to_owned()))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(invalid("headers must be an object of strings.")),
    };
    if let Some(p) = text("path")? {
        if p.is_empty() {
            return Err(invalid("path must not be empty."));
        }
    }
    let bucket = ferry_s3::S3Bucket {
        endpoint,
        bucket,
        region,
        access_key: key,
        secret_key: ferry_auth::Secret::new(secret),
        force_path_style: path_style,
        key_prefix: String::new(),
    };
    if !early {
        ferry_s3::S3Client::new(bucket.clone()).map_err(|e| invalid(e.to_string()))?;
    }
    Ok(Target {
        bucket,
        acl,
        headers,
        url_prefix: text("url_prefix")?,
    })
}

/// The object key `path` names: no leading `/`, no `.` or `..` part (a URL would resolve
/// them, writing somewhere else), not a directory.
fn object_key(path: &str) -> Result<String, StepError> {
    let key = path.trim_start_matches('/');
    if key.is_empty() || key.ends_with('/') {
        return Err(invalid(format!(
            "path {path:?} names a directory, not a file."
        )));
    }
    if key.split('/').any(|p| p == "." || p == "..") || key.chars().any(char::is_control) {
        return Err(invalid(format!(
            "path {path:?} has a . or .. part or a control character."
        )));
    }
    Ok(key.to_owned())
}

/// `key` for a URL path: bytes other than unreserved characters and `/` as `%XX`.
fn encode_path(key: &str) -> String {
    key.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Stores every input; each result is the input with its `url` in the bucket.
pub async fn run(
    ctx: &Ctx,
    step: &Step,
    inputs: Vec<FileRecord>,
) -> Result<Vec<FileRecord>, StepError> {
    let egress = ctx.egress.as_ref().ok_or_else(|| {
        StepError::new(
            "S3_STORE_ACCESS_DENIED",
            "Outbound connections are disabled on this server.",
        )
    })?;
    let mut out = Vec::with_capacity(inputs.len());
    for file in inputs {
        let unique = prefix_of(&Id::random());
        let scope = Scope {
            assembly: &ctx.assembly,
            fields: &ctx.fields,
            file: Some(&file),
            unique_prefix: &unique,
        };
        let Value::Object(params) = scope.expand_value(&Value::Object(step.params.clone())) else {
            return Err(invalid("bad parameters"));
        };
        let target = check(&params, false)?;
        let path = params
            .get("path")
            .and_then(Value::as_str)
            .map_or_else(|| scope.expand(DEFAULT_PATH), str::to_owned);
        let key = object_key(&path)?;
        if egress.check(&target.bucket.endpoint).is_err() {
            return Err(StepError::new("S3_STORE_ACCESS_DENIED", ACCESS_DENIED));
        }
        let client = ferry_s3::S3Client::new(target.bucket.clone())
            .map_err(|e| invalid(e.to_string()))?
            .with_http(egress.client().clone());
        let mut headers = target.headers.clone();
        if let Some(acl) = target.acl {
            headers.push(("x-amz-acl".to_owned(), acl.to_owned()));
        }
        let source = ctx.dir.join(&file.path);
        tokio::select! {
            () = ctx.cancel.cancelled() => return Err(StepError::new("ASSEMBLY_CANCELED", "canceled")),
            r = upload(&client, &key, &headers, &source) => r.map_err(|e| failure(&e))?,
        }
        let url = match &target.url_prefix {
            Some(prefix) => format!("{prefix}{}", encode_path(&key)),
            None => client.object_url(&key).to_string(),
        };
        let mut stored = file.clone();
        stored.step = step.name.clone();
        stored.url = Some(url);
        out.push(stored);
    }
    Ok(out)
}

/// Replaces the credentials of every `/s3/store` step in `params` (`{"steps": {...}}`) with
/// `"[redacted]"`, so the status never echoes them.
pub fn redact(params: &mut Value) {
    let Some(Value::Object(steps)) = params.get_mut("steps") else {
        return;
    };
    for step in steps.values_mut() {
        let Value::Object(step) = step else { continue };
        if step.get("robot").and_then(Value::as_str) != Some("/s3/store") {
            continue;
        }
        for name in SECRET_PARAMS {
            if let Some(v) = step.get_mut(name) {
                *v = Value::String("[redacted]".to_owned());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn target(p: Value) -> Result<Target, StepError> {
        check(p.as_object().unwrap_or(&Map::new()), false)
    }

    #[test]
    fn parameters_and_endpoints() {
        let base = json!({"key": "AK", "secret": "S", "bucket": "b"});
        let with = |extra: Value| {
            let mut p = base.clone();
            if let (Value::Object(p), Value::Object(e)) = (&mut p, extra) {
                p.extend(e);
            }
            target(p)
        };
        let aws = with(json!({"bucket_region": "eu-west-2"}))
            .map(|t| (t.bucket.endpoint, t.bucket.force_path_style, t.acl));
        assert_eq!(
            aws.ok(),
            Some((
                "https://s3.eu-west-2.amazonaws.com".to_owned(),
                false,
                Some("public-read")
            ))
        );
        let garage = with(json!({"host": "127.0.0.1:3900", "acl": "bucket-default"}))
            .map(|t| (t.bucket.endpoint, t.bucket.force_path_style, t.acl));
        assert_eq!(
            garage.ok(),
            Some(("http://127.0.0.1:3900".to_owned(), true, None))
        );
        let named =
            with(json!({"host": "https://s3.example.com"})).map(|t| t.bucket.force_path_style);
        assert_eq!(named.ok(), Some(false));
        for bad in [
            json!({"acl": "world"}),
            json!({"headers": {"Authorization": "x"}}),
            json!({"headers": {"x-amz-meta-a": 1}}),
            json!({"credentials": "mine"}),
            json!({"tags": {}}),
            json!({"host": "ftp://h"}),
            json!({"secret": ""}),
        ] {
            assert_eq!(
                with(bad.clone()).err().map(|e| e.code),
                Some("S3_STORE_VALIDATION"),
                "{bad}"
            );
        }
    }

    #[test]
    fn keys_cannot_climb() {
        assert_eq!(object_key("/a/b.jpg").ok(), Some("a/b.jpg".to_owned()));
        assert!(object_key("a/../b").is_err());
        assert!(object_key("a/").is_err());
        assert!(object_key("./a").is_err());
        assert_eq!(encode_path("a b/é.jpg"), "a%20b/%C3%A9.jpg");
    }

    #[test]
    fn credentials_are_redacted_and_urls_scrubbed() {
        let mut p = json!({"steps": {"s": {"robot": "/s3/store", "key": "AK", "secret": "S", "bucket": "b"}, "r": {"robot": "/image/resize", "key": "k"}}});
        redact(&mut p);
        assert_eq!(p["steps"]["s"]["secret"], "[redacted]");
        assert_eq!(p["steps"]["s"]["key"], "[redacted]");
        assert_eq!(p["steps"]["s"]["bucket"], "b");
        assert_eq!(p["steps"]["r"]["key"], "k");
        assert_eq!(
            super::super::s3put::scrub(
                "PutObject: error sending request for url (http://h/b/k?X-Amz-Credential=AK%2F) x"
            ),
            "PutObject: error sending request for url (http://h/b/k?… x"
        );
    }
}
