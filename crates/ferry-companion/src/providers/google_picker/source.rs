//! A picked item as a transfer [`Source`]. The route opens the download before answering (a
//! refused token is a 401 at once, and a Photos URL is read while it is still valid); the first
//! attempt of the transfer reads that response and later attempts (a pause, a broken
//! download, a takeover) reopen it at the destination's offset with `Range`.

use std::sync::{Arc, Mutex, MutexGuard};

use super::super::source::to_transfer;
use super::super::{Download, ProviderError};
use super::{GooglePicker, Pick};
use crate::error::CompanionError;
use crate::oauth::sealed;
use crate::state::AppState;
use crate::transfer::TransferError;
use crate::transfer::source::{Opened, Source};

/// One picked item being transferred.
#[derive(Debug)]
pub struct PickerSource {
    picker: Arc<GooglePicker>,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Holds the access token: [`Pick`]'s `Debug` redacts it.
    pick: Pick,
    first: Option<Download>,
    size: Option<u64>,
    name: Option<String>,
}

impl PickerSource {
    /// Opens `pick` from its first byte; the error is what the route answers.
    pub async fn open_first(
        picker: Arc<GooglePicker>,
        mut pick: Pick,
    ) -> Result<Self, ProviderError> {
        let first = picker.open(&mut pick, 0).await?;
        Ok(Self {
            picker,
            inner: Mutex::new(Inner {
                pick,
                size: first.size,
                name: first.name.clone(),
                first: Some(first),
            }),
        })
    }

    /// `pick` to be opened at the first attempt's offset (a transfer taken over).
    pub fn resumed(picker: Arc<GooglePicker>, pick: Pick) -> Self {
        Self {
            picker,
            inner: Mutex::new(Inner {
                pick,
                first: None,
                size: None,
                name: None,
            }),
        }
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        // Plain fields: a holder's panic cannot leave them inconsistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait::async_trait]
impl Source for PickerSource {
    async fn open(&self, from: u64) -> Result<Opened, TransferError> {
        let first = self.inner().first.take().filter(|_| from == 0);
        let download = match first {
            Some(d) => d,
            None => {
                let mut pick = self.inner().pick.clone();
                let opened = self.picker.open(&mut pick, from).await;
                // A renewed Photos URL serves the next attempts too.
                self.inner().pick = pick;
                opened.map_err(to_transfer)?
            }
        };
        let mut inner = self.inner();
        if download.size.is_some() {
            inner.size = download.size;
        }
        if download.name.is_some() {
            inner.name = download.name.clone();
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

    /// `google-drive-picker:<file id>` or `google-photos-picker:<media item id>`, for hooks.
    fn origin(&self) -> Option<String> {
        let inner = self.inner();
        let id = inner.pick.id.clone().unwrap_or_default();
        Some(format!("{}:{id}", inner.pick.platform.plugin_id()))
    }
}

/// The source of a taken-over picker transfer, from its sealed pick.
pub fn rebuild(state: &AppState, grant: &str) -> Result<Box<dyn Source>, CompanionError> {
    let picker = state
        .google_picker()
        .ok_or_else(|| CompanionError::NotFound(super::routes::DISABLED.into()))?;
    let pick = Pick::open(sealed::secret(state)?, grant)
        .ok_or(CompanionError::Unauthorized("Unauthorized"))?;
    Ok(Box::new(PickerSource::resumed(picker.clone(), pick)))
}
