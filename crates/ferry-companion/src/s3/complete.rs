//! `POST /s3/multipart/{uploadId}/complete?key=` `{parts: [{PartNumber, ETag}]}` ->
//! `{location, key, bucket}`. The part list is checked (1..=10,000 parts, valid and unique part
//! numbers, non-empty ETags) before the store sees it.

use std::collections::BTreeSet;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Extension, Path, Query, State};
use serde::Deserialize;
use serde_json::{Value, json};

use super::S3State;
use super::multipart::{KeyQuery, MAX_PART, checked, json_body};
use crate::error::CompanionError;
use ferry_auth::Principal;

#[derive(Deserialize)]
struct CompleteBody {
    parts: Option<Vec<Value>>,
}

/// The `(part number, ETag)` pairs of a complete body, sorted, or a 400 saying what is wrong.
pub fn parse_parts(body: &Bytes) -> Result<Vec<(u16, String)>, CompanionError> {
    let body: CompleteBody = json_body(body)?;
    let parts = body.parts.ok_or_else(|| {
        CompanionError::bad("s3: \"parts\" must be an array of {PartNumber, ETag}")
    })?;
    if parts.is_empty() || parts.len() > usize::from(MAX_PART) {
        return Err(CompanionError::bad(
            "s3: \"parts\" must list between 1 and 10000 parts",
        ));
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(parts.len());
    for part in &parts {
        let number = part
            .get("PartNumber")
            .and_then(Value::as_u64)
            .filter(|n| (1..=u64::from(MAX_PART)).contains(n))
            .and_then(|n| u16::try_from(n).ok())
            .ok_or_else(|| {
                CompanionError::bad("s3: each part needs a PartNumber between 1 and 10000")
            })?;
        let etag = part
            .get("ETag")
            .and_then(Value::as_str)
            .filter(|e| !e.is_empty() && e.len() <= 256)
            .ok_or_else(|| CompanionError::bad("s3: each part needs an ETag string"))?;
        if !seen.insert(number) {
            return Err(CompanionError::bad(format!(
                "s3: part {number} is listed twice"
            )));
        }
        out.push((number, etag.to_owned()));
    }
    out.sort_by_key(|(n, _)| *n);
    Ok(out)
}

#[utoipa::path(
    post,
    path = "/s3/multipart/{uploadId}/complete",
    operation_id = "s3_multipart_complete",
    tag = "s3",
    params(("uploadId" = String, Path, description = "The multipart upload id."), ("key" = String, Query, description = "The object key from `POST /s3/multipart`."),),
    request_body = crate::openapi::S3CompleteBody,
    responses(
        (status = 200, description = "The object.", body = crate::openapi::S3Completed),
        crate::openapi::S3Errors,
    ),
    security(("bearerAuth" = [])),
)]
pub async fn complete(
    State(state): State<S3State>,
    subject: Option<Extension<Principal>>,
    Path(upload_id): Path<String>,
    Query(query): Query<KeyQuery>,
    body: Bytes,
) -> Result<Json<Value>, CompanionError> {
    let key = checked(&state, subject.as_deref(), &upload_id, &query)?;
    let parts = parse_parts(&body)?;
    let location = state.client.complete(key, &upload_id, &parts).await?;
    Ok(Json(
        json!({ "location": location, "key": key, "bucket": state.bucket_name() }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(body: &str) -> String {
        parse_parts(&Bytes::from(body.to_owned()))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn bad_part_lists_are_refused_with_a_reason() {
        assert!(message("{").starts_with("s3: invalid JSON body"));
        assert_eq!(
            message("{}"),
            "s3: \"parts\" must be an array of {PartNumber, ETag}"
        );
        assert_eq!(
            message(r#"{"parts":[]}"#),
            "s3: \"parts\" must list between 1 and 10000 parts"
        );
        assert_eq!(
            message(r#"{"parts":[{"PartNumber":0,"ETag":"a"}]}"#),
            "s3: each part needs a PartNumber between 1 and 10000"
        );
        assert_eq!(
            message(r#"{"parts":[{"PartNumber":1}]}"#),
            "s3: each part needs an ETag string"
        );
        assert_eq!(
            message(r#"{"parts":[{"PartNumber":1,"ETag":"a"},{"PartNumber":1,"ETag":"b"}]}"#),
            "s3: part 1 is listed twice"
        );
        let many: Vec<String> = (1..=10_001)
            .map(|n| format!(r#"{{"PartNumber":{n},"ETag":"e"}}"#))
            .collect();
        assert_eq!(
            message(&format!(r#"{{"parts":[{}]}}"#, many.join(","))),
            "s3: \"parts\" must list between 1 and 10000 parts"
        );
        let ok = parse_parts(&Bytes::from(
            r#"{"parts":[{"PartNumber":2,"ETag":"b"},{"PartNumber":1,"ETag":"a"}]}"#,
        ))
        .expect("valid");
        assert_eq!(ok, vec![(1, "a".to_owned()), (2, "b".to_owned())]);
    }
}
