//! Drive's listing: shared-with-me, every shared drive and My Drive paged to the end; Workspace
//! files exported or listed unsupported; thumbnails; the providers the widget is told about.

use super::*;

#[tokio::test]
async fn root_lists_shared_with_me_every_shared_drive_then_my_drive_in_pages() {
    let env = start().await;
    let g = &env.google.state;
    let drives: Vec<String> = (0..105)
        .map(|i| g.add_drive(&format!("Team {i:03}")))
        .collect();
    for name in ["zeta.txt", "Alpha.txt", "beta.bin"] {
        g.add_file("root", name, "text/plain", name.as_bytes().to_vec());
    }
    let folder = g.add_folder("root", "Photos");
    g.add_folder("root", "Archive");
    g.add_file(&folder, "inside.txt", "text/plain", b"in".to_vec());
    g.add_shortcut("root", "Link to Photos", &folder);
    for i in 0..7 {
        g.add_file(
            "root",
            &format!("n{i}.dat"),
            "application/octet-stream",
            vec![i; 10],
        );
    }
    g.add_shared_with_me("from-a-friend.pdf", "application/pdf", b"%PDF".to_vec());
    let login = login(&env, "drive", APP, None).await;
    let (items, pages) = list_all(&env, "drive", "root", &login.token).await;
    // 1 virtual folder + 105 drives + 13 entries of My Drive in pages of 5.
    assert_eq!(items.len(), 1 + 105 + 13);
    assert_eq!(pages, 3);
    assert_eq!(items[0]["id"], "shared-with-me");
    assert_eq!(items[0]["isFolder"], true);
    assert_eq!(items[0]["name"], "Shared with me");
    for (i, d) in drives.iter().enumerate() {
        assert_eq!(items[1 + i]["requestPath"], d.as_str());
        assert_eq!(items[1 + i]["custom"]["isSharedDrive"], true);
    }
    let mine: Vec<(&str, bool)> = items[106..]
        .iter()
        .map(|i| {
            (
                i["name"].as_str().expect("name"),
                i["isFolder"].as_bool().expect("bool"),
            )
        })
        .collect();
    let folders: Vec<&str> = mine.iter().filter(|(_, f)| *f).map(|(n, _)| *n).collect();
    assert_eq!(
        mine.iter().take_while(|(_, f)| *f).count(),
        folders.len(),
        "folders first on each page: {mine:?}"
    );
    assert!(folders.contains(&"Photos") && folders.contains(&"Archive"));
    // The shortcut browses as its target folder.
    let shortcut = items
        .iter()
        .find(|i| i["name"] == "Link to Photos")
        .expect("shortcut");
    assert_eq!(
        (
            shortcut["isFolder"].as_bool(),
            shortcut["requestPath"].as_str()
        ),
        (Some(true), Some(folder.as_str()))
    );
    let (inside, _) = list_all(&env, "drive", &folder, &login.token).await;
    assert_eq!(
        inside.iter().map(|i| i["name"].clone()).collect::<Vec<_>>(),
        vec![json!("inside.txt")]
    );
    // A file's shape.
    let file = items
        .iter()
        .find(|i| i["name"] == "Alpha.txt")
        .expect("file");
    for key in [
        "isFolder",
        "icon",
        "id",
        "name",
        "requestPath",
        "modifiedDate",
        "mimeType",
        "size",
        "thumbnail",
    ] {
        assert!(file.get(key).is_some(), "{key} missing in {file}");
    }
    assert_eq!(
        (file["size"].as_u64(), file["mimeType"].as_str()),
        (Some(9), Some("text/plain"))
    );
    // Uppy lists the root as `list/` (no id) too.
    let (status, first) = get(&env, "/drive/list/", Some(&login.token)).await;
    assert_eq!(
        (status, first["items"][0]["id"].as_str()),
        (200, Some("shared-with-me"))
    );
    let (shared, _) = list_all(&env, "drive", "shared-with-me", &login.token).await;
    assert_eq!(shared.len(), 1);
    assert_eq!(shared[0]["name"], "from-a-friend.pdf");
}

