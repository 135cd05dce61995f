//! Lifecycle hooks of the form endpoint, the same events a tus upload emits, so an application
//! learns of every file whichever way it arrived: pre-create before a file's bytes are read
//! (a refusal answers the request as the hook chose and keeps none of its files), then
//! post-create and post-finish once the file is stored, with its path (`filestore`).
//!
//! A form file is created and finished in one request, so both notifications follow its
//! storing. The metadata is the file's `filename` and `filetype`, as tus clients send them. A
//! pre-create's `ChangeFileInfo` does not apply here (ids are the store's own, and files stay
//! in its directory); it is ignored and logged.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use ferry_hooks::{HookDecision, HookEvent, HookType, HttpRequestInfo, Storage, Upload};

use crate::store::StoredInfo;
use crate::{FormError, FormState};

/// The request as hooks describe it, when any hook is enabled.
pub(crate) fn request_info(state: &FormState, parts: &Parts) -> Option<HttpRequestInfo> {
    HookType::ALL
        .into_iter()
        .any(|hook| state.hooks.enabled(hook))
        .then(|| {
            let peer = parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|ConnectInfo(addr)| *addr);
            let uri = parts
                .extensions
                .get::<axum::extract::OriginalUri>()
                .map_or(&parts.uri, |original| &original.0);
            HttpRequestInfo::from_parts(&parts.method, uri, peer, &parts.headers)
        })
}

fn metadata(name: &str, content_type: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("filename".to_owned(), name.to_owned()),
        ("filetype".to_owned(), content_type.to_owned()),
    ])
}

/// pre-create for a file about to be read; `size` when the client declared it.
pub(crate) async fn pre_create(
    state: &FormState,
    request: Option<&HttpRequestInfo>,
    name: &str,
    content_type: &str,
    size: Option<u64>,
) -> Result<(), FormError> {
    let Some(request) = request.filter(|_| state.hooks.enabled(HookType::PreCreate)) else {
        return Ok(());
    };
    let upload = Upload {
        size,
        metadata: metadata(name, content_type),
        ..Upload::default()
    };
    let event = HookEvent::new(HookType::PreCreate, upload, request.clone());
    match state.hooks.blocking(event).await {
        Ok(HookDecision::Reject(reply)) => {
            Err(FormError::Refused(Box::new(reply.into_http_response())))
        }
        Ok(HookDecision::Continue { changes, .. }) => {
            if !changes.is_empty() {
                tracing::warn!("a hook's ChangeFileInfo does not apply to form uploads; ignored");
            }
            Ok(())
        }
        Err(e) => {
            tracing::warn!(error = %e.detail(), "blocking hook failed");
            Err(FormError::Hook {
                status: e.status_code(),
                message: e.to_string(),
            })
        }
    }
}

/// post-create and post-finish for a stored file.
pub(crate) fn stored(
    state: &FormState,
    request: Option<&HttpRequestInfo>,
    id: &str,
    info: &StoredInfo,
) {
    let Some(request) = request else {
        return;
    };
    let (data, sidecar) = state.store.paths(id);
    let upload = Upload {
        id: id.to_owned(),
        size: Some(info.size),
        offset: info.size,
        metadata: metadata(&info.name, &info.content_type),
        storage: Some(Storage::filestore(&data, Some(&sidecar))),
        ..Upload::default()
    };
    for hook in [HookType::PostCreate, HookType::PostFinish] {
        if state.hooks.enabled(hook) {
            let event = HookEvent::new(hook, upload.clone(), request.clone());
            state.hooks.notify(event);
        }
    }
}
