//! The PROPFIND request body and the parser of its `207 Multi-Status` answer (RFC 4918 §9.1,
//! §14.16): one [`Entry`] per `DAV:response`, with the properties of its `200` propstat.
//!
//! The answer comes from a server the person typed in, so it is bounded before and while it
//! is read: the caller caps the body's size ([`MAX_BODY`]), and the parser refuses a document
//! type declaration (no entity can expand), references other than XML's five and character
//! references, nesting deeper than [`MAX_DEPTH`], and more than [`MAX_ENTRIES`] responses.
//! Elements are matched by namespace (`DAV:`), whatever prefix the server chose.

use quick_xml::NsReader;
use quick_xml::events::Event;
use quick_xml::name::{Namespace, ResolveResult};

/// Largest PROPFIND answer read: about 20,000 entries of a Nextcloud folder.
pub const MAX_BODY: usize = 16 * 1024 * 1024;
/// Deepest element nesting accepted (a multistatus needs 6).
pub const MAX_DEPTH: usize = 32;
/// Most `DAV:response` elements accepted in one answer.
pub const MAX_ENTRIES: usize = 50_000;
/// Longest text kept for one property (hrefs, dates, types).
const MAX_TEXT: usize = 8 * 1024;

/// What a PROPFIND asks for: only the properties a listing shows.
pub const PROPFIND_BODY: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:getcontentlength/><d:getlastmodified/><d:getcontenttype/></d:prop></d:propfind>"#;

const DAV: Namespace<'static> = Namespace("DAV:");

/// One resource of a multistatus answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// `DAV:href` as sent (an absolute path or URL, percent-encoded).
    pub href: String,
    pub is_folder: bool,
    pub size: Option<u64>,
    /// `DAV:getlastmodified` as sent (an HTTP date).
    pub modified: Option<String>,
    pub mime: Option<String>,
}

/// Why an answer is not a listing Ferry reads.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Refused {
    #[error("The WebDAV answer is not well-formed XML")]
    Malformed,
    #[error("The WebDAV answer declares a document type")]
    DocType,
    #[error("The WebDAV answer is nested too deeply")]
    TooDeep,
    #[error("The WebDAV folder has too many entries")]
    TooMany,
    #[error("The WebDAV answer is not a multistatus")]
    NotMultistatus,
}

/// The DAV: elements the parser follows; anything else is [`Tag::Other`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tag {
    Multistatus,
    Response,
    Href,
    Propstat,
    Prop,
    Status,
    ResourceType,
    Collection,
    Length,
    Modified,
    Type,
    Other,
}

fn tag(ns: &ResolveResult<'_>, local: &str) -> Tag {
    if *ns != ResolveResult::Bound(DAV) {
        return Tag::Other;
    }
    match local {
        "multistatus" => Tag::Multistatus,
        "response" => Tag::Response,
        "href" => Tag::Href,
        "propstat" => Tag::Propstat,
        "prop" => Tag::Prop,
        "status" => Tag::Status,
        "resourcetype" => Tag::ResourceType,
        "collection" => Tag::Collection,
        "getcontentlength" => Tag::Length,
        "getlastmodified" => Tag::Modified,
        "getcontenttype" => Tag::Type,
        _ => Tag::Other,
    }
}

/// Properties of one propstat, kept until its status says whether they count.
#[derive(Default)]
struct Props {
    is_folder: bool,
    length: String,
    modified: String,
    mime: String,
    status: String,
}

/// Parses a multistatus answer into its entries.
pub fn parse(body: &str) -> Result<Vec<Entry>, Refused> {
    let mut reader = NsReader::from_str(body);
    reader.config_mut().expand_empty_elements = true;
    let mut path: Vec<Tag> = Vec::new();
    let mut entries = Vec::new();
    let mut entry = Entry::default();
    let mut props = Props::default();
    let mut saw_root = false;
    loop {
        let (ns, event) = reader
            .read_resolved_event()
            .map_err(|_| Refused::Malformed)?;
        match event {
            Event::Start(e) => {
                let t = tag(&ns, e.local_name().as_ref());
                if path.len() >= MAX_DEPTH {
                    return Err(Refused::TooDeep);
                }
                match (path.as_slice(), t) {
                    ([], Tag::Multistatus) => saw_root = true,
                    ([], _) => return Err(Refused::NotMultistatus),
                    ([Tag::Multistatus], Tag::Response) => {
                        if entries.len() >= MAX_ENTRIES {
                            return Err(Refused::TooMany);
                        }
                        entry = Entry::default();
                    }
                    ([Tag::Multistatus, Tag::Response], Tag::Propstat) => props = Props::default(),
                    ([.., Tag::Prop, Tag::ResourceType], Tag::Collection) => props.is_folder = true,
                    _ => {}
                }
                path.push(t);
            }
            Event::End(_) => {
                match path.as_slice() {
                    [Tag::Multistatus, Tag::Response] => entries.push(std::mem::take(&mut entry)),
                    [Tag::Multistatus, Tag::Response, Tag::Propstat] => {
                        commit(&mut entry, std::mem::take(&mut props));
                    }
                    _ => {}
                }
                path.pop();
            }
            Event::Text(t) => text(&path, &t.xml10_content(), &mut entry, &mut props),
            Event::CData(t) => {
                text(&path, &t.into_inner(), &mut entry, &mut props);
            }
            Event::GeneralRef(r) => {
                let resolved = match r.resolve_char_ref().map_err(|_| Refused::Malformed)? {
                    Some(c) => c.to_string(),
                    None => quick_xml::escape::resolve_predefined_entity(&r.xml10_content())
                        .ok_or(Refused::Malformed)?
                        .to_owned(),
                };
                text(&path, &resolved, &mut entry, &mut props);
            }
            Event::DocType(_) => return Err(Refused::DocType),
            Event::Eof => break,
            // Declarations, comments, processing instructions; empty elements are expanded.
            _ => {}
        }
    }
    if !saw_root || !path.is_empty() {
        return Err(Refused::NotMultistatus);
    }
    Ok(entries)
}

