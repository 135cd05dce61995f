//! The server-side S3 calls behind the multipart routes, signed with rusty-s3 and sent with
//! reqwest: CreateMultipartUpload, ListParts (every page), CompleteMultipartUpload (including the
//! "error inside a 200" answer) and AbortMultipartUpload.

use std::time::Duration;

use axum::http::StatusCode;
use rusty_s3::S3Action;
use rusty_s3::actions::ListParts;
use serde::Serialize;

use super::S3State;
use super::error::S3Error;

/// Signed server-side requests only need to live long enough to be sent.
const CALL_TTL: Duration = Duration::from_secs(60);

/// One uploaded part, in Companion's shape.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Part {
    #[serde(rename = "PartNumber")]
    pub number: u16,
    #[serde(rename = "Size")]
    pub size: u64,
    #[serde(rename = "ETag")]
    pub etag: String,
}

/// The text of the first `<name>` element of `xml`, unescaped (S3 answers are small and flat).
pub fn xml_element(xml: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let start = xml.find(&open)? + open.len();
    let end = start + xml[start..].find(&format!("</{name}>"))?;
    Some(
        xml[start..end]
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&"),
    )
}

/// Sends a signed request and returns the body of a 2xx answer, or the store's error.
async fn send(request: reqwest::RequestBuilder, what: &str) -> Result<String, S3Error> {
    let response = request
        .send()
        .await
        .map_err(|e| S3Error::Upstream(format!("{what}: {e}")))?;
    let status = response.status();
    let body = response
        .text()
        .await
        .map_err(|e| S3Error::Upstream(format!("{what}: {e}")))?;
    if status.is_success() {
        return Ok(body);
    }
    let code = xml_element(&body, "Code").unwrap_or_default();
    let message = xml_element(&body, "Message").unwrap_or_else(|| code.clone());
    if status.is_client_error() {
        // The store's own words about the client's input (unknown upload, bad part...) are safe
        // and useful to show; 403 from the store means our credentials, which is our fault.
        if status != reqwest::StatusCode::FORBIDDEN {
            let status = StatusCode::from_u16(status.as_u16()).unwrap_or(StatusCode::BAD_REQUEST);
            return Err(S3Error::Store {
                status,
                message: format!("{what}: {message}"),
            });
        }
    }
    Err(S3Error::Upstream(format!(
        "{what}: {status} {code} {message}"
    )))
}

/// Starts a multipart upload; returns its upload id.
pub async fn create(
    state: &S3State,
    key: &str,
    headers: &[(String, String)],
) -> Result<String, S3Error> {
    let mut action = state
        .bucket
        .create_multipart_upload(Some(&state.credentials), key);
    for (name, value) in headers {
        action.headers_mut().insert(name.clone(), value.clone());
    }
    let url = action.sign(CALL_TTL);
    let mut request = state.http.post(url);
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let body = send(request, "CreateMultipartUpload").await?;
    xml_element(&body, "UploadId")
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            S3Error::Upstream(format!(
                "CreateMultipartUpload answered no UploadId: {body}"
            ))
        })
}

/// Every uploaded part, following ListParts' pages.
pub async fn list_parts(state: &S3State, key: &str, upload_id: &str) -> Result<Vec<Part>, S3Error> {
    let mut parts = Vec::new();
    let mut marker: Option<u16> = None;
    // At most 10,000 parts exist; 1,000 per page means 11 pages at most, plus a guard.
    for _ in 0..20 {
        let mut action = state
            .bucket
            .list_parts(Some(&state.credentials), key, upload_id);
        if let Some(marker) = marker {
            action.set_part_number_marker(marker);
        }
        let body = send(state.http.get(action.sign(CALL_TTL)), "ListParts").await?;
        let page = ListParts::parse_response(&body)
            .map_err(|e| S3Error::Upstream(format!("ListParts answer: {e}")))?;
        let before = parts.len();
        parts.extend(page.parts.into_iter().map(|p| Part {
            number: p.number,
            size: p.size,
            etag: p.etag,
        }));
        let truncated = xml_element(&body, "IsTruncated").is_some_and(|t| t == "true");
        match page.next_part_number_marker {
            Some(next) if truncated && parts.len() > before && Some(next) != marker => {
                marker = Some(next)
            }
            _ => return Ok(parts),
        }
    }
    Err(S3Error::Upstream("ListParts did not end".to_owned()))
}

/// Completes a multipart upload from `(part number, etag)` pairs sorted by part number;
/// returns the object's location.
pub async fn complete(
    state: &S3State,
    key: &str,
    upload_id: &str,
    parts: &[(u16, String)],
) -> Result<String, S3Error> {
    let mut xml = String::from("<CompleteMultipartUpload>");
    for (number, etag) in parts {
        let etag = etag
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        xml.push_str(&format!(
            "<Part><PartNumber>{number}</PartNumber><ETag>{etag}</ETag></Part>"
        ));
    }
    xml.push_str("</CompleteMultipartUpload>");
    let etags = std::iter::empty::<&str>();
    let url = state
        .bucket
        .complete_multipart_upload(Some(&state.credentials), key, upload_id, etags)
        .sign(CALL_TTL);
    let body = send(state.http.post(url).body(xml), "CompleteMultipartUpload").await?;
    // S3 may answer 200 and report the failure in the body.
    if body.contains("<Error>") {
        let message = xml_element(&body, "Message")
            .or_else(|| xml_element(&body, "Code"))
            .unwrap_or_default();
        return Err(S3Error::Store {
            status: StatusCode::BAD_GATEWAY,
            message: format!("CompleteMultipartUpload failed: {message}"),
        });
    }
    if !body.contains("CompleteMultipartUploadResult") {
        return Err(S3Error::Upstream(format!(
            "CompleteMultipartUpload answered: {body}"
        )));
    }
    Ok(xml_element(&body, "Location").unwrap_or_else(|| state.bucket.object_url(key).to_string()))
}

/// Aborts a multipart upload (its parts are deleted by the store).
pub async fn abort(state: &S3State, key: &str, upload_id: &str) -> Result<(), S3Error> {
    let url = state
        .bucket
        .abort_multipart_upload(Some(&state.credentials), key, upload_id)
        .sign(CALL_TTL);
    send(state.http.delete(url), "AbortMultipartUpload")
        .await
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::xml_element;

    #[test]
    fn elements_are_read_and_unescaped() {
        let xml = "<Error><Code>InternalError</Code><Message>a &lt;b&gt; &amp; &quot;c&quot;</Message></Error>";
        assert_eq!(xml_element(xml, "Code").as_deref(), Some("InternalError"));
        assert_eq!(
            xml_element(xml, "Message").as_deref(),
            Some("a <b> & \"c\"")
        );
        assert_eq!(xml_element(xml, "Location"), None);
    }
}
