//! The login routes. `/{p}/connect` seals the state, sets the login cookie and sends the
//! browser to the provider; `/{p}/redirect` (the redirect URI registered with the provider;
//! `/{p}/callback` is the same handler) checks state and cookie, swaps the code for a session,
//! seals it as an Uppy auth token and sends the browser to `/{p}/send-token`
//! ([`super::send_token`]), which hands the token to the page.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::header::{COOKIE, LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;
use serde_json::Value;

use super::handoff::{self, Outcome};
use super::sealed::{self, LoginCookie, LoginState};
use super::{binding, handoff_origin_allowed, pages, public_base};
use crate::error::CompanionError;
use crate::providers::Provider;
use crate::state::AppState;
use crate::token;

type Params = Query<HashMap<String, String>>;

pub(super) fn provider(state: &AppState, p: &str) -> Result<Arc<dyn Provider>, CompanionError> {
    state
        .providers()
        .get(p)
        .ok_or_else(|| CompanionError::NotFound("Unknown provider".into()))
        .and_then(|provider| {
            if provider.has_simple_auth() {
                Err(CompanionError::BadRequest(format!(
                    "{} signs in with a form (POST /{}/simple-auth), not OAuth",
                    provider.info().name,
                    provider.info().id
                )))
            } else if provider.needs_sign_in() {
                Ok(provider)
            } else {
                Err(CompanionError::BadRequest(format!(
                    "{} needs no sign-in",
                    provider.info().name
                )))
            }
        })
}

fn cookie_name(p: &str) -> String {
    format!("ferry_oauth_{p}")
}

/// The page's origin from Uppy's `state` parameter: base64 of `{"origin": ...}`.
fn declared_origin(raw: &str) -> Option<String> {
    let engine = base64::engine::general_purpose::STANDARD;
    let bytes = engine
        .decode(raw.trim())
        .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(raw.trim()))
        .ok()?;
    let v: Value = serde_json::from_slice(&bytes).ok()?;
    v.get("origin")?
        .as_str()
        .map(|o| o.trim_end_matches('/').to_owned())
}

#[utoipa::path(
    get,
    path = "/{provider}/connect",
    operation_id = "provider_connect",
    tag = "providers",
    description = "Starts a login: redirects the browser to the provider's consent page.",
    params(("provider" = String, Path, description = "The provider id (`drive`, `instagram`, `box`, `onedrive`, ...; `GET /providers` lists the enabled ones)."), ("state" = String, Query, description = "Uppy's base64 `{origin}` state.")),
    responses(
        (status = 302, description = "To the provider.", headers(("Location" = String))),
        (status = 400, description = "Invalid login state or origin.", body = crate::error::ErrorMessage),
        (status = 404, description = "Unknown or disabled provider.", body = crate::error::ErrorMessage),
    ),
)]
pub(crate) async fn connect(
    State(state): State<AppState>,
    Path(p): Path<String>,
    Query(q): Params,
    headers: HeaderMap,
) -> Result<Response, CompanionError> {
    let provider = provider(&state, &p)?;
    let secret = sealed::secret(&state)?;
    let origin = q
        .get("state")
        .and_then(|s| declared_origin(s))
        .ok_or_else(|| {
            CompanionError::BadRequest("Invalid state: the page's origin is missing".into())
        })?;
    if !handoff_origin_allowed(&state, &origin) {
        return Err(CompanionError::BadRequest("Origin not allowed".into()));
    }
    let socket_id = q
        .get("authCallbackToken")
        .filter(|t| !t.is_empty())
        .cloned();
    if socket_id.as_deref().is_some_and(|t| !handoff::valid_id(t)) {
        return Err(CompanionError::BadRequest(
            "Invalid authCallbackToken".into(),
        ));
    }
    let spec = &provider.info().oauth;
    let nonce = sealed::random_hex(16);
    let ttl = state.config().providers.login_timeout.as_secs() as i64;
    let expires = token::now() + ttl;
    let (verifier, challenge) = if spec.pkce {
        let (v, c) = sealed::pkce_pair();
        (Some(v), Some(c))
    } else {
        (None, None)
    };
    let login = sealed::seal(
        secret,
        &LoginState {
            k: "state".into(),
            p: p.clone(),
            n: nonce.clone(),
            o: origin,
            t: socket_id,
            e: expires,
        },
    );
    let cookie = sealed::seal(
        secret,
        &LoginCookie {
            k: "cookie".into(),
            p: p.clone(),
            n: nonce,
            v: verifier,
            e: expires,
        },
    );
    let base = public_base(&state, &headers)?;
    let redirect_uri = format!("{base}/{p}/redirect");
    let mut url = url::Url::parse(&spec.authorize_url)
        .map_err(|_| CompanionError::Internal("bad authorize URL".into()))?;
    {
        let mut pairs = url.query_pairs_mut();
        pairs
            .append_pair("client_id", &provider.info().client_id)
            .append_pair("redirect_uri", &redirect_uri)
            .append_pair("response_type", "code");
        // Zoom's scopes live in the app's settings: it gets no (empty) scope parameter.
        if !spec.scopes.is_empty() {
            pairs.append_pair("scope", &spec.scopes.join(spec.scope_separator));
        }
        pairs.append_pair("state", &login);
        for (k, v) in &spec.extra {
            pairs.append_pair(k, v);
        }
        if let Some(c) = &challenge {
            pairs
                .append_pair("code_challenge", c)
                .append_pair("code_challenge_method", "S256");
        }
    }
    let secure = if base.starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    let set_cookie = format!(
        "{}={cookie}; Path=/; Max-Age={ttl}; HttpOnly; SameSite=Lax{secure}",
        cookie_name(&p)
    );
    Ok(redirect(url.as_str(), Some(set_cookie)))
}

