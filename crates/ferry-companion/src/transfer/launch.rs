//! Starting transfers: a new one is registered (so its socket finds it, on any instance with a
//! shared registry) and run in its own task; one taken over from another instance is rebuilt
//! from its [`TransferSpec`], continues from the checkpoint hints the other instance recorded
//! (the tus upload's URL, the S3 multipart upload, the source's validator), and runs the same
//! way. Its destination tells it where to resume (tus `HEAD`, S3 `ListParts`), and the source
//! is read again from there with `Range` (+ `If-Range`).

use std::sync::Arc;

use super::request::TransferRequest;
use super::url_source::UrlSource;
use super::{SOURCE_VALIDATOR, Source, run_job};
use crate::error::CompanionError;
use crate::jobs::{Hints, Job, Outcome, error_frame};
use crate::oauth::sealed;
use crate::providers::source::ProviderSource;
use crate::registry::{SourceSpec, TransferSpec};
use crate::state::AppState;

/// Registers `request` and runs it in the background; returns its token.
pub async fn start(state: &AppState, request: TransferRequest) -> Result<String, CompanionError> {
    let (token, job) = state.registry().register(&request.spec()).await?;
    tokio::spawn(run_job(state.clone(), token.clone(), job, request));
    Ok(token)
}

/// A transfer this instance has taken over from another.
#[derive(Debug)]
pub struct Resumed {
    pub token: String,
    /// Its job here, already owned by this instance's registry (and holding `hints`).
    pub job: Arc<Job>,
    pub spec: TransferSpec,
    /// What the previous owner recorded.
    pub hints: Hints,
}

/// Runs a taken-over transfer to its end. One that cannot be rebuilt here (its source is no
/// longer allowed, its provider is not enabled on this instance, its login expired) fails with
/// the reason on its socket.
pub async fn resume(state: AppState, resumed: Resumed) {
    let Resumed {
        token,
        job,
        spec,
        hints,
    } = resumed;
    match rebuild(&state, &spec, &hints) {
        Ok(request) => run_job(state, token, job, request).await,
        Err(error) => {
            tracing::info!(%error, "a transfer taken over could not be resumed");
            job.publish(&error_frame(&error.to_string()));
            job.end(Outcome::Failed);
            tokio::time::sleep(state.config().keep_finished).await;
            state.registry().remove(&token);
        }
    }
}

/// The request `spec` describes, with its source and destination set to continue.
fn rebuild(
    state: &AppState,
    spec: &TransferSpec,
    hints: &Hints,
) -> Result<TransferRequest, CompanionError> {
    let source: Box<dyn Source> = match &spec.source {
        SourceSpec::Url { url } => {
            let url = state.sources().check(url)?;
            Box::new(UrlSource::new(state.sources().client().clone(), url))
        }
        SourceSpec::Provider {
            provider: name,
            id,
            token,
        } => {
            let provider = state
                .providers()
                .get(name)
                .ok_or_else(|| CompanionError::NotFound("Unknown provider".into()))?;
            // A search provider's import carries no token: the server's key opens it.
            let session = if provider.needs_sign_in() {
                sealed::verify(state, name, Some(token))?
            } else {
                crate::providers::Session::default()
            };
            Box::new(ProviderSource::resumed(provider, session, id))
        }
        SourceSpec::GooglePicker { grant } => {
            crate::providers::google_picker::source::rebuild(state, grant)?
        }
    };
    if let Some(validator) = hints.get(SOURCE_VALIDATOR) {
        source.restore_validator(validator);
    }
    let mut request =
        TransferRequest::from_body(state, source, spec.source.clone(), spec.body.clone())?
            .with_spec(spec);
    request.destination.restore(hints);
    Ok(request)
}
