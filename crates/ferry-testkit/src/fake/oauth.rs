//! The OAuth 2.0 authorization-code half every fake provider shares: the authorize endpoint
//! (client, `redirect_uri`, `state`, `response_type=code`, PKCE S256), an optional consent page
//! (Allow / Deny posting back to the fake), and the token endpoint's client check, code
//! redemption (one use, `redirect_uri` match, PKCE verifier) and grant dispatch.
//!
//! A fake implements [`Authority`]: where its [`OAuthServer`] lives, its [`Dialect`] (code
//! format, which checks it makes, its consent page), how it words a refusal (each platform has
//! its own error bodies), and what it answers to a redeemed code or a refresh grant (refresh
//! semantics differ the most: Box rotates every time, Microsoft optionally, Dropbox never). The
//! routes are then `get(oauth::authorize::<F>)`, `post(oauth::consent::<F>)` and
//! `post(oauth::token::<F>)`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Form;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use base64::Engine;
use sha2::{Digest, Sha256};

use super::{found, random_hex};

/// A code waiting to be redeemed: what the token request must match.
#[derive(Clone, Debug)]
pub struct Grant {
    pub redirect_uri: String,
    /// The PKCE S256 challenge, when the authorize request had one.
    pub challenge: Option<String>,
    /// The space-separated scopes asked for.
    pub scope: String,
}

impl Grant {
    /// Whether `scope` was among the scopes asked for (Microsoft's `offline_access`).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scope.split(' ').any(|s| s == scope)
    }
}

/// The consent page's wording.
#[derive(Clone, Copy, Debug)]
pub struct ConsentPage {
    /// The `<title>`.
    pub title: &'static str,
    /// The `<h1>`.
    pub heading: &'static str,
    /// The sentence before the signed-in account's name.
    pub prompt: &'static str,
    /// The path the form posts to (served by [`consent`]).
    pub action: &'static str,
    /// The Allow button's text (`#allow`).
    pub allow: &'static str,
    /// The Deny button's text (`#deny`).
    pub deny: &'static str,
}

/// How a platform's authorization server differs from the others.
#[derive(Clone, Copy, Debug)]
pub struct Dialect {
    /// Printed before the random part of each code (Microsoft's `M.C5_`).
    pub code_prefix: &'static str,
    /// Random bytes in a code.
    pub code_bytes: usize,
    /// `code_challenge` is read and checked (Box ignores it).
    pub pkce: bool,
    /// An empty `scope` is refused.
    pub scope_required: bool,
    /// The token request may leave `redirect_uri` out (Box); when present it must match.
    pub redirect_optional: bool,
    /// `None`: this platform has no consent page and approves at once.
    pub consent: Option<ConsentPage>,
}

/// Why an authorize request is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthorizeError {
    UnknownClient,
    /// `redirect_uri` or `state` missing.
    MissingParameter,
    /// `response_type` is not `code`.
    ResponseType,
    /// `scope` empty where the dialect needs one.
    NoScope,
    /// A `code_challenge_method` other than S256.
    ChallengeMethod,
}

impl AuthorizeError {
    /// The OAuth error code (RFC 6749 §4.1.2.1) for a plain-text refusal.
    pub fn code(self) -> &'static str {
        match self {
            Self::UnknownClient => "invalid_client",
            Self::ResponseType => "unsupported_response_type",
            Self::ChallengeMethod => "invalid_request: only S256",
            Self::MissingParameter | Self::NoScope => "invalid_request",
        }
    }
}

/// Why a token request is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenError {
    /// `client_id` / `client_secret` wrong.
    InvalidClient,
    /// The code is unknown, spent or missing.
    UnknownCode,
    RedirectMismatch,
    /// The PKCE verifier does not hash to the challenge.
    VerifierMismatch,
    UnsupportedGrant,
}