#[tokio::test]
async fn workspace_files_export_with_extension_or_are_listed_unsupported() {
    let env = start().await;
    let g = &env.google.state;
    let doc_bytes = random_bytes(70_000);
    let doc = g.add_file(
        "root",
        "Quarterly report",
        "application/vnd.google-apps.document",
        doc_bytes.clone(),
    );
    let big = g.add_file(
        "root",
        "Huge sheet",
        "application/vnd.google-apps.spreadsheet",
        random_bytes(200_000),
    );
    let form = g.add_file(
        "root",
        "Survey",
        "application/vnd.google-apps.form",
        Vec::new(),
    );
    g.add_file(
        "root",
        "Deck",
        "application/vnd.google-apps.presentation",
        b"pptx".to_vec(),
    );
    g.add_file(
        "root",
        "Sketch",
        "application/vnd.google-apps.drawing",
        b"%PDF".to_vec(),
    );
    g.export_limit.store(100_000, Ordering::SeqCst);
    let login = login(&env, "drive", APP, None).await;
    let (items, _) = list_all(&env, "drive", "root", &login.token).await;
    let by_id = |id: &str| items.iter().find(|i| i["id"] == id).cloned().expect("item");
    let d = by_id(&doc);
    assert_eq!(
        (d["name"].as_str(), d["mimeType"].as_str()),
        (Some("Quarterly report.docx"), Some(DOCX))
    );
    let names: Vec<&str> = items.iter().filter_map(|i| i["name"].as_str()).collect();
    assert!(
        names.contains(&"Deck.pptx")
            && names.contains(&"Sketch.pdf")
            && names.contains(&"Huge sheet.xlsx"),
        "{names:?}"
    );
    let f = by_id(&form);
    assert_eq!(
        (f["custom"]["unsupported"].as_bool(), f["name"].as_str()),
        (Some(true), Some("Survey"))
    );

    let (status, answer) = post(
        &env,
        &format!("/drive/get/{doc}"),
        Some(&login.token),
        tus_body(&env, "Quarterly report.docx", 0),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let url = transfer(&env, answer["token"].as_str().expect("token")).await;
    assert_eq!(
        sha256_hex(&common::download(&url).await),
        sha256_hex(&doc_bytes)
    );

    let (status, answer) = post(
        &env,
        &format!("/drive/get/{big}"),
        Some(&login.token),
        tus_body(&env, "x", 0),
    )
    .await;
    assert_eq!(status, 424, "{answer}");
    assert_eq!(
        answer["message"],
        "This Google document is too large to be exported (Google exports at most 10 MB)"
    );
    let (status, answer) = post(
        &env,
        &format!("/drive/get/{form}"),
        Some(&login.token),
        tus_body(&env, "x", 0),
    )
    .await;
    assert_eq!(
        (status, answer["message"].as_str()),
        (
            400,
            Some("Google Forms cannot be downloaded from Google Drive")
        )
    );
}

#[tokio::test]
async fn thumbnails_load_through_ferry_with_a_plain_img_request() {
    let env = start().await;
    let id = env
        .google
        .state
        .add_file("root", "cat.png", "image/png", b"\x89PNG...".to_vec());
    let login = login(&env, "drive", APP, None).await;
    let (_, page) = get(&env, "/drive/list/root", Some(&login.token)).await;
    let item = page["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["id"] == id.as_str())
        .cloned()
        .expect("item");
    let thumb = item["thumbnail"].as_str().expect("thumbnail");
    assert!(
        thumb.starts_with(&env.companion.url(&format!("/drive/thumbnail/{id}?t="))),
        "{thumb}"
    );
    let r = reqwest::get(thumb).await.expect("thumbnail");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");
    assert_eq!(
        r.text().await.expect("body"),
        format!("PNG thumbnail of {id}")
    );
    let tampered = thumb.replace("?t=", "?t=00");
    assert_eq!(
        reqwest::get(tampered).await.expect("thumbnail").status(),
        401
    );
    // A grant loads its own file's thumbnail only.
    let other = env
        .google
        .state
        .add_file("root", "dog.png", "image/png", b"\x89PNG...".to_vec());
    let borrowed = thumb.replace(
        &format!("/thumbnail/{id}?"),
        &format!("/thumbnail/{other}?"),
    );
    assert_ne!(borrowed, thumb);
    let r = reqwest::get(borrowed).await.expect("thumbnail");
    assert_eq!(r.status(), 401);
    assert_eq!(
        r.json::<Value>().await.expect("json")["message"],
        "Unauthorized"
    );
}

#[tokio::test]
async fn enabled_providers_are_listed_for_the_widget() {
    let env = start().await;
    let (status, body) = get(&env, "/providers", None).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"providers": [
            {"id": "box", "name": "Box", "rootFolder": "0", "supportsRefreshToken": true},
            {"id": "drive", "name": "Google Drive", "rootFolder": "root", "supportsRefreshToken": true},
            {"id": "dropbox", "name": "Dropbox", "rootFolder": "", "supportsRefreshToken": true},
            {"id": "facebook", "name": "Facebook", "rootFolder": "", "supportsRefreshToken": false},
            {"id": "instagram", "name": "Instagram", "rootFolder": "recent", "supportsRefreshToken": true},
            {"id": "onedrive", "name": "OneDrive", "rootFolder": "root", "supportsRefreshToken": true},
            {"id": "unsplash", "name": "Unsplash", "rootFolder": "", "supportsRefreshToken": false, "search": true},
            {"id": "zoom", "name": "Zoom", "rootFolder": "", "supportsRefreshToken": true},
        ]})
    );
}