fn redirect(location: &str, set_cookie: Option<String>) -> Response {
    let mut resp = StatusCode::FOUND.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        resp.headers_mut().insert(LOCATION, v);
    }
    if let Some(c) = set_cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        resp.headers_mut().append(SET_COOKIE, c);
    }
    resp.headers_mut()
        .insert("cache-control", HeaderValue::from_static("no-store"));
    resp
}

pub(super) fn read_cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
}

/// Nonces of logins finished on this instance, until their expiry (replays of a state that
/// still has its cookie are refused here; elsewhere the cleared cookie refuses them).
#[derive(Debug, Default)]
pub struct UsedNonces {
    map: Mutex<HashMap<String, i64>>,
}

impl UsedNonces {
    /// Records `nonce` (valid until `expires`); false if it was already used.
    pub fn first_use(&self, nonce: &str, expires: i64) -> bool {
        let now = token::now();
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.retain(|_, e| *e > now);
        map.insert(nonce.to_owned(), expires).is_none()
    }
}

#[utoipa::path(
    get,
    path = "/{provider}/redirect",
    operation_id = "provider_redirect",
    tag = "providers",
    description = "The provider's OAuth redirect: ends the login and hands the token to the page \
        (an HTML page that posts it to the opener, or the auth-callback socket).",
    params(("provider" = String, Path, description = "The provider id (`drive`, `instagram`, `box`, `onedrive`, ...; `GET /providers` lists the enabled ones)."), ("code" = Option<String>, Query), ("state" = Option<String>, Query)),
    responses(
        (status = 200, description = "The HTML hand-off page.", content_type = "text/html"),
        (status = "4XX", description = "The login failed: an HTML page saying why.", content_type = "text/html"),
    ),
)]
pub(crate) async fn oauth_redirect(
    state: State<AppState>,
    p: Path<String>,
    q: Params,
    headers: HeaderMap,
) -> Response {
    redirect_back(state, p, q, headers).await
}

#[utoipa::path(
    get,
    path = "/{provider}/callback",
    operation_id = "provider_callback",
    tag = "providers",
    description = "The same as `/{provider}/redirect` (Companion's older redirect path).",
    params(("provider" = String, Path, description = "The provider id (`drive`, `instagram`, `box`, `onedrive`, ...; `GET /providers` lists the enabled ones)."), ("code" = Option<String>, Query), ("state" = Option<String>, Query)),
    responses(
        (status = 200, description = "The HTML hand-off page.", content_type = "text/html"),
        (status = "4XX", description = "The login failed: an HTML page saying why.", content_type = "text/html"),
    ),
)]
pub(crate) async fn oauth_callback(
    state: State<AppState>,
    p: Path<String>,
    q: Params,
    headers: HeaderMap,
) -> Response {
    redirect_back(state, p, q, headers).await
}