/// The authorization server's state: the app it knows, codes and pending consents.
#[derive(Debug)]
pub struct OAuthServer {
    pub client_id: String,
    pub client_secret: String,
    /// Serve the consent page (Allow / Deny) instead of approving at once.
    pub consent_page: AtomicBool,
    dialect: Dialect,
    codes: Mutex<HashMap<String, Grant>>,
    /// Consent page id -> (code, state).
    pending: Mutex<HashMap<String, (String, String)>>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl OAuthServer {
    /// An authorization server knowing the app `client_id` / `client_secret`.
    pub fn new(client_id: &str, client_secret: &str, dialect: Dialect) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            consent_page: AtomicBool::new(false),
            dialect,
            codes: Mutex::default(),
            pending: Mutex::default(),
        }
    }

    /// Whether a form carries this app's `client_id` and `client_secret`.
    pub fn client_matches(&self, f: &HashMap<String, String>) -> bool {
        f.get("client_id") == Some(&self.client_id)
            && f.get("client_secret") == Some(&self.client_secret)
    }

    /// Checks an authorize request: the code's grant and the `state` to send back.
    fn request(&self, q: &HashMap<String, String>) -> Result<(Grant, String), AuthorizeError> {
        if q.get("client_id") != Some(&self.client_id) {
            return Err(AuthorizeError::UnknownClient);
        }
        let (Some(redirect_uri), Some(state)) = (q.get("redirect_uri"), q.get("state")) else {
            return Err(AuthorizeError::MissingParameter);
        };
        if q.get("response_type").map(String::as_str) != Some("code") {
            return Err(AuthorizeError::ResponseType);
        }
        let scope = q.get("scope").cloned().unwrap_or_default();
        if self.dialect.scope_required && scope.is_empty() {
            return Err(AuthorizeError::NoScope);
        }
        let mut challenge = None;
        if self.dialect.pkce {
            let method = q.get("code_challenge_method").map(String::as_str);
            challenge = q.get("code_challenge").cloned();
            if (challenge.is_some() || method.is_some()) && method != Some("S256") {
                return Err(AuthorizeError::ChallengeMethod);
            }
        }
        let grant = Grant {
            redirect_uri: redirect_uri.clone(),
            challenge,
            scope,
        };
        Ok((grant, state.clone()))
    }

    /// Stores a code for `grant`, then shows the consent page or redirects back at once.
    fn approve(&self, grant: Grant, state: &str, account: &str) -> Response {
        let code = format!(
            "{}{}",
            self.dialect.code_prefix,
            random_hex(self.dialect.code_bytes)
        );
        let redirect_uri = grant.redirect_uri.clone();
        lock(&self.codes).insert(code.clone(), grant);
        match self.dialect.consent {
            Some(page) if self.consent_page.load(Ordering::SeqCst) => {
                let pending = random_hex(8);
                lock(&self.pending).insert(pending.clone(), (code, state.to_owned()));
                Html(format!(
                    "<!doctype html><title>{}</title><h1>{}</h1><p>{} ({account}).</p>\
                     <form method=post action={}><input type=hidden name=pending value={pending}>\
                     <button name=decision value=allow id=allow>{}</button>\
                     <button name=decision value=deny id=deny>{}</button></form>",
                    page.title, page.heading, page.prompt, page.action, page.allow, page.deny
                ))
                .into_response()
            }
            _ => redirect_back(&redirect_uri, &[("code", &code), ("state", state)]),
        }
    }

    /// The consent form's answer: back to the app with the code, or with `access_denied`.
    fn decide(&self, f: &HashMap<String, String>) -> Response {
        let pending = f.get("pending").and_then(|p| lock(&self.pending).remove(p));
        let Some((code, state)) = pending else {
            return (StatusCode::BAD_REQUEST, "unknown consent").into_response();
        };
        let Some(redirect_uri) = lock(&self.codes).get(&code).map(|c| c.redirect_uri.clone())
        else {
            return (StatusCode::BAD_REQUEST, "unknown code").into_response();
        };
        if f.get("decision").map(String::as_str) == Some("allow") {
            redirect_back(&redirect_uri, &[("code", &code), ("state", &state)])
        } else {
            lock(&self.codes).remove(&code);
            redirect_back(
                &redirect_uri,
                &[("error", "access_denied"), ("state", &state)],
            )
        }
    }

    /// Redeems the form's code (once): its grant, after the `redirect_uri` and PKCE checks.
    /// Public for token endpoints that check the client their own way (Zoom's HTTP Basic,
    /// Facebook's GET).
    pub fn redeem(&self, f: &HashMap<String, String>) -> Result<Grant, TokenError> {
        let grant = f.get("code").and_then(|c| lock(&self.codes).remove(c));
        let grant = grant.ok_or(TokenError::UnknownCode)?;
        let sent = f.get("redirect_uri");
        let matches = match sent {
            Some(uri) => *uri == grant.redirect_uri,
            None => self.dialect.redirect_optional,
        };
        if !matches {
            return Err(TokenError::RedirectMismatch);
        }
        if let Some(challenge) = &grant.challenge {
            let verifier = f.get("code_verifier").map(String::as_str).unwrap_or("");
            if pkce_s256(verifier) != *challenge {
                return Err(TokenError::VerifierMismatch);
            }
        }
        Ok(grant)
    }
}

