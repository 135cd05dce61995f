//! What a provider's consent page needs ([`OAuthSpec`]), and the standard OAuth2 token calls
//! (RFC 6749 §4.1.3 and §6) every code-flow provider makes: a form POST to the token endpoint
//! with the app's id and secret, answered with JSON `{access_token, refresh_token?}`. The app's
//! credentials go in the form, or as HTTP Basic where the provider asks it (Zoom; RFC 6749
//! §2.3.1 allows both). Providers with their own extra steps (Instagram's long-lived token
//! swap) build on [`exchange_code`]; errors go through the provider's reader, or
//! [`token_error`] for a plain OAuth2 server.

use super::api::{self, Api, ErrorReader, TokenAnswer};
use super::config::OAuthApp;
use super::{ProviderError, Session};

/// What `/{p}/connect` needs to send the browser to the provider's consent page.
#[derive(Clone, Debug)]
pub struct OAuthSpec {
    pub authorize_url: String,
    /// Scopes, joined with `scope_separator`.
    pub scopes: Vec<&'static str>,
    pub scope_separator: &'static str,
    /// Extra authorize parameters (`access_type=offline`, ...).
    pub extra: Vec<(&'static str, &'static str)>,
    /// Whether the provider takes a PKCE (S256) challenge.
    pub pkce: bool,
}

impl OAuthSpec {
    /// The common OAuth2 spec: `scopes` joined with spaces, no extra parameters.
    pub fn standard(authorize_url: String, scopes: Vec<&'static str>, pkce: bool) -> Self {
        Self {
            authorize_url,
            scopes,
            scope_separator: " ",
            extra: Vec::new(),
            pkce,
        }
    }
}

/// Where a token endpoint takes the app's id and secret.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientAuth {
    /// `client_id` and `client_secret` in the form (most providers).
    Form,
    /// HTTP Basic only, nothing in the form (Zoom refuses them in the body).
    Basic,
}

/// A provider's token endpoint: where, with which app, and how its errors read.
#[derive(Clone, Copy, Debug)]
pub struct TokenEndpoint<'a> {
    pub api: &'a Api,
    pub url: &'a str,
    pub app: &'a OAuthApp,
    pub read: ErrorReader,
    pub client_auth: ClientAuth,
}

impl TokenEndpoint<'_> {
    async fn call(&self, grant: &[(&str, &str)]) -> Result<TokenAnswer, ProviderError> {
        let mut req = self.api.client().post(self.url);
        let mut form = grant.to_vec();
        match self.client_auth {
            ClientAuth::Form => form.extend([
                ("client_id", self.app.key.as_str()),
                ("client_secret", self.app.secret.as_str()),
            ]),
            ClientAuth::Basic => req = req.basic_auth(&self.app.key, Some(&self.app.secret)),
        }
        let req = req.form(&form);
        let answer = self.api.json(req, self.read).await?;
        api::token_answer(&answer)
            .ok_or_else(|| ProviderError::Unreachable("token answer without access_token".into()))
    }

    /// Swaps an authorization code (with its PKCE verifier, if the login sent a challenge).
    pub async fn exchange_code(
        &self,
        code: &str,
        redirect_uri: &str,
        verifier: Option<&str>,
    ) -> Result<TokenAnswer, ProviderError> {
        let mut form = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect_uri),
        ];
        if let Some(v) = verifier {
            form.push(("code_verifier", v));
        }
        self.call(&form).await
    }

    /// A new session from a code: the tokens, nothing else filled in yet.
    pub async fn session_from_code(
        &self,
        code: &str,
        redirect_uri: &str,
        verifier: Option<&str>,
    ) -> Result<Session, ProviderError> {
        let answer = self.exchange_code(code, redirect_uri, verifier).await?;
        Ok(Session {
            access_token: answer.access_token,
            refresh_token: answer.refresh_token,
            ..Session::default()
        })
    }

    /// `session` with a fresh access token, keeping a rotated refresh token (Companion drops
    /// it). [`ProviderError::Auth`] when the session has no refresh token.
    pub async fn refresh(&self, session: &Session) -> Result<Session, ProviderError> {
        let refresh = session
            .refresh_token
            .as_deref()
            .ok_or(ProviderError::Auth)?;
        let answer = self
            .call(&[("grant_type", "refresh_token"), ("refresh_token", refresh)])
            .await?;
        let mut next = session.clone();
        next.access_token = answer.access_token;
        if let Some(rotated) = answer.refresh_token {
            next.refresh_token = Some(rotated);
        }
        Ok(next)
    }
}

/// A plain OAuth2 server's errors: 401, and 400 `invalid_grant` (a revoked or expired refresh
/// token, a used code), are auth errors; anything else carries the server's message.
pub fn token_error(status: u16, body: &[u8]) -> ProviderError {
    if status == 401 || (status == 400 && String::from_utf8_lossy(body).contains("invalid_grant")) {
        return ProviderError::Auth;
    }
    ProviderError::Status {
        status,
        message: api::error_message(body, status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_grant_and_401_are_auth_errors() {
        assert!(matches!(token_error(401, b"{}"), ProviderError::Auth));
        assert!(matches!(
            token_error(400, br#"{"error":"invalid_grant"}"#),
            ProviderError::Auth
        ));
        assert_eq!(
            token_error(400, br#"{"error_description":"bad redirect_uri"}"#).to_string(),
            "HTTP 400: bad redirect_uri"
        );
    }
}
