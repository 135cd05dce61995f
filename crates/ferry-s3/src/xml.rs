//! S3's answers are small, flat XML documents; Ferry needs a handful of their fields, read
//! here instead of through a general XML parser.

/// The text of the first `<name>` element of `xml`, unescaped.
pub fn element(xml: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let start = xml.find(&open)? + open.len();
    let end = start + xml[start..].find(&format!("</{name}>"))?;
    Some(unescape(&xml[start..end]))
}

fn unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// `text` safe inside an element.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_read_and_unescaped() {
        let xml = "<Error><Code>InternalError</Code><Message>a &lt;b&gt; &amp; &quot;c&quot;</Message></Error>";
        assert_eq!(element(xml, "Code").as_deref(), Some("InternalError"));
        assert_eq!(element(xml, "Message").as_deref(), Some("a <b> & \"c\""));
        assert_eq!(element(xml, "Location"), None);
    }

    #[test]
    fn escaping_round_trips() {
        let raw = "\"etag\" <&>";
        let xml = format!("<ETag>{}</ETag>", escape(raw));
        assert_eq!(element(&xml, "ETag").as_deref(), Some(raw));
    }
}
