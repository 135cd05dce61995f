//! The SSRF table: with local URLs not allowed, none of these URL forms (literal IPs in every
//! notation, IPv6 forms embedding loopback, names resolving to private addresses, redirects
//! into private space, other schemes) may make the companion connect to a sink on loopback.

mod common;

use common::*;
use ferry_companion::CompanionConfig;
use ferry_companion::egress::StaticResolver;
use ferry_testkit::origin::{Origin, OriginOptions, Sink};
use serde_json::json;

fn resolver() -> StaticResolver {
    StaticResolver::default()
        .with("localhost", &[ip("127.0.0.1")])
        .with("evil.test", &[ip("127.0.0.1")])
        .with("mapped.test", &[ip("::ffff:127.0.0.1")])
        .with("v6.test", &[ip("::1")])
        .with("ten.test", &[ip("10.0.0.1")])
        .with("both.test", &[ip("10.0.0.1"), ip("127.0.0.1")])
        .with("meta.test", &[ip("169.254.169.254")])
        .with("cgnat.test", &[ip("100.64.0.1")])
        .with("nat64.test", &[ip("64:ff9b::7f00:1")])
}

fn url_forms(p: u16, redirector: &str) -> Vec<String> {
    let r = |to: &str| format!("{redirector}/redirect?to={}", urlencode(to));
    let mut forms: Vec<String> = [
        "http://127.0.0.1:{p}/",
        "http://localhost:{p}/",
        "http://2130706433:{p}/",
        "http://0x7f000001:{p}/",
        "http://0177.0.0.1:{p}/",
        "http://0x7f.0.0.1:{p}/",
        "http://127.1:{p}/",
        "http://0177.1:{p}/",
        "http://127.000.000.001:{p}/",
        "http://[::ffff:127.0.0.1]:{p}/",
        "http://[::ffff:7f00:1]:{p}/",
        "http://[0:0:0:0:0:ffff:127.0.0.1]:{p}/",
        "http://[::127.0.0.1]:{p}/",
        "http://[64:ff9b::7f00:1]:{p}/",
        "http://[2002:7f00:1::]:{p}/",
        "http://[::1]:{p}/",
        "http://[::]:{p}/",
        "http://0.0.0.0:{p}/",
        "http://0:{p}/",
        "http://evil.test:{p}/",
        "http://EVIL.TEST.:{p}/",
        "http://mapped.test:{p}/",
        "http://v6.test:{p}/",
        "http://ten.test:{p}/",
        "http://both.test:{p}/",
        "http://meta.test/latest/meta-data/",
        "http://nat64.test:{p}/",
        "http://cgnat.test:{p}/",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.64.0.1:{p}/",
        "http://10.0.0.1:{p}/",
        "http://192.168.0.1:{p}/",
        "http://[fe80::1]:{p}/",
        "http://[fc00::1]:{p}/",
        "http://user:pass@127.0.0.1:{p}/",
        "file:///etc/passwd",
        "gopher://127.0.0.1:{p}/",
        "ftp://127.0.0.1:{p}/",
    ]
    .iter()
    .map(|f| f.replace("{p}", &p.to_string()))
    .collect();
    forms.push(r(&format!("http://127.0.0.1:{p}/")));
    forms.push(r(&format!("http://evil.test:{p}/")));
    forms.push(r(&format!("http://[::ffff:127.0.0.1]:{p}/")));
    forms.push(r(&format!("http://2130706433:{p}/")));
    forms.push(r(&r(&format!("http://127.0.0.1:{p}/"))));
    forms
}

fn urlencode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

#[tokio::test]
async fn no_url_form_reaches_a_loopback_sink() {
    let sink = Sink::start().await;
    // The redirector stands for a public host: it lives on 127.0.0.2, exempted by address.
    let redirector = Origin::start_on("127.0.0.2:0", vec![1; 10], OriginOptions::default()).await;
    let tus = TusDest::start().await;
    let config = CompanionConfig {
        allow_local_urls: false,
        exempt_ips: vec![ip("127.0.0.2")],
        upload_urls: vec![tus.origin()],
        ..CompanionConfig::default()
    };
    let companion = companion(config, resolver()).await;
    let forms = url_forms(sink.addr.port(), &redirector.server.url(""));
    assert!(forms.len() >= 25);
    for url in &forms {
        let (status, body) = post_json(&companion, "/url/meta", json!({ "url": url })).await;
        assert_eq!(status, 400, "{url}: {body}");
        assert!(body["message"].is_string(), "{url}: {body}");
        // The transfer route refuses it too, or fails it without connecting.
        let req = json!({"url": url, "protocol": "tus", "endpoint": tus.endpoint(), "size": 10});
        let (status, answer) = post_json(&companion, "/url/get", req).await;
        if status == 200 {
            let token = answer["token"].as_str().expect("token");
            let mut ws = socket(&companion, token).await;
            let (last, _) = finish(&mut ws).await;
            assert_eq!(last["action"], "error", "{url}: {last}");
        } else {
            assert_eq!(status, 400, "{url}: {answer}");
        }
    }
    assert_eq!(sink.connections(), 0);
    // The exempt redirector was reached: the refusals above happened at the redirect hop.
    assert!(redirector.redirects() >= 5, "{}", redirector.redirects());
}

#[tokio::test]
async fn the_sink_does_count_when_local_urls_are_allowed() {
    let sink = Sink::start().await;
    let companion = companion(config(&[]), resolver()).await;
    let url = format!("http://evil.test:{}/", sink.addr.port());
    let (status, _) = post_json(&companion, "/url/meta", json!({ "url": url })).await;
    assert_eq!(status, 502);
    assert!(sink.connections() >= 1);
}

#[tokio::test]
async fn a_redirect_to_a_public_file_is_followed() {
    let origin = Origin::start_on("127.0.0.2:0", vec![7; 1234], OriginOptions::default()).await;
    let config = CompanionConfig {
        exempt_ips: vec![ip("127.0.0.2")],
        ..CompanionConfig::default()
    };
    let companion = companion(config, no_names()).await;
    let to = urlencode(&origin.file_url());
    let url = origin.server.url(&format!("/redirect?to={to}"));
    let (status, body) = post_json(&companion, "/url/meta", json!({ "url": url })).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"name": "file", "type": "application/octet-stream", "size": 1234})
    );
}

#[tokio::test]
async fn redirect_chains_are_capped() {
    let origin = Origin::start_on("127.0.0.2:0", vec![7; 10], OriginOptions::default()).await;
    let config = CompanionConfig {
        exempt_ips: vec![ip("127.0.0.2")],
        ..CompanionConfig::default()
    };
    let companion = companion(config, no_names()).await;
    let chain = |hops: usize| {
        let mut url = origin.file_url();
        for _ in 0..hops {
            url = origin
                .server
                .url(&format!("/redirect?to={}", urlencode(&url)));
        }
        url
    };
    let (status, _) = post_json(&companion, "/url/meta", json!({ "url": chain(5) })).await;
    assert_eq!(status, 200);
    let (status, body) = post_json(&companion, "/url/meta", json!({ "url": chain(6) })).await;
    assert_eq!((status, body), (400, json!({"message": "URL not allowed"})));
}
