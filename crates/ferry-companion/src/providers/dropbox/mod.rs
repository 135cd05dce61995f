//! Dropbox (`dropbox`, API v2): sign-in with short-lived access tokens and a refresh token
//! (`token_access_type=offline`, PKCE), `files/list_folder` + `list_folder/continue` paging,
//! thumbnails (`files/get_thumbnail_v2`), downloads from the content host with `Range`, and
//! team spaces: when the account's root namespace is not its home namespace, every call is
//! rooted there with `Dropbox-API-Path-Root`, as Companion does since uppy#5708. Items keep
//! Companion's shape (`requestPath` is the URL-encoded `path_lower`, paging `?cursor=`), so
//! the released `@uppy/dropbox` works unchanged. `items` turns Dropbox's JSON into items;
//! `search` is Companion's `/dropbox/search` (`files/search_v2` + `search/continue_v2`).

mod items;
mod search;

use reqwest::RequestBuilder;
use reqwest::header::RANGE;
use serde_json::{Value, json};

use super::api::{self, Api};
use super::config::{Endpoints, OAuthApp, ProviderSetup};
use super::oauth2::{self, ClientAuth, TokenEndpoint};
use super::{
    Deps, Download, ListCtx, ListPage, OAuthSpec, Provider, ProviderError, ProviderInfo,
    REFRESHABLE_MAX_AGE, Revoked, Session,
};
use crate::transfer::source::ByteStream;

pub use items::valid_path;
use items::{header_json, list_page};

/// Where the session keeps a team account's root namespace (absent: the home namespace).
const ROOT_NAMESPACE: &str = "dropboxRootNamespace";
const ARG: &str = "Dropbox-API-Arg";
const PATH_ROOT: &str = "Dropbox-API-Path-Root";

/// Dropbox's endpoints: `api_url` for RPC calls, `content_url` for downloads and thumbnails
/// (`/2/...` is appended to both).
pub fn default_endpoints() -> Endpoints {
    Endpoints::new(
        "https://www.dropbox.com/oauth2/authorize",
        "https://api.dropboxapi.com/oauth2/token",
        "https://api.dropboxapi.com",
    )
    .with_content("https://content.dropboxapi.com")
}

/// The Dropbox provider.
#[derive(Debug)]
pub struct Dropbox {
    app: OAuthApp,
    endpoints: Endpoints,
    api: Api,
    info: ProviderInfo,
    page_size: u32,
}

/// Who is signed in: the email shown in lists and the namespace calls are rooted in.
struct Account {
    email: Option<String>,
    root: Option<String>,
}

impl Dropbox {
    /// Dropbox with `setup`'s app at its endpoints.
    pub fn new(setup: ProviderSetup, deps: &Deps) -> Self {
        let info = ProviderInfo {
            id: "dropbox",
            name: "Dropbox",
            root: "",
            oauth: OAuthSpec {
                authorize_url: setup.endpoints.auth_url.clone(),
                scopes: vec![
                    "files.metadata.read",
                    "files.content.read",
                    "account_info.read",
                ],
                scope_separator: " ",
                // A refresh token beside the 4-hour access token.
                extra: vec![("token_access_type", "offline")],
                pkce: true,
            },
            client_id: setup.app.key.clone(),
            token_max_age: REFRESHABLE_MAX_AGE,
            supports_refresh: true,
        };
        Self {
            app: setup.app,
            endpoints: setup.endpoints,
            api: deps.api.clone(),
            info,
            // list_folder's `limit` is 1..=2000.
            page_size: deps.page_size.clamp(1, 2000),
        }
    }

