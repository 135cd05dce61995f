//! Drive's OAuth login and hostile inputs against it: the auth socket's hand-off and its caps,
//! forged, replayed and cookieless states, tokens missing, forged, expired or for another provider,
//! unknown providers and path tricks, an expired login state.

use super::*;

#[tokio::test]
async fn websocket_hand_off_reaches_an_early_socket_and_a_late_one() {
    let env = start().await;
    // Early: the socket waits before the login finishes.
    let (mut early, binding) = bound_socket(&env, "early-1", APP).await;
    assert!(
        binding.starts_with("ferry_cb_early-1="),
        "the upgrade binds this browser to the id: {binding}"
    );
    let login = login_bound(&env, "drive", APP, Some("early-1"), Some(&binding)).await;
    assert!(
        login.page.contains("Authentication successful"),
        "{}",
        login.page
    );
    assert_eq!(
        first_message(&mut early).await,
        json!({ "token": login.token })
    );
    // Late: the popup finishes before the socket connected, so its browser has no binding yet;
    // the page waits (posting to its opener meanwhile) and reloads itself.
    let late_login = common::providers::login(&env, "drive", APP, Some("late-1")).await;
    assert!(
        late_login.page.contains("Finishing sign-in"),
        "{}",
        late_login.page
    );
    assert!(
        late_login
            .page
            .contains("window.opener.postMessage(data, origin)")
    );
    let (mut late, binding) = bound_socket(&env, "late-1", APP).await;
    let (status, page) = send_token(&env, &next_attempt(&late_login.page), Some(&binding)).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Authentication successful"), "{page}");
    assert_eq!(
        first_message(&mut late).await,
        json!({ "token": late_login.token })
    );
    let (status, page) = get(&env, "/drive/list/root", Some(&late_login.token)).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["username"], "fake.user@example.com");
}

#[tokio::test]
async fn a_token_reaches_only_the_socket_of_the_browser_that_opened_it() {
    let env = start().await;
    // The attacker opens the socket with their own id from a non-browser client, forging the
    // Origin header of the allowed page, and keeps the binding cookie to themselves.
    let (mut thief, _attackers_cookie) = bound_socket(&env, "attacker-1", APP).await;
    // The victim follows the attacker's link and consents; the victim's browser holds no
    // binding for that id, whatever it retries.
    let victim = login(&env, "drive", APP, Some("attacker-1")).await;
    let mut page = victim.page.clone();
    let mut attempts = 0;
    let (status, last) = loop {
        let (status, next) = send_token(&env, &next_attempt(&page), None).await;
        attempts += 1;
        if status != 200 {
            break (status, next);
        }
        page = next;
    };
    assert_eq!(attempts, 10, "bounded retries");
    assert_eq!(status, 400);
    assert!(
        last.contains("this browser did not open that page&#39;s connection")
            || last.contains("this browser did not open that page's connection"),
        "{last}"
    );
    assert!(
        !last.contains(&victim.token),
        "the failure page carries no token"
    );
    // The attacker's socket got nothing: shut down, its first frame is the close.
    env.state.close(std::time::Duration::from_secs(5)).await;
    let frame = tokio::time::timeout(std::time::Duration::from_secs(10), thief.next())
        .await
        .expect("a frame in time")
        .expect("open")
        .expect("frame");
    assert!(
        matches!(&frame, Message::Close(Some(c)) if u16::from(c.code) == 1001),
        "{frame:?}"
    );
}

