//! Box (`box`, API 2.0): sign-in, folder listing with marker paging, downloads through the
//! content redirect (resumable with `Range`), thumbnails, logout, on Companion's routes and
//! answer shapes so `@uppy/box` works unchanged.
//!
//! Box access tokens last an hour and each refresh token works once. Companion never refreshes
//! Box sessions (its users sign in again every hour); `@uppy/box` never calls `/refresh-token`.
//! So Ferry refreshes on the server: a call whose access token Box refuses refreshes the session
//! once and is repeated, and the [`Rotation`](super::rotation::Rotation) ledger lets every later request carrying the
//! client's original (now spent) tokens use the newest ones. Ferry's own client may still call
//! `/box/refresh-token`, which returns a token holding the rotated refresh token.

mod items;

use serde_json::Value;

use super::api::{self, Answer, ErrorFields};
use super::config::{Endpoints, ProviderSetup};
use super::oauth2::{ClientAuth, TokenEndpoint};
use super::rotating::{RotatingApi, RotatingSpec};
use super::{
    Deps, Download, ListCtx, ListPage, Provider, ProviderError, ProviderInfo, Revoked, Session,
};
use crate::transfer::source::ByteStream;

pub use items::valid_id;
use items::{ROOT, next_page_path};

/// The fields a listing needs (without `fields` Box answers names only).
const LIST_FIELDS: &str = "id,type,name,size,modified_at";

/// Box's endpoints: `api_url` is the API host (`/2.0/...` is appended); the revoke endpoint is
/// `revoke` beside `token_url`.
pub fn default_endpoints() -> Endpoints {
    Endpoints::new(
        "https://account.box.com/api/oauth2/authorize",
        "https://api.box.com/oauth2/token",
        "https://api.box.com",
    )
}

/// The Box provider.
#[derive(Debug)]
pub struct BoxCloud {
    oauth: RotatingApi,
}

impl BoxCloud {
    /// Box with `setup`'s app at its endpoints; `deps.sources` (the egress-policed client)
    /// fetches the download and placeholder URLs Box redirects to.
    pub fn new(setup: ProviderSetup, deps: &Deps) -> Self {
        let spec = RotatingSpec {
            id: "box",
            name: "Box",
            root: ROOT,
            // Read all files and folders (the app's configuration must allow it).
            scopes: vec!["root_readonly"],
            pkce: false,
            // Box's refresh tokens last 60 days.
            session_days: 60,
            max_page: 1000,
            prefix: "/2.0",
            read: box_error,
            token_read: box_error,
            client_auth: ClientAuth::Form,
        };
        Self {
            oauth: RotatingApi::new(setup, deps, spec),
        }
    }

    async fn username(&self, session: &Session) -> Result<Option<String>, ProviderError> {
        if session.username.is_some() {
            return Ok(session.username.clone());
        }
        let me = self
            .oauth
            .get_json(session, "/users/me", &[("fields", "login")])
            .await?;
        Ok(me.get("login").and_then(Value::as_str).map(str::to_owned))
    }
}

#[async_trait::async_trait]
impl Provider for BoxCloud {
    fn info(&self) -> &ProviderInfo {
        &self.oauth.info
    }

