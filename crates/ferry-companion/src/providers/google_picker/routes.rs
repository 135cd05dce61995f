//! `POST /google-picker/get`: Companion's body (`platform`, `accessToken`, `fileId`, `url`
//! for Photos, beside the usual upload fields) -> `{token}`; progress on `/api/{token}`. Bad
//! input is a 400 naming the field, and nothing is fetched.

use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::request::Parts;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Map, Value, json};

use super::source::PickerSource;
use super::{Pick, Platform};
use crate::error::CompanionError;
use crate::oauth::sealed;
use crate::registry::SourceSpec;
use crate::state::AppState;
use crate::transfer::request::{TransferRequest, UploadBody};

/// What the route answers on a server that does not enable it.
pub const DISABLED: &str = "The Google Picker route is not enabled on this server";

/// Longest field accepted (Google's tokens and ids are far shorter).
const MAX_FIELD: usize = 8192;

#[utoipa::path(
    post,
    path = "/google-picker/get",
    operation_id = "google_picker_get",
    tag = "providers",
    description = "Starts importing an item picked in Google's Drive Picker or Photos Picker, \
        downloaded with the page's access token. Body: the upload fields of `/url/get` plus \
        `platform` (`drive` or `photos`), `accessToken`, `fileId` (Drive file id, or the Photos \
        media item id), `url` (Photos: the media URL, `{baseUrl}=d` or `=dv`) and optionally \
        `sessionId` (Photos: the picking session, to renew an expired media URL).",
    request_body = UploadBody,
    responses(
        (status = 200, description = "The transfer started.", body = crate::openapi::TransferToken),
        (status = 400, description = "Invalid body, item, URL or destination.", body = crate::error::ErrorMessage),
        (status = 401, description = "Google refused the access token.", body = crate::error::ErrorMessage),
        (status = 404, description = "The route is not enabled.", body = crate::error::ErrorMessage),
        (status = 429, description = "Google still limits requests after the wait allowed, or asks for a longer one.", body = crate::error::RateLimitedMessage, headers(("Retry-After" = u64, description = "Seconds until Google can be asked again."))),
    ),
    security(("bearerAuth" = [])),
)]
pub(crate) async fn get(
    State(state): State<AppState>,
    parts: Parts,
    body: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, CompanionError> {
    let picker = state
        .google_picker()
        .ok_or_else(|| CompanionError::NotFound(DISABLED.into()))?
        .clone();
    let Json(body) = body.map_err(|_| CompanionError::bad("Invalid request body"))?;
    let (pick, upload) = parse(body)?;
    picker.check(&pick)?;
    let spec = SourceSpec::GooglePicker {
        grant: pick.seal(sealed::secret(&state)?),
    };
    let source = PickerSource::open_first(picker, pick).await?;
    let request = TransferRequest::from_body(&state, Box::new(source), spec, upload)?
        .with_hook_request(&state, &parts)
        .for_principal(&parts)?;
    let token = crate::transfer::start(&state, request).await?;
    Ok(Json(json!({ "token": token })))
}

/// The pick and the upload fields of `body`.
pub fn parse(body: Value) -> Result<(Pick, UploadBody), CompanionError> {
    let Value::Object(mut fields) = body else {
        return Err(CompanionError::bad("Invalid request body"));
    };
    let platform = match take(&mut fields, "platform")?.as_deref() {
        Some("drive") => Platform::Drive,
        Some("photos") => Platform::Photos,
        _ => {
            return Err(CompanionError::bad(
                "Invalid request body: platform must be \"drive\" or \"photos\"",
            ));
        }
    };
    let access_token = take(&mut fields, "accessToken")?
        .ok_or_else(|| CompanionError::bad("Invalid request body: accessToken is required"))?;
    let id = take(&mut fields, "fileId")?;
    let session_id = take(&mut fields, "sessionId")?;
    // Photos' `url` is the media URL, not an upload field: it must not reach the spec unsealed.
    let url = take(&mut fields, "url")?;
    match platform {
        Platform::Drive if id.is_none() => {
            return Err(CompanionError::bad(
                "Invalid request body: fileId is required for drive",
            ));
        }
        Platform::Photos if url.is_none() => {
            return Err(CompanionError::bad(
                "Invalid request body: url is required for photos",
            ));
        }
        _ => {}
    }
    let upload: UploadBody = serde_json::from_value(Value::Object(fields))
        .map_err(|_| CompanionError::bad("Invalid request body"))?;
    let pick = Pick {
        platform,
        access_token,
        id,
        url,
        session_id,
    };
    Ok((pick, upload))
}

/// Removes `name` from `fields`: a non-empty string, absent, or a 400 naming it.
fn take(fields: &mut Map<String, Value>, name: &str) -> Result<Option<String>, CompanionError> {
    match fields.remove(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) if s.len() <= MAX_FIELD => Ok(Some(s)),
        Some(_) => Err(CompanionError::bad(format!(
            "Invalid request body: {name} must be a string of at most {MAX_FIELD} characters"
        ))),
    }
}

/// `POST /google-picker/get`.
pub fn router() -> Router<AppState> {
    Router::new().route("/google-picker/get", post(get))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pick_is_taken_out_of_the_upload_fields() {
        let (pick, upload) = parse(json!({
            "platform": "photos", "accessToken": "ya29.x", "fileId": "m1",
            "url": "https://lh3.googleusercontent.com/a=d", "sessionId": "s1",
            "protocol": "tus", "endpoint": "http://d/files/", "size": 3,
        }))
        .expect("valid");
        assert_eq!(pick.platform, Platform::Photos);
        assert_eq!(
            pick.url.as_deref(),
            Some("https://lh3.googleusercontent.com/a=d")
        );
        assert_eq!(pick.session_id.as_deref(), Some("s1"));
        assert_eq!(upload.url, None, "the media URL stays in the sealed pick");
        assert_eq!(upload.protocol.as_deref(), Some("tus"));
        assert!(
            !format!("{pick:?}").contains("ya29"),
            "the token is never printed"
        );
    }
}
