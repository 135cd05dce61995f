//! The companion's part of the server's OpenAPI document: the operations come from the
//! annotations on the route handlers; the schemas below describe the JSON bodies those handlers
//! build, field for field as `shared/reference/companion-wire.md` fixes them (the handlers write
//! them with `json!`, so Companion's exact shapes stay visible at the call sites). The
//! `bearerAuth` scheme the operations name is defined by the application that merges this part.

#![allow(dead_code)] // The wire schemas are read by the OpenAPI derive only.

use std::collections::BTreeMap;

use utoipa::ToSchema;

pub use crate::error::ErrorMessage;
pub use crate::providers::{Item, ListPage};
pub use crate::s3::multipart::PartJson;
pub use crate::transfer::request::UploadBody;

/// `POST /url/meta`'s answer.
#[derive(Debug, serde::Serialize, serde::Deserialize, ToSchema)]
pub struct UrlMeta {
    /// The file name from `Content-Disposition` or the URL's path.
    name: String,
    /// The media type the source announced.
    #[serde(rename = "type")]
    kind: Option<String>,
    /// The size the source announced, if any.
    size: Option<u64>,
}

/// `POST /url/get` and `POST /{provider}/get/{id}`: the transfer's token; its progress is on
/// the websocket `GET /api/{token}`.
#[derive(Debug, serde::Serialize, serde::Deserialize, ToSchema)]
pub struct TransferToken {
    token: String,
}

/// The failures every `/s3/*` signing route may answer, in one place.
#[derive(Debug, utoipa::IntoResponses)]
#[allow(dead_code)] // only its OpenAPI description is used
pub enum S3Errors {
    #[response(status = 400, description = "Invalid input.")]
    BadRequest(crate::error::ErrorMessage),
    #[response(
        status = 401,
        description = "No valid bearer token (with an auth secret)."
    )]
    Unauthorized(crate::error::ErrorMessage),
    #[response(status = 403, description = "The upload belongs to another subject.")]
    Forbidden(crate::error::ErrorMessage),
    #[response(status = 404, description = "S3 is not configured.")]
    NotConfigured(crate::error::ErrorMessage),
    #[response(status = 502, description = "The storage service failed.")]
    Upstream(crate::error::ErrorMessage),
}

/// `GET /s3/params`: how to send the file to the bucket directly.
#[derive(Debug, serde::Serialize, serde::Deserialize, ToSchema)]
pub struct S3Params {
    /// `POST` (a form with `fields`) or `PUT` (the bytes, with `headers`).
    method: String,
    url: String,
    fields: BTreeMap<String, String>,
    headers: Option<BTreeMap<String, String>>,
    /// Seconds the signature stays valid.
    expires: u64,
}

/// `POST /s3/multipart`'s request.
#[derive(Debug, serde::Serialize, serde::Deserialize, ToSchema)]
pub struct S3CreateBody {
    filename: String,
    #[serde(rename = "type")]
    kind: String,
    metadata: Option<BTreeMap<String, String>>,
}

/// `POST /s3/multipart`'s answer.
#[derive(Debug, serde::Serialize, serde::Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct S3Created {
    upload_id: String,
    key: String,
    bucket: String,
}

/// A signed part URL (`GET /s3/multipart/{uploadId}/{partNumber}`).
#[derive(Debug, serde::Serialize, serde::Deserialize, ToSchema)]
pub struct S3SignedPart {
    url: String,
    expires: u64,
}

/// Signed part URLs by part number (`GET /s3/multipart/{uploadId}/batch`).
#[derive(Debug, serde::Serialize, serde::Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct S3SignedBatch {
    presigned_urls: BTreeMap<String, String>,
}

/// `POST /s3/multipart/{uploadId}/complete`'s request.
#[derive(Debug, serde::Serialize, serde::Deserialize, ToSchema)]
pub struct S3CompleteBody {
    parts: Vec<S3CompletePart>,
}

/// One part of [`S3CompleteBody`].
#[derive(Debug, serde::Serialize, serde::Deserialize, ToSchema)]
pub struct S3CompletePart {
    #[serde(rename = "PartNumber")]
    part_number: u16,
    #[serde(rename = "ETag")]
    etag: String,
}

/// `POST /s3/multipart/{uploadId}/complete`'s answer.
#[derive(Debug, serde::Serialize, serde::Deserialize, ToSchema)]
pub struct S3Completed {
    location: String,
    key: String,
    bucket: String,
}

