//! The checks the providers with one-use refresh tokens (Box, Zoom) run against their fakes: a
//! refused refresh is "Authorization required"; logout revokes the newest tokens of a rotated
//! session; `/{p}/refresh-token` hands out a token holding the live refresh token; rate limits
//! are backed off, then answered 429 naming the provider. Each fake is a [`RotatingFake`].

use std::sync::atomic::Ordering;

use ferry_testkit::fake::Faults;
use ferry_testkit::fake::r#box::BoxState;
use ferry_testkit::fake::zoom::ZoomState;
use serde_json::json;

use super::providers::{APP, Env, get, login, post, session_of};

pub const UNAUTHORIZED: &str = "HTTP 401: invalid access token detected by Provider";

/// A fake whose refresh tokens work once.
pub trait RotatingFake {
    fn faults(&self) -> &Faults;
    /// Expires one access token; its refresh token stays usable.
    fn expire(&self, token: &str);
    fn access_token_live(&self, token: &str) -> bool;
    fn refresh_token_live(&self, token: &str) -> bool;
    /// Refresh grants honoured.
    fn refreshes(&self) -> u64;
    /// Tokens revoked, in order.
    fn revoked(&self) -> Vec<String>;
}

macro_rules! rotating_fake {
    ($state:ty) => {
        impl RotatingFake for $state {
            fn faults(&self) -> &Faults {
                &self.faults
            }
            fn expire(&self, token: &str) {
                <$state>::expire(self, token)
            }
            fn access_token_live(&self, token: &str) -> bool {
                <$state>::access_token_live(self, token)
            }
            fn refresh_token_live(&self, token: &str) -> bool {
                <$state>::refresh_token_live(self, token)
            }
            fn refreshes(&self) -> u64 {
                self.refreshes.load(Ordering::SeqCst)
            }
            fn revoked(&self) -> Vec<String> {
                self.revoked.lock().expect("revoked").clone()
            }
        }
    };
}

rotating_fake!(BoxState);
rotating_fake!(ZoomState);

/// The access and refresh tokens sealed in a `p` Uppy auth token.
pub fn tokens(p: &str, token: &str) -> (String, String) {
    let s = session_of(p, token);
    (
        s["accessToken"].as_str().expect("access").to_owned(),
        s["refreshToken"].as_str().expect("refresh").to_owned(),
    )
}

/// The refresh token refused (revoked at the provider) when the access token has expired: the
/// listing and `/{p}/refresh-token` are both 401.
pub async fn a_refused_refresh_is_authorization_required(env: &Env, p: &str, f: &dyn RotatingFake) {
    let login = login(env, p, APP, None).await;
    let (a1, _) = tokens(p, &login.token);
    f.faults().revoke_refresh.store(true, Ordering::SeqCst);
    f.expire(&a1);
    let (status, body) = get(env, &format!("/{p}/list/"), Some(&login.token)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (401, Some(UNAUTHORIZED))
    );
    let (status, _) = post(
        env,
        &format!("/{p}/refresh-token"),
        Some(&login.token),
        json!({}),
    )
    .await;
    assert_eq!(status, 401);
}

/// After a server-side rotation, logout with the client's original token revokes the rotated
/// access token (not the spent one), and the session is dead.
pub async fn logout_revokes_the_newest_tokens_of_a_rotated_session(
    env: &Env,
    p: &str,
    f: &dyn RotatingFake,
) {
    let login = login(env, p, APP, None).await;
    let (a1, _) = tokens(p, &login.token);
    f.expire(&a1);
    let (status, _) = get(env, &format!("/{p}/list/"), Some(&login.token)).await;
    assert_eq!(status, 200);
    let (status, body) = get(env, &format!("/{p}/logout"), Some(&login.token)).await;
    assert_eq!((status, body), (200, json!({"ok": true, "revoked": true})));
    let revoked = f.revoked();
    assert_eq!(revoked.len(), 1);
    assert_ne!(
        revoked[0], a1,
        "the rotated access token, not the spent one"
    );
    assert!(!f.access_token_live(&revoked[0]));
    let (status, body) = get(env, &format!("/{p}/list/"), Some(&login.token)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (401, Some(UNAUTHORIZED))
    );
}

/// `/{p}/refresh-token` with the client's (stale) `token` hands out a token holding live
/// tokens, through one more refresh: `refreshes` in all afterwards.
pub async fn the_refresh_route_hands_out_the_live_tokens(
    env: &Env,
    p: &str,
    f: &dyn RotatingFake,
    token: &str,
    refreshes: u64,
) {
    let (status, body) = post(env, &format!("/{p}/refresh-token"), Some(token), json!({})).await;
    assert_eq!(status, 200, "{body}");
    let (a, r) = tokens(p, body["uppyAuthToken"].as_str().expect("token"));
    assert!(f.access_token_live(&a) && f.refresh_token_live(&r));
    assert_eq!(f.refreshes(), refreshes);
}

/// Two 429s are backed off and the listing answers; a limit that lasts is a 429 naming `name`.
pub async fn rate_limits_back_off_then_answer_429(env: &Env, p: &str, name: &str, f: &Faults) {
    let login = login(env, p, APP, None).await;
    f.too_many.store(2, Ordering::SeqCst);
    let (status, body) = get(env, &format!("/{p}/list/"), Some(&login.token)).await;
    assert_eq!(status, 200, "{body}");
    f.too_many.store(100, Ordering::SeqCst);
    let (status, body) = get(env, &format!("/{p}/list/"), Some(&login.token)).await;
    let message = format!("{name} is limiting requests; retrying in 1 s");
    assert_eq!(
        (status, body),
        (429, json!({"message": message, "retryAfter": 1}))
    );
}
