//! The popup's HTML pages. Values go into scripts as JSON with `<` escaped, so nothing a
//! provider or a URL carries can close the script element.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

fn page(status: StatusCode, title: &str, body: &str, script: &str) -> Response {
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><p>{body}</p><script>{script}</script></body></html>"
    );
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        html,
    )
        .into_response()
}

/// `value` as JSON safe inside a `<script>` element.
fn script_json(value: &Value) -> String {
    value
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// The websocket hand-off is done: the popup closes itself.
pub fn success() -> Response {
    page(
        StatusCode::OK,
        "Authentication successful",
        "Authentication successful. You may now close this page.",
        "window.close()",
    )
}

/// The legacy hand-off (released Uppy clients): `postMessage` of `data` to the opener at
/// `origin` only, then close.
pub fn post_message(data: &Value, origin: &str) -> Response {
    let script = format!(
        "var data = {}; var origin = {};\
         if (window.opener) {{ window.opener.postMessage(data, origin); window.close(); }}\
         else {{ document.body.textContent = 'Something went wrong: this window lost its opener (a Cross-Origin-Opener-Policy of same-origin on the page blocks it; use same-origin-allow-popups).'; }}",
        script_json(data),
        script_json(&Value::String(origin.to_owned()))
    );
    page(
        StatusCode::OK,
        "Authentication successful",
        "Authentication successful.",
        &script,
    )
}

/// `/send-token` without the socket's binding cookie yet: posts `data` to an opener at
/// `origin` (a browser drops it for any other opener), then loads `next` after half a second,
/// by when the page's socket has usually connected and set the cookie.
pub fn waiting(data: &Value, origin: &str, next: &str) -> Response {
    let script = format!(
        "var data = {}; var origin = {}; var next = {};\
         if (window.opener) {{ try {{ window.opener.postMessage(data, origin); }} catch (e) {{}} }}\
         setTimeout(function () {{ location.replace(next); }}, 500);",
        script_json(data),
        script_json(&Value::String(origin.to_owned())),
        script_json(&Value::String(next.to_owned()))
    );
    page(
        StatusCode::OK,
        "Finishing sign-in",
        "Finishing sign-in\u{2026}",
        &script,
    )
}

/// The login failed.
pub fn failure(status: StatusCode, message: &str) -> Response {
    let text = message
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    page(
        status,
        "Authentication failed",
        &format!("Authentication failed: {text}"),
        "",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_values_cannot_close_the_script() {
        let v = Value::String("</script><script>alert(1)</script>".into());
        let s = script_json(&v);
        assert!(!s.contains('<') && !s.contains('>'), "{s}");
    }
}