#[tokio::test]
async fn closed_auth_sockets_leave_no_slot_no_task_and_a_cap_refuses_more() {
    let env = start_with(Opts {
        auth_sockets_per_client: 250,
        ..Opts::default()
    })
    .await;
    let mut sockets = Vec::new();
    for i in 0..200 {
        sockets.push(bound_socket(&env, &format!("gone-{i}"), APP).await.0);
    }
    assert_eq!(open_auth_sockets(&env), 200);
    assert_eq!(env.hub.len(), 200);
    for mut ws in sockets {
        ws.close(None).await.expect("close");
    }
    // The server notices each close on its own; nothing is left once it has.
    tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while open_auth_sockets(&env) != 0 || !env.hub.is_empty() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{} slots left", env.hub.len()));
    // A real login still goes through.
    let (mut ws, binding) = bound_socket(&env, "after-1", APP).await;
    let login = login_bound(&env, "drive", APP, Some("after-1"), Some(&binding)).await;
    assert_eq!(
        first_message(&mut ws).await,
        json!({ "token": login.token })
    );

    // One client's cap answers a clear refusal (all in-process clients are one).
    let env = start().await;
    let mut held = Vec::new();
    for i in 0..16 {
        held.push(bound_socket(&env, &format!("held-{i}"), APP).await.0);
    }
    let url = format!(
        "ws://{}/api2/auth-callback/token/one-more",
        env.companion.addr
    );
    let mut req = url.into_client_request().expect("request");
    req.headers_mut()
        .insert("origin", APP.parse().expect("origin"));
    match tokio_tungstenite::connect_async(req).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => {
            assert_eq!(resp.status(), 429);
            let body: Value =
                serde_json::from_slice(resp.body().as_deref().unwrap_or_default()).expect("json");
            assert_eq!(
                body["message"],
                "Too many sign-in sockets from this address (at most 16); close one and try again"
            );
        }
        other => panic!("expected 429, got {other:?}"),
    }
}

/// `ferry_companion_auth_sockets_open` as the server's `/metrics` shows it.
fn open_auth_sockets(env: &Env) -> u64 {
    let text = ferry_companion::metrics::render(&env.state);
    text.lines()
        .find_map(|l| l.strip_prefix("ferry_companion_auth_sockets_open "))
        .expect("gauge")
        .parse()
        .expect("number")
}

#[tokio::test]
async fn forged_replayed_and_cookieless_states_are_refused() {
    let env = start().await;
    // An origin outside --cors-origins cannot start a login.
    let r = env
        .http
        .get(env.companion.url(&format!(
            "/drive/connect?state={}",
            uppy_state("https://evil.example")
        )))
        .send()
        .await
        .expect("connect");
    assert_eq!(r.status(), 400);
    assert_eq!(
        r.json::<Value>().await.expect("json")["message"],
        "Origin not allowed"
    );
    // A forged state.
    let r = env
        .http
        .get(
            env.companion
                .url("/drive/redirect?code=abc&state=000102030405060708090a0b0c0d0e0fAAAA"),
        )
        .send()
        .await
        .expect("redirect");
    assert_eq!(r.status(), 400);
    assert!(
        r.text()
            .await
            .expect("page")
            .contains("Invalid login state")
    );
    // A replay of a finished login, with and without its cookie.
    let login = login(&env, "drive", APP, None).await;
    let r = env
        .http
        .get(&login.redirect_url)
        .header("cookie", &login.cookie)
        .send()
        .await
        .expect("replay");
    assert_eq!(r.status(), 400);
    assert!(r.text().await.expect("page").contains("already used"));
    let r = env
        .http
        .get(&login.redirect_url)
        .send()
        .await
        .expect("replay");
    assert_eq!(r.status(), 400);
    // A drive state cannot finish an instagram login.
    let state = url::Url::parse(&login.redirect_url)
        .expect("url")
        .query_pairs()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned())
        .expect("state");
    let r = env
        .http
        .get(
            env.companion
                .url(&format!("/instagram/redirect?code=x&state={state}")),
        )
        .header("cookie", &login.cookie)
        .send()
        .await
        .expect("cross");
    assert_eq!(r.status(), 400);
    // The user denies access on the consent page.
    env.google
        .state
        .oauth
        .consent_page
        .store(true, Ordering::SeqCst);
    let r = env
        .http
        .get(
            env.companion
                .url(&format!("/drive/connect?state={}", uppy_state(APP))),
        )
        .send()
        .await
        .expect("connect");
    let cookie = r.headers()["set-cookie"]
        .to_str()
        .expect("cookie")
        .split(';')
        .next()
        .expect("c")
        .to_owned();
    let page = env
        .http
        .get(r.headers()["location"].to_str().expect("loc"))
        .send()
        .await
        .expect("consent")
        .text()
        .await
        .expect("page");
    assert!(page.contains("id=deny"), "{page}");
    let pending = page
        .split("name=pending value=")
        .nth(1)
        .and_then(|s| s.split('>').next())
        .expect("pending")
        .to_owned();
    let r = env
        .http
        .post(env.google.server.url("/consent"))
        .form(&[("pending", pending.as_str()), ("decision", "deny")])
        .send()
        .await
        .expect("deny");
    let back = r.headers()["location"].to_str().expect("loc").to_owned();
    let r = env
        .http
        .get(&back)
        .header("cookie", &cookie)
        .send()
        .await
        .expect("back");
    assert_eq!(r.status(), 400);
    assert!(r.text().await.expect("page").contains("access was denied"));
}

