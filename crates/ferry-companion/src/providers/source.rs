//! A provider download as a transfer [`Source`]. `/get` opens the file before answering (so an
//! expired access token is a 401 the client can refresh on), and the first attempt of the
//! transfer reads that response; later attempts (after a pause or a failure) reopen the file at
//! the destination's offset. A session whose access token expires during a long transfer is
//! refreshed once, server-side, and the transfer goes on.

use std::sync::{Arc, Mutex, MutexGuard};

use super::ratelimit::{self, WaitHook};
use super::{Download, Provider, ProviderError, Session};
use crate::transfer::TransferError;
use crate::transfer::source::{Opened, Source};

/// One provider file being transferred.
#[derive(Debug)]
pub struct ProviderSource {
    provider: Arc<dyn Provider>,
    id: String,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    session: Session,
    first: Option<Download>,
    size: Option<u64>,
    name: Option<String>,
}

impl ProviderSource {
    /// Opens `id` from its first byte; the error is what `/get` answers.
    pub async fn open_first(
        provider: Arc<dyn Provider>,
        session: Session,
        id: &str,
    ) -> Result<Self, ProviderError> {
        let first = provider.download(&session, id, 0).await?;
        Ok(Self {
            provider,
            id: id.to_owned(),
            inner: Mutex::new(Inner {
                session,
                size: first.size,
                name: first.name.clone(),
                first: Some(first),
            }),
        })
    }

    /// `id` to be opened at the first attempt's offset: a transfer taken over from another
    /// instance, whose destination already holds the start.
    pub fn resumed(provider: Arc<dyn Provider>, session: Session, id: &str) -> Self {
        Self {
            provider,
            id: id.to_owned(),
            inner: Mutex::new(Inner {
                session,
                size: None,
                name: None,
                first: None,
            }),
        }
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        // Plain fields: a holder's panic cannot leave them inconsistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn reopen(&self, from: u64) -> Result<Download, TransferError> {
        let session = self.inner().session.clone();
        match self.provider.download(&session, &self.id, from).await {
            Err(ProviderError::Auth) if self.provider.info().supports_refresh => {
                let fresh = self.provider.refresh(&session).await.map_err(to_transfer)?;
                self.inner().session = fresh.clone();
                self.provider
                    .download(&fresh, &self.id, from)
                    .await
                    .map_err(to_transfer)
            }
            other => other.map_err(to_transfer),
        }
    }
}

#[async_trait::async_trait]
impl Source for ProviderSource {
    async fn open(&self, from: u64) -> Result<Opened, TransferError> {
        // The response opened by `/get` serves a read from byte 0 only; any other start (a
        // destination resuming) drops it and reopens at the offset.
        let first = self.inner().first.take().filter(|_| from == 0);
        let download = match first {
            Some(d) => d,
            None => {
                // A rate limit met while reopening is waited out here (within the caps), and
                // the person sees why nothing moves.
                let name = self.provider.info().name;
                let hook: WaitHook = Arc::new(move |secs| {
                    crate::transfer::source_waiting(
                        secs,
                        &format!("{name} is limiting requests; retrying in {secs} s"),
                    );
                });
                ratelimit::observe(hook, self.reopen(from)).await?
            }
        };
        let mut inner = self.inner();
        if download.size.is_some() {
            inner.size = download.size;
        }
        Ok(Opened {
            stream: download.stream,
            skip: download.skip,
        })
    }

    fn size(&self) -> Option<u64> {
        self.inner().size
    }

    fn name(&self) -> Option<String> {
        self.inner().name.clone()
    }

    /// `<provider>:<file id>` (e.g. `drive:1AbC`), for hooks.
    fn origin(&self) -> Option<String> {
        Some(format!("{}:{}", self.provider.info().id, self.id))
    }
}

/// A provider failure as a transfer attempt's outcome: network, 429 and 5xx are retried.
pub(crate) fn to_transfer(e: ProviderError) -> TransferError {
    match e {
        ProviderError::Unreachable(cause) => TransferError::Retryable(format!("provider: {cause}")),
        ProviderError::RateLimited { retry_after } => {
            TransferError::Retryable(format!("provider rate limit ({retry_after} s)"))
        }
        ProviderError::Status { status, .. } if status == 429 || status >= 500 => {
            TransferError::Retryable(format!("provider answered {status}"))
        }
        ProviderError::Auth => {
            TransferError::Fatal("The provider refused the access token; sign in again".into())
        }
        other => TransferError::Fatal(other.to_string()),
    }
}