/// `GET /providers`.
#[derive(Debug, serde::Serialize, serde::Deserialize, ToSchema)]
pub struct Providers {
    providers: Vec<ProviderInfo>,
}

/// One enabled provider.
#[derive(Debug, serde::Serialize, serde::Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderInfo {
    id: String,
    name: String,
    root_folder: String,
    supports_refresh_token: bool,
    /// `true` for a search provider (no sign-in; served on `/search/{provider}/...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    search: Option<bool>,
}

/// `GET|POST /{provider}/logout`.
#[derive(Debug, serde::Serialize, serde::Deserialize, ToSchema)]
pub struct LoggedOut {
    ok: bool,
    revoked: bool,
    /// Where the user revokes access by hand, when the provider cannot be asked.
    manual_revoke_url: Option<String>,
}

/// `POST /{provider}/refresh-token`.
#[derive(Debug, serde::Serialize, serde::Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefreshedToken {
    uppy_auth_token: String,
}

/// The companion's operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(
    paths(
        crate::url_meta::meta,
        crate::url_get::get,
        crate::providers::google_picker::routes::get,
        crate::socket::upgrade,
        crate::s3::params::get_params,
        crate::s3::multipart::create,
        crate::s3::multipart::list_parts,
        crate::s3::multipart::abort,
        crate::s3::multipart::sign_batch,
        crate::s3::multipart::sign_part,
        crate::s3::complete::complete,
        crate::providers::routes::enabled,
        crate::providers::routes::list_root,
        crate::providers::routes::list_path,
        crate::providers::routes::get_file,
        crate::providers::routes::logout,
        crate::providers::routes::refresh_token,
        crate::providers::routes::thumbnail,
        crate::providers::simple_auth::simple_auth,
        crate::providers::search::list,
        crate::providers::find::search_files,
        crate::providers::search::get_file,
        crate::oauth::routes::connect,
        crate::oauth::routes::oauth_redirect,
        crate::oauth::routes::oauth_callback,
        crate::oauth::send_token::send_token,
        crate::oauth::auth_socket::upgrade,
    ),
    components(schemas(
        ErrorMessage, UrlMeta, TransferToken, UploadBody, S3Params, S3CreateBody, S3Created,
        PartJson, S3SignedPart, S3SignedBatch, S3CompleteBody, S3CompletePart, S3Completed,
        Providers, ProviderInfo, ListPage, Item, LoggedOut, RefreshedToken,
        crate::providers::search::SearchPage, crate::providers::search::SearchItem,
        crate::providers::search::Author, crate::error::RateLimitedMessage,
    )),
    tags(
        (name = "companion", description = "Link imports and remote transfers (Uppy Companion's wire)."),
        (name = "s3", description = "Signing for direct uploads to the S3 bucket."),
        (name = "providers", description = "Cloud providers (Google Drive, Instagram, Box, OneDrive) and their login."),
    )
)]
pub struct CompanionApi;

#[cfg(test)]
mod tests {
    use utoipa::OpenApi;

    use super::CompanionApi;

    /// Every operation that asks a provider (and so may meet a rate limit it cannot wait out,
    /// answered by [`crate::error::CompanionError`] as a 429 with `Retry-After`) documents that
    /// answer, its header and its body.
    #[test]
    fn operations_that_ask_a_provider_document_the_429() {
        let doc = serde_json::to_value(CompanionApi::openapi()).expect("document");
        let asking = [
            "provider_list_root",
            "provider_list",
            "provider_get",
            "provider_thumbnail",
            "provider_search",
            "search_list",
            "search_get",
            "google_picker_get",
        ];
        let paths = doc["paths"].as_object().expect("paths");
        let operations: Vec<&serde_json::Value> = paths
            .values()
            .flat_map(|p| p.as_object().into_iter().flat_map(|o| o.values()))
            .collect();
        for id in asking {
            let op = operations
                .iter()
                .find(|o| o["operationId"] == id)
                .unwrap_or_else(|| panic!("no operation {id}"));
            let limited = &op["responses"]["429"];
            assert!(limited.is_object(), "{id} does not document its 429");
            assert!(
                limited["headers"]["Retry-After"].is_object(),
                "{id}: 429 without Retry-After"
            );
            assert_eq!(
                limited["content"]["application/json"]["schema"]["$ref"],
                "#/components/schemas/RateLimitedMessage",
                "{id}"
            );
        }
    }
}
