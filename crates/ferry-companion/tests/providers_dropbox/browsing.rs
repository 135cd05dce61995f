//! Dropbox's sign-in and listing: Companion's list shape with `?cursor=` paging to the end, a token
//! refreshed mid-list, team spaces, thumbnails by the signed link, logout, and bad paths refused.

use super::*;

#[tokio::test]
async fn sign_in_then_list_in_companions_shape_paging_to_the_end() {
    let env = start().await;
    let d = &env.dropbox.state;
    for n in 0..7 {
        d.add(&format!("/Photos/IMG_{n}.JPG"), vec![n as u8; 10 + n]);
    }
    d.add("/Docs/Report.pdf", b"%PDF".to_vec());
    d.add("/readme.txt", b"hello".to_vec());
    let login = login(&env, "dropbox", APP, None).await;
    let session = session_of("dropbox", &login.token);
    assert_eq!(session["username"], "fake.user@example.com");
    assert!(
        session["refreshToken"]
            .as_str()
            .is_some_and(|r| r.starts_with("rt."))
    );

    let (status, providers) = get(&env, "/providers", None).await;
    assert_eq!(status, 200);
    assert!(
        providers["providers"]
            .as_array()
            .expect("list")
            .iter()
            .any(|p| p == &json!({"id": "dropbox", "name": "Dropbox", "rootFolder": "", "supportsRefreshToken": true})),
        "{providers}"
    );

    let (status, root) = get(&env, "/dropbox/list/", Some(&login.token)).await;
    assert_eq!(status, 200, "{root}");
    assert_eq!(root["username"], "fake.user@example.com");
    let names: Vec<&str> = root["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["Docs", "Photos", "readme.txt"], "folders first");
    let readme = &root["items"][2];
    assert_eq!(readme["requestPath"], "%2Freadme%2Etxt");
    assert_eq!(readme["icon"], "file");
    assert_eq!(readme["mimeType"], "text/plain");
    assert_eq!(readme["size"], 5);
    assert_eq!(readme["modifiedDate"], "2026-01-02T03:04:05Z");
    assert!(readme["id"].as_str().is_some_and(|i| i.starts_with("id:")));
    assert!(readme["thumbnail"].is_null(), "no thumbnail for text");
    assert_eq!(root["items"][1]["icon"], "folder");
    assert!(root["nextPagePath"].is_null());

    let photos = root["items"][1]["requestPath"].as_str().expect("path");
    assert_eq!(photos, "%2Fphotos");
    let (items, pages) = list_all(&env, "dropbox", photos, &login.token).await;
    assert_eq!((items.len(), pages), (7, 2), "page size 5: {items:?}");
    let (_, first) = get(&env, &format!("/dropbox/list/{photos}"), Some(&login.token)).await;
    assert!(
        first["nextPagePath"]
            .as_str()
            .is_some_and(|p| p.starts_with("?cursor=")),
        "{first}"
    );
    let img = by_name(&items, "IMG_3.JPG");
    assert_eq!(
        (img["mimeType"].as_str(), img["size"].as_u64()),
        (Some("image/jpeg"), Some(13))
    );
    assert!(
        img["thumbnail"]
            .as_str()
            .is_some_and(|t| t.contains("/dropbox/thumbnail/%2Fphotos%2Fimg_3.jpg?t=")),
        "{img}"
    );
}

#[tokio::test]
async fn thumbnails_load_by_the_signed_link_for_that_file_only() {
    let env = start().await;
    let content = random_bytes(2000);
    env.dropbox.state.add("/a.png", content.clone());
    env.dropbox.state.add("/b.png", b"other".to_vec());
    let login = login(&env, "dropbox", APP, None).await;
    let (_, root) = get(&env, "/dropbox/list/", Some(&login.token)).await;
    let link = root["items"][0]["thumbnail"]
        .as_str()
        .expect("thumbnail")
        .to_owned();
    // A plain <img>: no token header, no cookie.
    let resp = env.http.get(&link).send().await.expect("thumbnail");
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "image/jpeg");
    assert_eq!(
        resp.bytes().await.expect("body").to_vec(),
        thumbnail_of(&content)
    );
    let other = link.replace("%2Fa.png", "%2Fb.png");
    let resp = env.http.get(&other).send().await.expect("thumbnail");
    assert_eq!(resp.status(), 401, "the grant is for a.png alone");
}

