//! The tus endpoint as an axum router, one module per verb.
//!
//! [`router`] mounts `{base}` (OPTIONS, POST) and `{base}{id}` (HEAD, PATCH, DELETE, GET, and
//! POST with `X-HTTP-Method-Override`). The id is parsed once per request ([`path_id`]), by the
//! owner check in front of every verb ([`access::owner_only`]); a segment that is not an id is
//! answered 404 before the store is asked. With the IETF draft on, the router picks tus or the
//! draft once per request; the draft's verbs are in [`ietf`]. Shared pieces: [`write`] (the
//! write path every creation and append stands on), [`error`] (errors as answers), [`body`]
//! (the guarded request body), [`access`] (owners and token limits under `--auth-secret`),
//! [`pending`] (finals created before their parts finished), [`limits`] (per-client cap),
//! [`cors`], [`sweeper`] (expiration), [`openapi`] (the endpoint's part of the OpenAPI
//! document). The handlers' shared state is [`state`]; the version check and `Tus-Resumable`
//! every tus answer carries are [`wire`].

pub use openapi::TusApi;
pub use state::{TusConfig, TusState};

mod access;
mod body;
mod cors;
mod delete;
mod download;
mod error;
mod head;
mod hooks;
mod ietf;
mod limits;
mod method_override;
mod openapi;
mod options;
mod patch;
mod path_id;
mod pending;
mod post;
mod state;
mod sweeper;
mod wire;
mod write;

use axum::Router;
use axum::extract::Request;
use axum::routing::{MethodRouter, any_service, head as head_route, post as post_route};
use tower::ServiceExt;

use crate::protocol::ietf::is_draft_request;

/// Builds the endpoint's routes.
pub fn router(state: TusState) -> Router {
    let tus = verbs(
        &state,
        post_route(post::handle),
        head_route(head::handle)
            .patch(patch::handle)
            .delete(delete::handle),
    );
    let (collection, upload) = if state.config().ietf_draft {
        let draft = verbs(
            &state,
            post_route(ietf::create),
            head_route(ietf::offset)
                .patch(ietf::append)
                .delete(ietf::cancel),
        );
        (by_protocol(tus.0, draft.0), by_protocol(tus.1, draft.1))
    } else {
        tus
    };
    let base = state.config().base_path.clone();
    let bare = base.trim_end_matches('/').to_owned();
    let mut router = Router::new().route(&base, collection.clone()).route(
        &format!("{base}{{id}}"),
        upload.layer(axum::middleware::from_fn_with_state(
            state.clone(),
            access::owner_only,
        )),
    );
    if !bare.is_empty() {
        router = router.route(&bare, collection);
    }
    if state.config().cors {
        router.layer(axum::middleware::from_fn(cors::middleware))
    } else {
        router
    }
}

/// The verbs of the collection and of one upload, given those that differ between tus and the
/// IETF draft: creation, and HEAD, PATCH and DELETE on an upload.
fn verbs(
    state: &TusState,
    create: MethodRouter<TusState>,
    upload: MethodRouter<TusState>,
) -> (MethodRouter, MethodRouter) {
    let collection = create.options(options::handle);
    let upload = upload
        .get(download::handle)
        .post(method_override::handle)
        .options(options::on_upload);
    (
        collection.with_state(state.clone()),
        upload.with_state(state.clone()),
    )
}

/// Chooses the protocol once per request: one carrying `Upload-Draft-Interop-Version: 8` goes to
/// the draft's verbs, any other to tus's.
fn by_protocol(tus: MethodRouter, draft: MethodRouter) -> MethodRouter {
    any_service(tower::service_fn(move |request: Request| {
        let verbs = if is_draft_request(request.headers()) {
            draft.clone()
        } else {
            tus.clone()
        };
        verbs.oneshot(request)
    }))
}