/// The PKCE S256 challenge of `verifier` (RFC 7636 §4.2).
pub fn pkce_s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// The bearer token of a request, if any.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// A `302` back to the app's `redirect_uri` with `params` added to its query.
pub fn redirect_back(redirect_uri: &str, params: &[(&str, &str)]) -> Response {
    let Ok(mut url) = url::Url::parse(redirect_uri) else {
        return (StatusCode::BAD_REQUEST, "bad redirect_uri").into_response();
    };
    url.query_pairs_mut().extend_pairs(params);
    found(url.as_str())
}

/// A fake platform's authorization server.
pub trait Authority: Send + Sync + 'static {
    /// Its codes, pending consents and app.
    fn oauth(&self) -> &OAuthServer;

    /// The signed-in account the consent page names.
    fn account(&self) -> &str;

    /// Checks of the authorize request beyond the shared ones (Dropbox's `token_access_type`).
    // The error is the answer itself; a fake's few calls do not mind its size.
    #[allow(clippy::result_large_err)]
    fn check_authorize(&self, _q: &HashMap<String, String>) -> Result<(), Response> {
        Ok(())
    }

    /// The answer to a refused authorize request.
    fn authorize_refusal(&self, why: AuthorizeError) -> Response {
        (StatusCode::BAD_REQUEST, why.code()).into_response()
    }

    /// The answer to a refused token request, in the platform's error shape.
    fn token_refusal(&self, why: TokenError) -> Response;

    /// The tokens for a redeemed code.
    fn issue(&self, grant: &Grant) -> Response;

    /// The answer to a `refresh_token` grant (the client is already checked).
    fn refresh(&self, form: &HashMap<String, String>) -> Response;
}

/// `GET` authorize: approve at once or show the consent page.
pub async fn authorize<A: Authority>(
    State(a): State<Arc<A>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let (grant, state) = match a.oauth().request(&q) {
        Ok(ok) => ok,
        Err(why) => return a.authorize_refusal(why),
    };
    if let Err(refusal) = a.check_authorize(&q) {
        return refusal;
    }
    a.oauth().approve(grant, &state, a.account())
}

/// `POST` consent: the Allow / Deny form.
pub async fn consent<A: Authority>(
    State(a): State<Arc<A>>,
    Form(f): Form<HashMap<String, String>>,
) -> Response {
    a.oauth().decide(&f)
}

/// `POST` token: the client check, then the code or refresh grant.
pub async fn token<A: Authority>(
    State(a): State<Arc<A>>,
    Form(f): Form<HashMap<String, String>>,
) -> Response {
    if !a.oauth().client_matches(&f) {
        return a.token_refusal(TokenError::InvalidClient);
    }
    match f.get("grant_type").map(String::as_str) {
        Some("authorization_code") => match a.oauth().redeem(&f) {
            Ok(grant) => a.issue(&grant),
            Err(why) => a.token_refusal(why),
        },
        Some("refresh_token") => a.refresh(&f),
        _ => a.token_refusal(TokenError::UnsupportedGrant),
    }
}