/// Appends text to the property the parser is inside of, if it keeps that one.
fn text(path: &[Tag], s: &str, entry: &mut Entry, props: &mut Props) {
    let slot = match path {
        [Tag::Multistatus, Tag::Response, Tag::Href] => &mut entry.href,
        [Tag::Multistatus, Tag::Response, Tag::Propstat, Tag::Status] => &mut props.status,
        [.., Tag::Propstat, Tag::Prop, Tag::Length] => &mut props.length,
        [.., Tag::Propstat, Tag::Prop, Tag::Modified] => &mut props.modified,
        [.., Tag::Propstat, Tag::Prop, Tag::Type] => &mut props.mime,
        _ => return,
    };
    if slot.len() + s.len() <= MAX_TEXT {
        slot.push_str(s);
    }
}

/// Keeps a propstat's properties when its status is `HTTP/1.1 200 OK` (a 404 propstat lists
/// the properties the resource does not have).
fn commit(entry: &mut Entry, props: Props) {
    let ok = props.status.split_whitespace().nth(1) == Some("200");
    if !ok {
        return;
    }
    entry.is_folder |= props.is_folder;
    let nonempty = |s: String| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
    if let Some(n) = nonempty(props.length).and_then(|l| l.parse().ok()) {
        entry.size = Some(n);
    }
    entry.modified = nonempty(props.modified).or(entry.modified.take());
    entry.mime = nonempty(props.mime).or(entry.mime.take());
}

#[cfg(test)]
mod tests {
    use super::*;

    const NEXTCLOUD: &str = r#"<?xml version="1.0"?>
<d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:oc="http://owncloud.org/ns">
 <d:response><d:href>/remote.php/dav/files/alice/</d:href>
  <d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>
  <d:propstat><d:prop><d:getcontentlength/></d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>
 </d:response>
 <d:response><d:href>/remote.php/dav/files/alice/Tom%20%26%20Jerry.mp4</d:href>
  <d:propstat><d:prop><d:resourcetype/><d:getcontentlength>1234</d:getcontentlength>
   <d:getlastmodified>Tue, 03 Nov 2026 10:00:00 GMT</d:getlastmodified><d:getcontenttype>video/mp4</d:getcontenttype>
  </d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>
 </d:response>
</d:multistatus>"#;

    #[test]
    fn a_nextcloud_answer_is_read_by_namespace_with_only_200_propstats() {
        let entries = parse(NEXTCLOUD).expect("parsed");
        assert_eq!(entries.len(), 2);
        assert!(entries[0].is_folder);
        assert_eq!(entries[0].size, None);
        assert_eq!(
            entries[1],
            Entry {
                href: "/remote.php/dav/files/alice/Tom%20%26%20Jerry.mp4".into(),
                is_folder: false,
                size: Some(1234),
                modified: Some("Tue, 03 Nov 2026 10:00:00 GMT".into()),
                mime: Some("video/mp4".into()),
            }
        );
    }

    #[test]
    fn other_prefixes_and_escaped_text_are_understood() {
        let body = r#"<D:multistatus xmlns:D="DAV:"><D:response><D:href>/a&amp;b&#x20;c</D:href>
            <D:propstat><D:prop><D:resourcetype><D:collection></D:collection></D:resourcetype></D:prop>
            <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>"#;
        let entries = parse(body).expect("parsed");
        assert_eq!(entries[0].href, "/a&b c");
        assert!(entries[0].is_folder);
        // The same names in another namespace are not DAV's.
        let foreign = r#"<x:multistatus xmlns:x="urn:other"/>"#;
        assert_eq!(parse(foreign), Err(Refused::NotMultistatus));
    }

    #[test]
    fn hostile_documents_are_refused() {
        let doctype = r#"<!DOCTYPE d [<!ENTITY a "aaaaaaaa">]><d:multistatus xmlns:d="DAV:"/>"#;
        assert_eq!(parse(doctype), Err(Refused::DocType));
        let unknown = r#"<d:multistatus xmlns:d="DAV:"><d:response><d:href>&a;</d:href></d:response></d:multistatus>"#;
        assert_eq!(parse(unknown), Err(Refused::Malformed));
        let deep = format!(
            r#"<d:multistatus xmlns:d="DAV:">{}{}</d:multistatus>"#,
            "<x>".repeat(10_000),
            "</x>".repeat(10_000)
        );
        assert_eq!(parse(&deep), Err(Refused::TooDeep));
        let many = format!(
            r#"<d:multistatus xmlns:d="DAV:">{}</d:multistatus>"#,
            "<d:response/>".repeat(MAX_ENTRIES + 1)
        );
        assert_eq!(parse(&many), Err(Refused::TooMany));
        assert_eq!(
            parse("<d:multistatus xmlns:d=\"DAV:\">"),
            Err(Refused::NotMultistatus)
        );
        assert_eq!(parse("<html>not dav</html>"), Err(Refused::NotMultistatus));
        assert_eq!(
            parse(r#"<d:multistatus xmlns:d="DAV:"></d:response>"#),
            Err(Refused::Malformed)
        );
    }
}
