//! Google Workspace downloads: Docs, Sheets, Slides and Drawings export as docx, xlsx, pptx and
//! pdf with the matching extension; other Workspace types (Forms, Sites, ...) get the reason they
//! cannot be downloaded; and the readable message for Google's export size cap.

use super::WORKSPACE;

/// Google's cap on `files.export` (403 `exportSizeLimitExceeded` above it).
pub(super) const EXPORT_LIMIT_MESSAGE: &str =
    "This Google document is too large to be exported (Google exports at most 10 MB)";

/// The download format and extension of a Workspace type that has one.
pub(super) fn export_type(mime: &str) -> Option<(&'static str, &'static str)> {
    Some(match mime.strip_prefix(WORKSPACE)? {
        "document" => (
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "docx",
        ),
        "spreadsheet" => (
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            "xlsx",
        ),
        "presentation" => (
            "application/vnd.openxmlformats-officedocument.presentationml.presentation",
            "pptx",
        ),
        "drawing" => ("application/pdf", "pdf"),
        _ => return None,
    })
}

pub(super) fn unsupported_reason(mime: &str) -> String {
    let kind = match mime.strip_prefix(WORKSPACE).unwrap_or("") {
        "form" => "Google Forms",
        "site" => "Google Sites",
        "map" => "Google My Maps",
        "jam" => "Jamboards",
        "vid" => "Google Vids",
        "script" => "Apps Script projects",
        _ => "Files of this type",
    };
    format!("{kind} cannot be downloaded from Google Drive")
}

pub(super) fn with_extension(name: &str, ext: &str) -> String {
    if name.to_ascii_lowercase().ends_with(&format!(".{ext}")) {
        name.to_owned()
    } else {
        format!("{name}.{ext}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_files_get_their_export_extension_once() {
        assert_eq!(
            export_type("application/vnd.google-apps.presentation").map(|e| e.1),
            Some("pptx")
        );
        assert_eq!(
            export_type("application/vnd.google-apps.drawing").map(|e| e.1),
            Some("pdf")
        );
        assert_eq!(export_type("application/vnd.google-apps.form"), None);
        assert_eq!(with_extension("Report", "docx"), "Report.docx");
        assert_eq!(with_extension("Report.DOCX", "docx"), "Report.DOCX");
    }
}