#[tokio::test]
async fn tokens_missing_forged_expired_or_for_another_provider_are_401() {
    let env = start().await;
    let ig = login(&env, "instagram", APP, None).await;
    let forged = ferry_companion::token::issue(
        b"another secret",
        "drive",
        json!({"accessToken": "x"}),
        0,
        i64::MAX / 2,
    );
    let expired = ferry_companion::token::issue(
        SECRET.as_bytes(),
        "drive",
        json!({"accessToken": "x"}),
        0,
        1,
    );
    for token in [
        None,
        Some(ig.token.as_str()),
        Some(forged.as_str()),
        Some(expired.as_str()),
        Some("garbage"),
    ] {
        let (status, _) = get(&env, "/drive/list/root", token).await;
        assert_eq!(status, 401, "{token:?}");
        let (status, _) = post(&env, "/drive/get/abc", token, tus_body(&env, "a", 1)).await;
        assert_eq!(status, 401, "{token:?}");
        let (status, _) = post(&env, "/drive/refresh-token", token, json!({})).await;
        assert_eq!(status, 401, "{token:?}");
    }
}

#[tokio::test]
async fn unknown_providers_and_path_tricks_are_refused() {
    let env = start().await;
    let login = login(&env, "drive", APP, None).await;
    for path in ["/nosuch/list/root", "/nosuch/connect", "/DRIVE/list/root"] {
        let (status, body) = get(&env, path, Some(&login.token)).await;
        assert_eq!(
            (status, body),
            (404, json!({"message": "Unknown provider"})),
            "{path}"
        );
    }
    for path in [
        "/drive/list/..%2F..",
        "/drive/list/a'%20or%20'1",
        "/drive/list/a/b",
        "/drive/list/%00",
    ] {
        let (status, body) = get(&env, path, Some(&login.token)).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body["message"], "Invalid folder id");
    }
    for id in ["..%2Fetc%2Fpasswd", "x'y", "root", "a/b"] {
        let (status, body) = post(
            &env,
            &format!("/drive/get/{id}"),
            Some(&login.token),
            tus_body(&env, "a", 1),
        )
        .await;
        assert_eq!(status, 400, "{id}: {body}");
    }
}

#[tokio::test]
async fn an_expired_login_state_hands_no_token_at_send_token() {
    use ferry_companion::oauth::sealed::{self, LoginState};
    let env = start().await;
    let login = login(&env, "drive", APP, None).await;
    let expired = sealed::seal(
        SECRET.as_bytes(),
        &LoginState {
            k: "state".into(),
            p: "drive".into(),
            n: "00".into(),
            o: APP.into(),
            t: None,
            e: ferry_companion::token::now() - 1,
        },
    );
    let url = format!(
        "/drive/send-token?uppyAuthToken={}&state={expired}",
        login.token
    );
    let (status, page) = send_token(&env, &env.companion.url(&url), None).await;
    assert_eq!(status, 400);
    assert!(
        page.contains("Authentication failed: The login took too long; start it again"),
        "{page}"
    );
    assert!(!page.contains(&login.token), "no token on the page");
}