#[tokio::test]
async fn an_access_token_expiring_mid_list_is_refreshed_and_paging_continues() {
    let env = start().await;
    let d = &env.dropbox.state;
    for n in 0..8 {
        d.add(&format!("/f{n}.txt"), vec![b'x'; n + 1]);
    }
    let login = login(&env, "dropbox", APP, None).await;
    let (status, first) = get(&env, "/dropbox/list/", Some(&login.token)).await;
    assert_eq!(status, 200);
    let next = first["nextPagePath"].as_str().expect("more").to_owned();
    d.expire(&access_of(&login.token));
    let (status, body) = get(&env, &format!("/dropbox/list/{next}"), Some(&login.token)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (
            401,
            Some("HTTP 401: invalid access token detected by Provider")
        ),
        "what makes @uppy/dropbox refresh"
    );
    let (status, body) = post(
        &env,
        "/dropbox/refresh-token",
        Some(&login.token),
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let fresh = body["uppyAuthToken"].as_str().expect("token").to_owned();
    let (old, new) = (
        session_of("dropbox", &login.token),
        session_of("dropbox", &fresh),
    );
    assert_ne!(old["accessToken"], new["accessToken"]);
    assert_eq!(
        old["refreshToken"], new["refreshToken"],
        "Dropbox keeps its refresh token"
    );
    assert_eq!(new["username"], "fake.user@example.com");
    let (status, second) = get(&env, &format!("/dropbox/list/{next}"), Some(&fresh)).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(
        first["items"].as_array().expect("items").len()
            + second["items"].as_array().expect("items").len(),
        8
    );
    assert!(second["nextPagePath"].is_null());
    d.faults.revoke_refresh.store(true, Ordering::SeqCst);
    let (status, _) = post(&env, "/dropbox/refresh-token", Some(&fresh), json!({})).await;
    assert_eq!(
        status, 401,
        "a revoked refresh token asks for sign-in again"
    );
}

#[tokio::test]
async fn team_spaces_are_listed_and_imported_from_the_root_namespace() {
    let env = start().await;
    let d = &env.dropbox.state;
    d.team.store(true, Ordering::SeqCst);
    let data = random_bytes(70_000);
    d.add_in(TEAM_NS, "/Team Folder/plan.bin", data.clone());
    d.add("/private.txt", b"home only".to_vec());
    let login = login(&env, "dropbox", APP, None).await;
    let (status, root) = get(&env, "/dropbox/list/", Some(&login.token)).await;
    assert_eq!(status, 200, "{root}");
    assert_eq!(root["items"][0]["name"], "Team Folder", "{root}");
    // A token Companion issued (no cached account) finds the team root itself.
    let bare = ferry_companion::token::issue(
        SECRET.as_bytes(),
        "dropbox",
        json!({"accessToken": access_of(&login.token)}),
        ferry_companion::token::now(),
        3600,
    );
    let (status, files) = get(&env, "/dropbox/list/%2Fteam%20folder", Some(&bare)).await;
    assert_eq!(status, 200, "{files}");
    let path = files["items"][0]["requestPath"]
        .as_str()
        .expect("path")
        .to_owned();
    let (status, answer) = post(
        &env,
        &format!("/dropbox/get/{path}"),
        Some(&login.token),
        tus_body(&env, "plan.bin", data.len()),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(sha256_hex(&common::download(&url).await), sha256_hex(&data));
}

#[tokio::test]
async fn logout_revokes_the_token_at_dropbox() {
    let env = start().await;
    let login = login(&env, "dropbox", APP, None).await;
    let access = access_of(&login.token);
    let (status, body) = get(&env, "/dropbox/logout", Some(&login.token)).await;
    assert_eq!((status, body), (200, json!({"ok": true, "revoked": true})));
    assert!(env.dropbox.state.was_revoked(&access));
    let (status, _) = get(&env, "/dropbox/list/", Some(&login.token)).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn bad_paths_are_refused_with_a_message_and_nothing_is_fetched() {
    let env = start().await;
    env.dropbox.state.add("/dir/a.txt", b"a".to_vec());
    let login = login(&env, "dropbox", APP, None).await;
    let calls = || env.dropbox.state.api_calls.load(Ordering::SeqCst);
    let before = calls();
    for path in [
        "%2Fdir%2F..%2Fsecret",
        "relative",
        "%2Fdir%2F",
        "%2F%2Fdir",
        "id%3A..%2Fx",
        "%2Fa%0Ab",
    ] {
        let (status, body) = get(&env, &format!("/dropbox/list/{path}"), Some(&login.token)).await;
        assert_eq!(
            (status, &body),
            (400, &json!({"message": "Invalid folder path"})),
            "{path}"
        );
        let (status, body) = post(
            &env,
            &format!("/dropbox/get/{path}"),
            Some(&login.token),
            tus_body(&env, "x", 1),
        )
        .await;
        assert_eq!(
            (status, &body),
            (400, &json!({"message": "Invalid file path"})),
            "{path}"
        );
    }
    assert_eq!(calls(), before, "nothing reached Dropbox");
    let (status, body) = post(
        &env,
        "/dropbox/get/%2Fdir",
        Some(&login.token),
        tus_body(&env, "x", 1),
    )
    .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (
            400,
            Some("A folder cannot be downloaded; open it and pick its files")
        )
    );
    let (status, body) = post(
        &env,
        "/dropbox/get/%2Fnope.txt",
        Some(&login.token),
        tus_body(&env, "x", 1),
    )
    .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (424, Some("HTTP 404: path/not_found/."))
    );
}