    fn oauth2(&self) -> Option<TokenEndpoint<'_>> {
        Some(self.oauth.token_endpoint())
    }

    async fn signed_in(&self, mut session: Session) -> Result<Session, ProviderError> {
        session.username = self.username(&session).await?;
        Ok(session)
    }

    async fn refresh(&self, session: &Session) -> Result<Session, ProviderError> {
        self.oauth.refresh(session).await
    }

    async fn revoke(&self, session: &Session) -> Result<Revoked, ProviderError> {
        let o = &self.oauth;
        let revoked = o.revoke(session, |current| async move {
            let req = o.api.client().post(o.endpoints.revoke_url()).form(&[
                ("client_id", o.app.key.as_str()),
                ("client_secret", o.app.secret.as_str()),
                ("token", current.access_token.as_str()),
            ]);
            o.api.send(req, box_error).await.is_ok()
        });
        Ok(revoked.await)
    }

    async fn list(
        &self,
        session: &Session,
        ctx: &ListCtx,
        path: &str,
        cursor: Option<&str>,
    ) -> Result<ListPage, ProviderError> {
        let folder = if path.is_empty() { ROOT } else { path };
        if !valid_id(folder) {
            return Err(ProviderError::BadRequest("Invalid folder id".into()));
        }
        let limit = self.oauth.page_size.to_string();
        let mut query = vec![
            ("fields", LIST_FIELDS),
            ("limit", limit.as_str()),
            // Marker paging: offsets stop at 300,000 items.
            ("usemarker", "true"),
        ];
        if let Some(c) = cursor {
            query.push(("marker", c));
        }
        let page = self
            .oauth
            .get_json(session, &format!("/folders/{folder}/items"), &query)
            .await?;
        let mut listed: Vec<_> = page
            .get("entries")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|e| items::item(ctx, e))
            .collect();
        listed.sort_by_key(|i| !i.is_folder);
        let next_page_path = page
            .get("next_marker")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .map(|m| next_page_path(folder, m));
        Ok(ListPage {
            username: self.username(session).await?,
            items: listed,
            next_page_path,
        })
    }

    async fn download(
        &self,
        session: &Session,
        id: &str,
        from: u64,
    ) -> Result<Download, ProviderError> {
        if !valid_id(id) {
            return Err(ProviderError::BadRequest("Invalid file id".into()));
        }
        let meta = self
            .oauth
            .get_json(session, &format!("/files/{id}"), &[("fields", "name,size")])
            .await?;
        let resp = match self
            .oauth
            .answer(session, &format!("/files/{id}/content"), &[])
            .await?
        {
            // The download host throttles too (503 or 429 with `Retry-After`): waited out
            // under the providers' rate limits, not failed at once.
            Answer::Moved(location) => {
                self.oauth
                    .download_presigned(&location, from, download_host_error)
                    .await?
            }
            Answer::Body(resp) => resp,
        };
        if !resp.status().is_success() {
            return Err(download_host_error(resp.status().as_u16(), &[]));
        }
        let (total, skip) = api::ranged(&resp, from)?;
        Ok(Download {
            size: total.or_else(|| meta.get("size").and_then(Value::as_u64)),
            name: meta.get("name").and_then(Value::as_str).map(str::to_owned),
            stream: api::byte_stream(resp),
            skip,
        })
    }

    async fn thumbnail(
        &self,
        session: &Session,
        id: &str,
    ) -> Result<(String, ByteStream), ProviderError> {
        if !valid_id(id) {
            return Err(ProviderError::BadRequest("Invalid file id".into()));
        }
        let query = [
            ("min_height", "32"),
            ("min_width", "32"),
            ("max_height", "320"),
            ("max_width", "320"),
        ];
        // 200: the image; 202 (still generating) and 302 (no thumbnail for this type): a
        // placeholder image at `Location`.
        let resp = match self
            .oauth
            .answer(session, &format!("/files/{id}/thumbnail.jpg"), &query)
            .await?
        {
            Answer::Body(resp) => resp,
            Answer::Moved(location) => self.oauth.fetch_presigned(&location, 0).await?,
        };
        api::stream_image(resp)
    }
}

/// Box's errors: 401 (a refused access token) and `invalid_grant` (a spent, expired or
/// revoked refresh token) are auth errors; everything else carries Box's message.
fn box_error(status: u16, body: &[u8]) -> ProviderError {
    let fields = ErrorFields::parse(body);
    if status == 401 || fields.str("error") == Some("invalid_grant") {
        return ProviderError::Auth;
    }
    fields.status(status, &["message", "error_description"], "Box")
}

/// A download that Box's download host did not serve.
fn download_host_error(status: u16, _body: &[u8]) -> ProviderError {
    ProviderError::Status {
        status,
        message: "Box did not send the file".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_errors_map_to_auth_or_box_messages() {
        assert!(matches!(box_error(401, b""), ProviderError::Auth));
        assert!(matches!(
            box_error(
                400,
                br#"{"error":"invalid_grant","error_description":"Refresh token has expired"}"#
            ),
            ProviderError::Auth
        ));
        assert_eq!(
            box_error(
                404,
                br#"{"type":"error","status":404,"message":"Not Found"}"#
            )
            .to_string(),
            "HTTP 404: Not Found"
        );
        assert_eq!(
            box_error(500, b"<html>trace</html>").to_string(),
            "HTTP 500: Box refused the request"
        );
    }
}
