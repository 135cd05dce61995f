//! POST on an upload with `X-HTTP-Method-Override`: for clients behind proxies or runtimes that
//! cannot send PATCH or DELETE. The override names the verb whose handler answers.

use axum::body::Body;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::hooks::Caller;
use super::path_id::Id;
use super::state::TusState;
use super::wire::tus_headers;
use super::{delete, head, patch};
use crate::protocol::headers::X_HTTP_METHOD_OVERRIDE;

#[utoipa::path(
    post,
    path = "/files/{id}",
    operation_id = "tus_method_override",
    tag = "tus",
    description = "PATCH, HEAD or DELETE for clients that cannot send them, named by \
        `X-HTTP-Method-Override`; answered as that verb.",
    params(
        ("id" = String, Path, description = "The upload's id."),
        ("X-HTTP-Method-Override" = String, Header, description = "`PATCH`, `HEAD` or `DELETE`."),
    ),
    request_body(content_type = "application/offset+octet-stream", description = "PATCH's body."),
    responses(
        (status = 204, description = "As the named verb."),
        (status = 400, description = "No or an unknown override.", body = String, content_type = "text/plain"),
    ),
    security(("bearerAuth" = [])),
)]
pub(super) async fn handle(state: State<TusState>, id: Id, caller: Caller, body: Body) -> Response {
    let method = caller
        .headers()
        .get(X_HTTP_METHOD_OVERRIDE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_ascii_uppercase);
    match method.as_deref() {
        Some("PATCH") => patch::handle(state, id, caller, body).await.into_response(),
        Some("HEAD") => head::handle(state, id, caller.headers().clone()).await,
        Some("DELETE") => delete::handle(state, id, caller).await.into_response(),
        _ => (StatusCode::METHOD_NOT_ALLOWED, tus_headers()).into_response(),
    }
}
