//! The fake Box's own checks: refresh tokens work once, marker paging with mini items.

use super::*;

async fn signed_in(b: &FakeBox) -> (reqwest::Client, String, String) {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let resp = http
        .get(b.auth_url())
        .query(&[
            ("client_id", "k"),
            ("response_type", "code"),
            ("redirect_uri", "http://app.test/box/redirect"),
            ("state", "s"),
        ])
        .send()
        .await
        .expect("authorize");
    let location = resp.headers()[header::LOCATION].to_str().expect("location");
    let code = url::Url::parse(location)
        .expect("url")
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .expect("code");
    let t: Value = http
        .post(b.token_url())
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", "k"),
            ("client_secret", "s"),
        ])
        .send()
        .await
        .expect("token")
        .json()
        .await
        .expect("json");
    let access = t["access_token"].as_str().expect("access").to_owned();
    let refresh = t["refresh_token"].as_str().expect("refresh").to_owned();
    (http, access, refresh)
}

#[tokio::test]
async fn refresh_tokens_work_once() {
    let b = FakeBox::start("k", "s").await;
    let (http, _, refresh) = signed_in(&b).await;
    let form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh.as_str()),
        ("client_id", "k"),
        ("client_secret", "s"),
    ];
    let first: Value = http
        .post(b.token_url())
        .form(&form)
        .send()
        .await
        .expect("refresh")
        .json()
        .await
        .expect("json");
    let rotated = first["refresh_token"].as_str().expect("rotated");
    assert_ne!(rotated, refresh);
    assert!(b.state.refresh_token_live(rotated));
    let again = http
        .post(b.token_url())
        .form(&form)
        .send()
        .await
        .expect("reuse");
    assert_eq!(again.status(), StatusCode::BAD_REQUEST);
    let body: Value = again.json().await.expect("json");
    assert_eq!(body["error"], "invalid_grant");
}

#[tokio::test]
async fn marker_paging_and_mini_items() {
    let b = FakeBox::start("k", "s").await;
    let (http, access, _) = signed_in(&b).await;
    for i in 0..5 {
        b.state.add_file("0", &format!("f{i}.txt"), vec![b'x'; i]);
    }
    let list = |marker: Option<String>| {
        let mut q = vec![
            ("usemarker", "true".to_owned()),
            ("limit", "2".to_owned()),
            ("fields", "name,size".to_owned()),
        ];
        if let Some(m) = marker {
            q.push(("marker", m));
        }
        http.get(b.server.url("/2.0/folders/0/items"))
            .bearer_auth(&access)
            .query(&q)
            .send()
    };
    let mut names = Vec::new();
    let mut marker = None;
    loop {
        let page: Value = list(marker)
            .await
            .expect("list")
            .json()
            .await
            .expect("json");
        for e in page["entries"].as_array().expect("entries") {
            assert!(e.get("size").is_some() && e.get("modified_at").is_none());
            names.push(e["name"].as_str().expect("name").to_owned());
        }
        match page["next_marker"].as_str() {
            Some(m) => marker = Some(m.to_owned()),
            None => break,
        }
    }
    assert_eq!(names, ["f0.txt", "f1.txt", "f2.txt", "f3.txt", "f4.txt"]);
}
