//! Filters the `headers` a client asks the companion to forward to a destination: no Host,
//! Cookie, Authorization (unless allowed), hop-by-hop or Proxy-* headers, nothing the transfer
//! itself sets (tus and length headers), and nothing that is not a valid header name/value.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};

const BLOCKED: &[&str] = &[
    "host",
    "cookie",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "expect",
    "tus-resumable",
    "forwarded",
];

/// The forwardable subset of `headers`; `allow_authorization` lets `Authorization` through.
pub fn filter(headers: Option<&Map<String, Value>>, allow_authorization: bool) -> HeaderMap {
    let mut out = HeaderMap::new();
    let Some(headers) = headers else {
        return out;
    };
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        let blocked = BLOCKED.contains(&lower.as_str())
            || lower.starts_with("proxy-")
            || lower.starts_with("upload-")
            || lower.starts_with("x-forwarded-")
            || (lower == "authorization" && !allow_authorization);
        let Some(value) = value.as_str() else {
            continue;
        };
        if blocked || value.contains(['\r', '\n', '\0']) {
            continue;
        }
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(lower.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            out.append(n, v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_dangerous_headers() {
        let input = serde_json::json!({
            "Host": "evil", "Cookie": "a=b", "Authorization": "Bearer x",
            "Connection": "close", "Proxy-Authorization": "x", "Upload-Offset": "5",
            "X-Ok": "yes", "X-Crlf": "a\r\nInjected: 1", "Bad Name": "v", "X-Num": 5
        });
        let map = input.as_object().expect("object");
        let out = filter(Some(map), false);
        assert_eq!(out.len(), 1);
        assert_eq!(out.get("x-ok").map(|v| v.as_bytes()), Some(&b"yes"[..]));
        let with_auth = filter(Some(map), true);
        assert!(with_auth.contains_key("authorization"));
    }
}
