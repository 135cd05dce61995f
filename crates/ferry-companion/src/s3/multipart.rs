//! The multipart routes except complete: create, list parts, sign one part, sign a batch, abort.
//! Every call naming a key checks it (well-formed, under the prefix, owned by the token's
//! subject) before anything is signed or sent.

use std::collections::BTreeMap;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Extension, Path, Query, State};
use serde::Deserialize;
use serde_json::{Value, json};

use super::S3State;
use super::key::{admit, check_key, new_key};
use super::params::{metadata_pairs, object_headers};
use crate::error::CompanionError;
use ferry_auth::Principal;

/// Highest part number S3 allows.
pub const MAX_PART: u16 = 10_000;

/// `?key=` of the multipart routes.
#[derive(Debug, Deserialize)]
pub struct KeyQuery {
    key: Option<String>,
    #[serde(rename = "partNumbers")]
    part_numbers: Option<String>,
}

/// Checks the upload id and the key of a multipart call; returns the key.
pub fn checked<'a>(
    state: &S3State,
    subject: Option<&Principal>,
    upload_id: &str,
    query: &'a KeyQuery,
) -> Result<&'a str, CompanionError> {
    if upload_id.is_empty() || upload_id.len() > 1024 || upload_id.chars().any(char::is_control) {
        return Err(CompanionError::bad("s3: invalid uploadId"));
    }
    let key = query.key.as_deref().unwrap_or_default();
    check_key(&state.settings, subject, key)?;
    Ok(key)
}

/// A part number from the client: an integer in 1..=10000.
pub fn part_number(raw: &str) -> Result<u16, CompanionError> {
    raw.trim()
        .parse::<u16>()
        .ok()
        .filter(|n| (1..=MAX_PART).contains(n))
        .ok_or_else(|| {
            CompanionError::bad("s3: the part number must be an integer between 1 and 10000")
        })
}

/// JSON body of a route, with a clear 400 for anything that is not the expected JSON.
pub fn json_body<T: serde::de::DeserializeOwned>(body: &Bytes) -> Result<T, CompanionError> {
    serde_json::from_slice(body)
        .map_err(|e| CompanionError::bad(format!("s3: invalid JSON body: {e}")))
}

#[derive(Deserialize)]
struct CreateBody {
    filename: Option<Value>,
    #[serde(rename = "type")]
    content_type: Option<Value>,
    metadata: Option<Value>,
}

/// `POST /s3/multipart` `{filename, type, metadata}` -> `{uploadId, key, bucket}`.
#[utoipa::path(
    post,
    path = "/s3/multipart",
    operation_id = "s3_multipart_create",
    tag = "s3",
    request_body = crate::openapi::S3CreateBody,
    responses(
        (status = 200, description = "The multipart upload.", body = crate::openapi::S3Created),
        crate::openapi::S3Errors,
    ),
    security(("bearerAuth" = [])),
)]
pub async fn create(
    State(state): State<S3State>,
    subject: Option<Extension<Principal>>,
    body: Bytes,
) -> Result<Json<Value>, CompanionError> {
    let body: CreateBody = json_body(&body)?;
    let Some(Value::String(filename)) = body
        .filename
        .filter(|f| f.as_str().is_some_and(|s| !s.is_empty()))
    else {
        return Err(CompanionError::bad(
            "s3: the \"filename\" field is required and must be a string",
        ));
    };
    let content_type = match body.content_type {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(t)) => t,
        Some(_) => return Err(CompanionError::bad("s3: content type must be a string")),
    };
    admit(subject.as_deref(), &filename, &content_type)?;
    let key = new_key(&state.settings, subject.as_deref(), &filename);
    let headers = object_headers(&content_type, &metadata_pairs(body.metadata.as_ref()));
    let upload_id = state.client.create_multipart(&key, &headers).await?;
    Ok(Json(
        json!({ "uploadId": upload_id, "key": key, "bucket": state.bucket_name() }),
    ))
}

/// `GET /s3/multipart/{uploadId}?key=` -> every uploaded part.
#[utoipa::path(
    get,
    path = "/s3/multipart/{uploadId}",
    operation_id = "s3_multipart_list_parts",
    tag = "s3",
    params(("uploadId" = String, Path, description = "The multipart upload id."), ("key" = String, Query, description = "The object key from `POST /s3/multipart`."),),
    responses(
        (status = 200, description = "The uploaded parts.", body = Vec<PartJson>),
        crate::openapi::S3Errors,
    ),
    security(("bearerAuth" = [])),
)]
pub async fn list_parts(
    State(state): State<S3State>,
    subject: Option<Extension<Principal>>,
    Path(upload_id): Path<String>,
    Query(query): Query<KeyQuery>,
) -> Result<Json<Vec<PartJson>>, CompanionError> {
    let key = checked(&state, subject.as_deref(), &upload_id, &query)?;
    let parts = state.client.list_parts(key, &upload_id).await?;
    Ok(Json(parts.into_iter().map(PartJson::from).collect()))
}