async fn redirect_back(
    State(state): State<AppState>,
    Path(p): Path<String>,
    Query(q): Params,
    headers: HeaderMap,
) -> Response {
    match finish_login(&state, &p, &q, &headers).await {
        Ok(resp) => resp,
        Err((login, error)) => {
            // Only the browser that opened the socket hears how its login ended.
            let bound = |id: &str| {
                sealed::secret(&state).is_ok_and(|s| binding::holds(&state, &headers, s, id))
            };
            if let Some(login) = login {
                if let Some(id) = login.t.as_deref().filter(|id| bound(id)) {
                    let keep = state.config().providers.handoff_keep;
                    state
                        .handoff()
                        .publish(
                            id,
                            Outcome {
                                origin: login.o.clone(),
                                token: None,
                            },
                            keep,
                        )
                        .await;
                }
            }
            let status = error.status_code();
            tracing::info!(provider = %p, %error, "login failed");
            let mut resp = pages::failure(status, &error.to_string());
            let clear = format!(
                "{}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax",
                cookie_name(&p)
            );
            if let Ok(v) = HeaderValue::from_str(&clear) {
                resp.headers_mut().append(SET_COOKIE, v);
            }
            resp
        }
    }
}

type LoginError = (Option<LoginState>, CompanionError);

async fn finish_login(
    state: &AppState,
    p: &str,
    q: &HashMap<String, String>,
    headers: &HeaderMap,
) -> Result<Response, LoginError> {
    let provider = provider(state, p).map_err(|e| (None, e))?;
    let secret = sealed::secret(state).map_err(|e| (None, e))?;
    let bad = |m: &str| CompanionError::BadRequest(m.to_owned());
    let login: LoginState = q
        .get("state")
        .and_then(|s| sealed::open(secret, s))
        .filter(|l: &LoginState| l.k == "state" && l.p == p)
        .ok_or_else(|| (None, bad("Invalid login state")))?;
    let now = token::now();
    if login.e <= now {
        return Err((Some(login), bad("The login took too long; start it again")));
    }
    if let Some(error) = q.get("error") {
        let reason = if error == "access_denied" {
            "access was denied"
        } else {
            "the provider refused"
        };
        return Err((
            Some(login),
            bad(&format!("Authentication failed: {reason}")),
        ));
    }
    let cookie: Option<LoginCookie> =
        read_cookie(headers, &cookie_name(p)).and_then(|c| sealed::open(secret, &c));
    let Some(cookie) =
        cookie.filter(|c| c.k == "cookie" && c.p == p && c.n == login.n && c.e > now)
    else {
        return Err((
            Some(login),
            bad("This login was not started in this browser, or was already used; start it again"),
        ));
    };
    if !state.used_nonces().first_use(&login.n, login.e) {
        return Err((
            Some(login),
            bad("This login was already used; start it again"),
        ));
    }
    let Some(code) = q.get("code").filter(|c| !c.is_empty()) else {
        return Err((Some(login), bad("The provider sent no authorization code")));
    };
    let base = public_base(state, headers).map_err(|e| (None, e))?;
    let redirect_uri = format!("{base}/{p}/redirect");
    let session = match provider
        .exchange_code(code, &redirect_uri, cookie.v.as_deref())
        .await
    {
        Ok(s) => s,
        Err(e) => return Err((Some(login), e.into())),
    };
    let token = token::issue(
        secret,
        p,
        session.to_value(),
        now,
        provider.info().token_max_age,
    );
    let mut next = url::Url::parse(&format!("{base}/{p}/send-token"))
        .map_err(|_| (None, CompanionError::Internal("bad public URL".into())))?;
    next.query_pairs_mut()
        .append_pair("uppyAuthToken", &token)
        .append_pair("state", q.get("state").map(String::as_str).unwrap_or(""));
    let clear = format!(
        "{}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax",
        cookie_name(p)
    );
    Ok(redirect(next.as_str(), Some(clear)))
}

/// The login routes of every provider.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/{provider}/connect", get(connect))
        .route("/{provider}/redirect", get(oauth_redirect))
        .route("/{provider}/callback", get(oauth_callback))
        .route("/{provider}/send-token", get(super::send_token::send_token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uppy_state_declares_the_origin() {
        let raw = base64::engine::general_purpose::STANDARD
            .encode(r#"{"origin":"https://app.example/"}"#);
        assert_eq!(
            declared_origin(&raw).as_deref(),
            Some("https://app.example")
        );
        assert_eq!(declared_origin("%%%"), None);
        assert_eq!(
            declared_origin(&base64::engine::general_purpose::STANDARD.encode("{}")),
            None
        );
    }

    #[test]
    fn nonces_are_used_once() {
        let used = UsedNonces::default();
        let later = token::now() + 60;
        assert!(used.first_use("a", later));
        assert!(!used.first_use("a", later));
        assert!(used.first_use("b", later));
    }
}