    fn token_endpoint(&self) -> TokenEndpoint<'_> {
        TokenEndpoint {
            api: &self.api,
            url: &self.endpoints.token_url,
            app: &self.app,
            read: dropbox_error,
            client_auth: ClientAuth::Form,
        }
    }

    /// A POST to `{base}/2{path}` as the session, rooted in `root` when set.
    fn post(
        &self,
        base: &str,
        path: &str,
        session: &Session,
        root: Option<&str>,
    ) -> RequestBuilder {
        let url = format!("{}/2{path}", base.trim_end_matches('/'));
        let mut req = self
            .api
            .client()
            .post(url)
            .bearer_auth(&session.access_token);
        if let Some(ns) = root {
            req = req.header(PATH_ROOT, json!({".tag": "root", "root": ns}).to_string());
        }
        req
    }

    async fn rpc(
        &self,
        session: &Session,
        root: Option<&str>,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, ProviderError> {
        let mut req = self.post(&self.endpoints.api_url, path, session, root);
        if let Some(body) = body {
            req = req.json(&body);
        }
        self.api.json(req, dropbox_error).await
    }

    /// The account, from the session when sign-in cached it, else from the API (tokens
    /// Companion issued carry neither).
    async fn account(&self, session: &Session) -> Result<Account, ProviderError> {
        if session.username.is_some() {
            let root = session
                .extra
                .get(ROOT_NAMESPACE)
                .and_then(Value::as_str)
                .filter(|ns| valid_namespace(ns))
                .map(str::to_owned);
            return Ok(Account {
                email: session.username.clone(),
                root,
            });
        }
        let me = self
            .rpc(session, None, "/users/get_current_account", None)
            .await?;
        let ns = |k: &str| {
            me.pointer(&format!("/root_info/{k}"))
                .and_then(Value::as_str)
                .filter(|ns| valid_namespace(ns))
        };
        let root = match (ns("root_namespace_id"), ns("home_namespace_id")) {
            (Some(root), Some(home)) if root != home => Some(root.to_owned()),
            _ => None,
        };
        Ok(Account {
            email: me.get("email").and_then(Value::as_str).map(str::to_owned),
            root,
        })
    }

    /// A content-host call on the file `path` with its argument in the header.
    async fn content(
        &self,
        session: &Session,
        endpoint: &str,
        arg: &Value,
        from: u64,
    ) -> Result<reqwest::Response, ProviderError> {
        let account = self.account(session).await?;
        let mut req = self
            .post(
                &self.endpoints.content_url,
                endpoint,
                session,
                account.root.as_deref(),
            )
            .header(ARG, header_json(arg));
        if from > 0 {
            req = req.header(RANGE, format!("bytes={from}-"));
        }
        self.api.send(req, dropbox_error).await
    }
}

/// Namespace ids are digits.
fn valid_namespace(ns: &str) -> bool {
    !ns.is_empty() && ns.len() <= 32 && ns.bytes().all(|b| b.is_ascii_digit())
}

fn file_path(id: &str) -> Result<&str, ProviderError> {
    if id.is_empty() || !valid_path(id) {
        return Err(ProviderError::BadRequest("Invalid file path".into()));
    }
    Ok(id)
}

#[async_trait::async_trait]
impl Provider for Dropbox {
    fn info(&self) -> &ProviderInfo {
        &self.info
    }