/// One uploaded part, in Companion's shape.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct PartJson {
    #[serde(rename = "PartNumber")]
    number: u16,
    #[serde(rename = "Size")]
    size: u64,
    #[serde(rename = "ETag")]
    etag: String,
}

impl From<ferry_s3::Part> for PartJson {
    fn from(p: ferry_s3::Part) -> Self {
        Self {
            number: p.number,
            size: p.size,
            etag: p.etag,
        }
    }
}

fn sign(state: &S3State, key: &str, upload_id: &str, number: u16) -> String {
    state
        .client
        .part_url(key, upload_id, number, state.expires())
        .to_string()
}

/// `GET /s3/multipart/{uploadId}/{partNumber}?key=` -> `{url, expires}`.
#[utoipa::path(
    get,
    path = "/s3/multipart/{uploadId}/{partNumber}",
    operation_id = "s3_multipart_sign_part",
    tag = "s3",
    params(("uploadId" = String, Path, description = "The multipart upload id."), ("partNumber" = u16, Path, description = "1 to 10000."), ("key" = String, Query, description = "The object key from `POST /s3/multipart`."),),
    responses(
        (status = 200, description = "A signed PUT URL for the part.", body = crate::openapi::S3SignedPart),
        crate::openapi::S3Errors,
    ),
    security(("bearerAuth" = [])),
)]
pub async fn sign_part(
    State(state): State<S3State>,
    subject: Option<Extension<Principal>>,
    Path((upload_id, number)): Path<(String, String)>,
    Query(query): Query<KeyQuery>,
) -> Result<Json<Value>, CompanionError> {
    let key = checked(&state, subject.as_deref(), &upload_id, &query)?;
    let number = part_number(&number)?;
    let url = sign(&state, key, &upload_id, number);
    Ok(Json(
        json!({ "url": url, "expires": state.expires().as_secs() }),
    ))
}

/// `GET /s3/multipart/{uploadId}/batch?key=&partNumbers=1,2,3` -> `{presignedUrls: {n: url}}`.
#[utoipa::path(
    get,
    path = "/s3/multipart/{uploadId}/batch",
    operation_id = "s3_multipart_sign_batch",
    tag = "s3",
    params(("uploadId" = String, Path, description = "The multipart upload id."), ("key" = String, Query, description = "The object key from `POST /s3/multipart`."), ("partNumbers" = String, Query, description = "Comma-separated part numbers.")),
    responses(
        (status = 200, description = "Signed PUT URLs by part number.", body = crate::openapi::S3SignedBatch),
        crate::openapi::S3Errors,
    ),
    security(("bearerAuth" = [])),
)]
pub async fn sign_batch(
    State(state): State<S3State>,
    subject: Option<Extension<Principal>>,
    Path(upload_id): Path<String>,
    Query(query): Query<KeyQuery>,
) -> Result<Json<Value>, CompanionError> {
    let key = checked(&state, subject.as_deref(), &upload_id, &query)?;
    let raw = query.part_numbers.as_deref().unwrap_or_default();
    if raw.is_empty() {
        return Err(CompanionError::bad(
            "s3: the part numbers must be passed as a comma-separated list, e.g. \"?partNumbers=1,2\"",
        ));
    }
    let mut urls = BTreeMap::new();
    for raw in raw.split(',') {
        let number = part_number(raw)?;
        urls.insert(number.to_string(), sign(&state, key, &upload_id, number));
    }
    Ok(Json(json!({ "presignedUrls": urls })))
}

/// `DELETE /s3/multipart/{uploadId}?key=` -> `{}`; the store deletes the parts.
#[utoipa::path(
    delete,
    path = "/s3/multipart/{uploadId}",
    operation_id = "s3_multipart_abort",
    tag = "s3",
    params(("uploadId" = String, Path, description = "The multipart upload id."), ("key" = String, Query, description = "The object key from `POST /s3/multipart`."),),
    responses(
        (status = 200, description = "Aborted: `{}`.", body = Object),
        crate::openapi::S3Errors,
    ),
    security(("bearerAuth" = [])),
)]
pub async fn abort(
    State(state): State<S3State>,
    subject: Option<Extension<Principal>>,
    Path(upload_id): Path<String>,
    Query(query): Query<KeyQuery>,
) -> Result<Json<Value>, CompanionError> {
    let key = checked(&state, subject.as_deref(), &upload_id, &query)?;
    state.client.abort(key, &upload_id).await?;
    Ok(Json(json!({})))
}

#[cfg(test)]
mod tests {
    use super::part_number;

    #[test]
    fn part_numbers_are_1_to_10000() {
        assert_eq!(part_number("1").ok(), Some(1));
        assert_eq!(part_number("10000").ok(), Some(10_000));
        for bad in ["0", "10001", "-1", "1.5", "", "abc", "65536"] {
            assert!(part_number(bad).is_err(), "{bad}");
        }
    }
}
