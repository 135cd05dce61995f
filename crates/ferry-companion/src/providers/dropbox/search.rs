//! Companion's `/dropbox/search`: `files/search_v2` (the query under a folder, or the whole
//! account, active files only, names and contents) and `files/search/continue_v2` for the next
//! pages, rooted in the team space like every call, answered in the list shape.

use serde_json::{Value, json};

use super::items::{list_page, valid_path};
use super::{Dropbox, ListCtx, ListPage, ProviderError, Session};

/// Dropbox's largest `max_results`.
const MAX_RESULTS: u32 = 1000;

impl Dropbox {
    /// One page of the files and folders matching `query` under `path` (`""`: everywhere).
    pub(super) async fn search(
        &self,
        session: &Session,
        ctx: &ListCtx,
        query: &str,
        path: &str,
        cursor: Option<&str>,
    ) -> Result<ListPage, ProviderError> {
        if !valid_path(path) {
            return Err(ProviderError::BadRequest("Invalid folder path".into()));
        }
        let account = self.account(session).await?;
        let root = account.root.as_deref();
        let answer = match cursor {
            Some(cursor) => {
                let body = json!({ "cursor": cursor });
                self.rpc(session, root, "/files/search/continue_v2", Some(body))
                    .await?
            }
            None => {
                let body = json!({
                    "query": query,
                    "options": {
                        "path": path,
                        "max_results": self.page_size.min(MAX_RESULTS),
                        "file_status": "active",
                        "filename_only": false,
                    },
                });
                self.rpc(session, root, "/files/search_v2", Some(body))
                    .await?
            }
        };
        // Each match is `{match_type, metadata: {".tag": "metadata", metadata: <entry>}}`.
        let entries = answer
            .get("matches")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|m| m.pointer("/metadata/metadata"));
        Ok(list_page(ctx, entries, &answer, account.email))
    }
}