    fn oauth2(&self) -> Option<TokenEndpoint<'_>> {
        Some(self.token_endpoint())
    }

    async fn signed_in(&self, mut session: Session) -> Result<Session, ProviderError> {
        let account = self.account(&session).await?;
        // Cached so lists and downloads skip a call; an empty email still marks it cached.
        session.username = Some(account.email.unwrap_or_default());
        if let Some(root) = account.root {
            session
                .extra
                .insert(ROOT_NAMESPACE.into(), Value::from(root));
        }
        Ok(session)
    }

    async fn revoke(&self, session: &Session) -> Result<Revoked, ProviderError> {
        let req = self.post(&self.endpoints.api_url, "/auth/token/revoke", session, None);
        let revoked = self.api.send(req, dropbox_error).await.is_ok();
        Ok(Revoked {
            revoked,
            manual_url: None,
        })
    }

    async fn list(
        &self,
        session: &Session,
        ctx: &ListCtx,
        path: &str,
        cursor: Option<&str>,
    ) -> Result<ListPage, ProviderError> {
        if !valid_path(path) {
            return Err(ProviderError::BadRequest("Invalid folder path".into()));
        }
        let account = self.account(session).await?;
        let root = account.root.as_deref();
        let page = match cursor {
            Some(cursor) => {
                let body = json!({ "cursor": cursor });
                self.rpc(session, root, "/files/list_folder/continue", Some(body))
                    .await?
            }
            None => {
                let body = json!({
                    "path": path,
                    "include_non_downloadable_files": false,
                    "limit": self.page_size,
                });
                self.rpc(session, root, "/files/list_folder", Some(body))
                    .await?
            }
        };
        let entries = page.get("entries").and_then(Value::as_array);
        Ok(list_page(
            ctx,
            entries.into_iter().flatten(),
            &page,
            account.email,
        ))
    }

    async fn search_files(
        &self,
        session: &Session,
        ctx: &ListCtx,
        query: &str,
        path: Option<&str>,
        cursor: Option<&str>,
    ) -> Result<ListPage, ProviderError> {
        self.search(session, ctx, query, path.unwrap_or(""), cursor)
            .await
    }

    async fn download(
        &self,
        session: &Session,
        id: &str,
        from: u64,
    ) -> Result<Download, ProviderError> {
        let path = file_path(id)?;
        let resp = self
            .content(session, "/files/download", &json!({ "path": path }), from)
            .await?;
        // The file's metadata rides in a header beside the bytes.
        let meta: Value = resp
            .headers()
            .get("dropbox-api-result")
            .and_then(|v| serde_json::from_slice(v.as_bytes()).ok())
            .unwrap_or(Value::Null);
        let (total, skip) = api::ranged(&resp, from)?;
        let size = total.or_else(|| meta.get("size").and_then(Value::as_u64));
        let name = meta
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| path.rsplit('/').next().map(str::to_owned));
        Ok(Download {
            stream: api::byte_stream(resp),
            skip,
            size,
            name,
        })
    }

    async fn thumbnail(
        &self,
        session: &Session,
        id: &str,
    ) -> Result<(String, ByteStream), ProviderError> {
        let path = file_path(id)?;
        let arg = json!({
            "resource": { ".tag": "path", "path": path },
            "format": "jpeg",
            "size": "w256h256",
        });
        let resp = self
            .content(session, "/files/get_thumbnail_v2", &arg, 0)
            .await?;
        // Asked for JPEG; the content host labels it application/octet-stream.
        Ok(("image/jpeg".into(), api::byte_stream(resp)))
    }
}

/// Dropbox's errors: 401 (`expired_access_token`, `invalid_access_token`) and the token
/// endpoint's `invalid_grant` are auth errors; 409 endpoint errors carry `error_summary`
/// (`path/not_found/...`), a missing path becomes 404 and a folder where a file was meant a
/// bad request; plain-text 400s (malformed calls) are not echoed.
fn dropbox_error(status: u16, body: &[u8]) -> ProviderError {
    let summary = serde_json::from_slice::<Value>(body).ok().and_then(|v| {
        v.get("error_summary")
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    match (status, summary) {
        (401, _) => ProviderError::Auth,
        (409, Some(s)) if s.contains("not_file") => ProviderError::Unsupported(
            "A folder cannot be downloaded; open it and pick its files".into(),
        ),
        (409, Some(s)) if s.contains("not_found") => ProviderError::Status {
            status: 404,
            message: format!("HTTP 404: {s}"),
        },
        (_, Some(s)) => ProviderError::Status {
            status,
            message: format!("HTTP {status}: {s}"),
        },
        (_, None) => oauth2::token_error(status, body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropbox_errors_map_to_auth_or_summaries() {
        let expired = br#"{"error_summary":"expired_access_token/..","error":{".tag":"expired_access_token"}}"#;
        assert!(matches!(dropbox_error(401, expired), ProviderError::Auth));
        assert!(matches!(
            dropbox_error(400, br#"{"error":"invalid_grant","error_description":"refresh token is invalid or revoked"}"#),
            ProviderError::Auth
        ));
        assert_eq!(
            dropbox_error(409, br#"{"error_summary":"path/not_found/.","error":{}}"#).to_string(),
            "HTTP 404: path/not_found/."
        );
        assert!(matches!(
            dropbox_error(409, br#"{"error_summary":"path/not_file/..","error":{}}"#),
            ProviderError::Unsupported(_)
        ));
        assert_eq!(
            dropbox_error(
                400,
                b"Error in call to API function \"files/list_folder\": /secret"
            )
            .to_string(),
            "HTTP 400: the provider refused the request"
        );
    }
}
