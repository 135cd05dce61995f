//! Presigned POST (browser form upload straight to the bucket): the SigV4 POST policy, which
//! rusty-s3 does not implement. The policy is a base64 JSON document listing every form field
//! the browser may send; its signature is an HMAC-SHA256 with the usual SigV4 signing key.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use jiff::Timestamp;
use serde_json::{Value, json};
use sha2::Sha256;

/// What a POST form needs: fields to send before the file, in order.
#[derive(Debug)]
pub struct PostPolicy {
    /// Form fields (name, value), to be sent before the `file` field.
    pub fields: Vec<(String, String)>,
}

/// Inputs of a POST policy.
#[derive(Debug)]
pub struct PostPolicyInput<'a> {
    pub bucket: &'a str,
    pub key: &'a str,
    pub region: &'a str,
    pub access_key: &'a str,
    pub secret_key: &'a str,
    /// Extra fields the form carries (`Content-Type`, `x-amz-meta-*`), each pinned by the policy.
    pub extra: &'a [(String, String)],
    pub expires: Duration,
    pub now: Timestamp,
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    // HMAC accepts keys of any length.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

/// Signs a POST policy allowing exactly the given key and fields until `now + expires`.
pub fn sign_post_policy(input: &PostPolicyInput<'_>) -> PostPolicy {
    let day = input.now.strftime("%Y%m%d").to_string();
    let amz_date = input.now.strftime("%Y%m%dT%H%M%SZ").to_string();
    let expiration = (input.now + input.expires)
        .strftime("%Y-%m-%dT%H:%M:%S.000Z")
        .to_string();
    let credential = format!(
        "{}/{day}/{}/s3/aws4_request",
        input.access_key, input.region
    );

    let mut fields = vec![
        ("key".to_owned(), input.key.to_owned()),
        ("bucket".to_owned(), input.bucket.to_owned()),
    ];
    fields.extend(input.extra.iter().cloned());
    fields.push(("X-Amz-Algorithm".to_owned(), "AWS4-HMAC-SHA256".to_owned()));
    fields.push(("X-Amz-Credential".to_owned(), credential));
    fields.push(("X-Amz-Date".to_owned(), amz_date));

    let conditions: Vec<Value> = fields
        .iter()
        .map(|(k, v)| json!({ k.to_ascii_lowercase(): v }))
        .collect();
    let policy = json!({ "expiration": expiration, "conditions": conditions }).to_string();
    let policy = STANDARD.encode(policy);

    let signing_key = [input.region.as_bytes(), b"s3", b"aws4_request"]
        .iter()
        .fold(
            hmac(
                format!("AWS4{}", input.secret_key).as_bytes(),
                day.as_bytes(),
            ),
            |key, part| hmac(&key, part),
        );
    let signature: String = hmac(&signing_key, policy.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    fields.push(("Policy".to_owned(), policy));
    fields.push(("X-Amz-Signature".to_owned(), signature));
    PostPolicy { fields }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The signing-key and signature steps checked against AWS's published POST example
    /// (s3 "Example: Browser-Based Upload using HTTP POST (Using AWS Signature Version 4)").
    #[test]
    fn signature_matches_the_aws_example() {
        let policy = "eyAiZXhwaXJhdGlvbiI6ICIyMDE1LTEyLTMwVDEyOjAwOjAwLjAwMFoiLA0KICAiY29uZGl0aW9ucyI6IFsNCiAgICB7ImJ1Y2tldCI6ICJzaWd2NGV4YW1wbGVidWNrZXQifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRrZXkiLCAidXNlci91c2VyMS8iXSwNCiAgICB7ImFjbCI6ICJwdWJsaWMtcmVhZCJ9LA0KICAgIHsic3VjY2Vzc19hY3Rpb25fcmVkaXJlY3QiOiAiaHR0cDovL3NpZ3Y0ZXhhbXBsZWJ1Y2tldC5zMy5hbWF6b25hd3MuY29tL3N1Y2Nlc3NmdWxfdXBsb2FkLmh0bWwifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRDb250ZW50LVR5cGUiLCAiaW1hZ2UvIl0sDQogICAgeyJ4LWFtei1tZXRhLXV1aWQiOiAiMTQzNjUxMjM2NTEyNzQifSwNCiAgICB7IngtYW16LXNlcnZlci1zaWRlLWVuY3J5cHRpb24iOiAiQUVTMjU2In0sDQogICAgWyJzdGFydHMtd2l0aCIsICIkeC1hbXotbWV0YS10YWciLCAiIl0sDQoNCiAgICB7IngtYW16LWNyZWRlbnRpYWwiOiAiQUtJQUlPU0ZPRE5ON0VYQU1QTEUvMjAxNTEyMjkvdXMtZWFzdC0xL3MzL2F3czRfcmVxdWVzdCJ9LA0KICAgIHsieC1hbXotYWxnb3JpdGhtIjogIkFXUzQtSE1BQy1TSEEyNTYifSwNCiAgICB7IngtYW16LWRhdGUiOiAiMjAxNTEyMjlUMDAwMDAwWiIgfQ0KICBdDQp9";
        let key = [b"us-east-1".as_slice(), b"s3", b"aws4_request"]
            .iter()
            .fold(
                hmac(b"AWS4wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", b"20151229"),
                |key, part| hmac(&key, part),
            );
        let sig: String = hmac(&key, policy.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            sig,
            "8afdbf4008c03f22c2cd3cdb72e4afbb1f6a588f3255ac628749a66d7f09699e"
        );
    }

    #[test]
    fn every_field_is_pinned_by_the_policy() {
        let now: Timestamp = "2026-11-21T10:00:00Z".parse().expect("timestamp");
        let extra = [("Content-Type".to_owned(), "image/png".to_owned())];
        let signed = sign_post_policy(&PostPolicyInput {
            bucket: "b",
            key: "k/1-a.png",
            region: "r",
            access_key: "AK",
            secret_key: "SK",
            extra: &extra,
            expires: Duration::from_secs(300),
            now,
        });
        let get = |name: &str| {
            signed
                .fields
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .expect(name)
        };
        let policy: Value =
            serde_json::from_slice(&STANDARD.decode(get("Policy")).expect("b64")).expect("json");
        assert_eq!(policy["expiration"], "2026-11-21T10:05:00.000Z");
        let conditions = policy["conditions"].as_array().expect("array");
        assert!(conditions.contains(&json!({"key": "k/1-a.png"})));
        assert!(conditions.contains(&json!({"content-type": "image/png"})));
        assert!(conditions.contains(&json!({"x-amz-credential": "AK/20261121/r/s3/aws4_request"})));
        assert_eq!(get("X-Amz-Date"), "20261121T100000Z");
        assert_eq!(get("X-Amz-Signature").len(), 64);
    }
}
