//! Where Drive's tokens may go: the legacy postMessage hand-off only to the declared origin, the
//! auth socket only to the sealed one, nothing to pages a `*` CORS setting does not name, and no
//! link built from a forged Host without a public URL.

use super::*;

#[tokio::test]
async fn legacy_hand_off_posts_the_token_to_the_declared_origin_only() {
    let env = start().await;
    let login = login(&env, "drive", APP, None).await;
    let data = json!({ "token": login.token }).to_string();
    assert!(
        login.page.contains(&format!("var data = {data};")),
        "{}",
        login.page
    );
    assert!(
        login
            .page
            .contains(r#"var origin = "https://app.example";"#),
        "{}",
        login.page
    );
    assert!(
        login
            .page
            .contains("window.opener.postMessage(data, origin)")
    );
    let session = session_of("drive", &login.token);
    assert!(
        env.google
            .state
            .access_token_live(session["accessToken"].as_str().expect("access"))
    );
    assert!(
        env.google
            .state
            .refresh_token_live(session["refreshToken"].as_str().expect("refresh"))
    );
}

#[tokio::test]
async fn auth_socket_refuses_foreign_origins_and_delivers_only_to_the_sealed_one() {
    let env = start().await;
    assert_eq!(
        auth_socket(&env, "x-1", "https://evil.example").await.err(),
        Some(403)
    );
    // An allowed origin, but not the one the login sealed: it learns nothing.
    let (mut thief, binding) = bound_socket(&env, "x-2", OTHER_APP).await;
    let login = login_bound(&env, "drive", APP, Some("x-2"), Some(&binding)).await;
    assert_eq!(first_message(&mut thief).await, json!({ "error": true }));
    let mut owner = auth_socket(&env, "x-2", APP).await.expect("socket");
    assert_eq!(
        first_message(&mut owner).await,
        json!({ "token": login.token })
    );
}

#[tokio::test]
async fn cors_star_hands_tokens_to_no_page_it_does_not_name() {
    let env = start_with(Opts {
        cors_origins: vec!["*".into()],
        ..Opts::default()
    })
    .await;
    let r = env
        .http
        .get(env.companion.url(&format!(
            "/drive/connect?state={}&authCallbackToken=star-1",
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
    assert_eq!(
        auth_socket(&env, "star-1", "https://evil.example")
            .await
            .err(),
        Some(403)
    );
    // CORS itself still answers any page: `*` opens reads, not the token hand-off.
    let r = env
        .http
        .get(env.companion.url("/providers"))
        .header("origin", "https://evil.example")
        .send()
        .await
        .expect("providers");
    assert_eq!(r.status(), 200);
    assert!(r.headers().contains_key("access-control-allow-origin"));
}

#[tokio::test]
async fn without_a_public_url_a_forged_host_builds_no_link() {
    let env = start().await;
    let login = login(&env, "drive", APP, None).await;
    let unknown = "Unknown host: set --public-url (FERRY_PUBLIC_URL) to this server's public URL for cloud-provider logins";
    // The provider would send its code to the forged host.
    let r = env
        .http
        .get(
            env.companion
                .url(&format!("/drive/connect?state={}", uppy_state(APP))),
        )
        .header("host", "evil.example")
        .send()
        .await
        .expect("connect");
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<Value>().await.expect("json")["message"], unknown);
    // Thumbnail links would point at it.
    let r = env
        .http
        .get(env.companion.url("/drive/list/root"))
        .header("host", "evil.example:80")
        .header("uppy-auth-token", &login.token)
        .send()
        .await
        .expect("list");
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<Value>().await.expect("json")["message"], unknown);
    // This server's own host still works.
    let (status, page) = get(&env, "/drive/list/root", Some(&login.token)).await;
    assert_eq!(status, 200, "{page}");
}
