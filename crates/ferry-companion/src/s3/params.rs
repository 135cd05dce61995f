//! `GET /s3/params?filename=&type=&metadata[k]=v[&method=put]`: a presigned single upload.
//! POST (a presigned form, Companion's default) unless `method=put` asks for a presigned PUT.
//! Also home of the helpers that turn `type` and `metadata` into signed headers or form fields.

use axum::Json;
use axum::extract::{Extension, Query, State};
use jiff::Timestamp;
use rusty_s3::S3Action;
use serde_json::{Map, Value, json};

use super::S3State;
use super::key::{admit, new_key};
use super::post_policy::{PostPolicyInput, sign_post_policy};
use crate::error::CompanionError;
use ferry_auth::Principal;

/// `Content-Type` plus `x-amz-meta-*` for the metadata that can travel as S3 metadata: names of
/// letters, digits, `-` and `_`; printable ASCII values. Others are left out rather than
/// mangled (S3 metadata is ASCII-only).
pub fn object_headers(content_type: &str, metadata: &[(String, String)]) -> Vec<(String, String)> {
    let printable = |s: &str| s.len() <= 1024 && s.bytes().all(|b| (0x20..0x7f).contains(&b));
    let content_type = if !content_type.is_empty() && printable(content_type) {
        content_type
    } else {
        "application/octet-stream"
    };
    let mut headers = vec![("content-type".to_owned(), content_type.to_owned())];
    for (name, value) in metadata {
        let good_name = !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if good_name && printable(value) {
            headers.push((
                format!("x-amz-meta-{}", name.to_ascii_lowercase()),
                value.clone(),
            ));
        }
    }
    headers.sort();
    headers.dedup_by(|a, b| a.0 == b.0);
    headers
}

/// Flattens a JSON metadata object (values as strings; nested values as JSON text).
pub fn metadata_pairs(metadata: Option<&Value>) -> Vec<(String, String)> {
    let Some(Value::Object(map)) = metadata else {
        return Vec::new();
    };
    map.iter()
        .map(|(k, v)| {
            (
                k.clone(),
                match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                },
            )
        })
        .collect()
}

#[utoipa::path(
    get,
    path = "/s3/params",
    tag = "s3",
    description = "A signed single-request upload: a POST form (`fields`) or a PUT (`headers`).",
    params(
        ("filename" = String, Query, description = "The file's name."),
        ("type" = String, Query, description = "Its media type."),
        ("metadata" = Option<String>, Query, description = "`metadata[name]=value` pairs."),
    ),
    responses(
        (status = 200, description = "How to send the file.", body = crate::openapi::S3Params),
        crate::openapi::S3Errors,
    ),
    security(("bearerAuth" = [])),
)]
pub async fn get_params(
    State(state): State<S3State>,
    subject: Option<Extension<Principal>>,
    Query(query): Query<Vec<(String, String)>>,
) -> Result<Json<Value>, CompanionError> {
    let get = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let filename = get("filename")
        .filter(|f| !f.is_empty())
        .ok_or_else(|| CompanionError::bad("s3: the \"filename\" query parameter is required"))?;
    let content_type = get("type").unwrap_or_default();
    let metadata: Vec<(String, String)> = query
        .iter()
        .filter_map(|(k, v)| {
            let name = k.strip_prefix("metadata[")?.strip_suffix(']')?;
            Some((name.to_owned(), v.clone()))
        })
        .collect();
    admit(subject.as_deref(), filename, content_type)?;
    let key = new_key(&state.settings, subject.as_deref(), filename);
    let headers = object_headers(content_type, &metadata);
    let expires = state.expires();
    match get("method").map(str::to_ascii_lowercase).as_deref() {
        None | Some("post") => {
            let extra: Vec<(String, String)> = headers
                .iter()
                .map(|(k, v)| {
                    (
                        if k == "content-type" {
                            "Content-Type".to_owned()
                        } else {
                            k.clone()
                        },
                        v.clone(),
                    )
                })
                .collect();
            let bucket = &state.settings.bucket;
            let policy = sign_post_policy(&PostPolicyInput {
                bucket: &bucket.bucket,
                key: &key,
                region: &bucket.region,
                access_key: &bucket.access_key,
                secret_key: bucket.secret_key.expose(),
                extra: &extra,
                expires,
                now: Timestamp::now(),
            });
            let fields: Map<String, Value> = policy
                .fields
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            Ok(Json(json!({
                "method": "POST",
                "url": state.client.bucket().base_url().as_str(),
                "fields": fields,
                "expires": expires.as_secs(),
            })))
        }
        Some("put") => {
            let mut action = state
                .client
                .bucket()
                .put_object(Some(state.client.credentials()), &key);
            for (name, value) in &headers {
                action.headers_mut().insert(name.clone(), value.clone());
            }
            let url = action.sign(expires);
            let headers: Map<String, Value> = headers
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            Ok(Json(json!({
                "method": "PUT",
                "url": url.as_str(),
                "fields": {},
                "headers": headers,
                "expires": expires.as_secs(),
            })))
        }
        Some(_) => Err(CompanionError::bad("s3: method must be put or post")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ascii_metadata_becomes_headers() {
        let meta = vec![
            ("Name".to_owned(), "a.png".to_owned()),
            ("bad name".to_owned(), "x".to_owned()),
            ("unicode".to_owned(), "ü".to_owned()),
        ];
        let headers = object_headers("image/png", &meta);
        assert_eq!(
            headers,
            vec![
                ("content-type".to_owned(), "image/png".to_owned()),
                ("x-amz-meta-name".to_owned(), "a.png".to_owned()),
            ]
        );
        assert_eq!(object_headers("\n", &[])[0].1, "application/octet-stream");
    }
}
