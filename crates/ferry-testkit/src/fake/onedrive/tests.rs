//! The fake Microsoft's own check: children pages with absolute next links, `/content`
//! redirects, and a refused bearer token.

use super::*;

#[tokio::test]
async fn children_page_with_absolute_next_links_and_content_redirects() {
    let fake = FakeOneDrive::start("k", "s").await;
    let g = &fake.state;
    for i in 0..5u8 {
        g.add_file(
            &g.my_drive,
            "root",
            &format!("{i}.jpg"),
            "image/jpeg",
            vec![i; 3],
        );
    }
    let token = "EwBtest".to_owned();
    lock(&g.access).insert(token.clone());
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let mut next = Some(
        fake.server
            .url("/v1.0/me/drive/root/children?$top=2&$expand=thumbnails"),
    );
    let mut ids = Vec::new();
    while let Some(url) = next {
        let page: Value = http
            .get(&url)
            .bearer_auth(&token)
            .send()
            .await
            .expect("page")
            .json()
            .await
            .expect("json");
        for v in page["value"].as_array().expect("value") {
            assert!(v["thumbnails"][0]["medium"]["url"].is_string());
            ids.push(v["id"].as_str().expect("id").to_owned());
        }
        next = page["@odata.nextLink"].as_str().map(str::to_owned);
    }
    assert_eq!(ids.len(), 5);
    let r = http
        .get(fake.server.url(&format!(
            "/v1.0/drives/{}/items/{}/content",
            g.my_drive, ids[4]
        )))
        .bearer_auth(&token)
        .send()
        .await
        .expect("content");
    assert_eq!(r.status(), StatusCode::FOUND);
    let location = r.headers()[header::LOCATION]
        .to_str()
        .expect("location")
        .to_owned();
    let bytes = reqwest::get(&location)
        .await
        .expect("dl")
        .bytes()
        .await
        .expect("bytes");
    assert_eq!(&bytes[..], &[4u8; 3]);
    let r = http
        .get(fake.server.url("/v1.0/me"))
        .send()
        .await
        .expect("me");
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
}
