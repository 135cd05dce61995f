//! The transfer registry seam: where transfers are registered, found by their progress socket,
//! and forgotten. [`LocalRegistry`] keeps them in this process (the default). A shared registry
//! (the binary's Redis one, with `--redis-url`) lets a socket on any instance watch and steer a
//! transfer running on another, and lets another instance take a transfer over when its
//! instance dies: for that every transfer is registered with a [`TransferSpec`], everything
//! needed to run it again, and records checkpoint hints as it goes ([`crate::jobs::Hints`]).
//! A taken-over transfer is resumed with [`crate::transfer::resume`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use ferry_hooks::HttpRequestInfo;
use rand::RngCore;
use serde::{Deserialize, Serialize};

use crate::error::CompanionError;
use crate::jobs::Job;
use crate::transfer::request::UploadBody;

/// Where a transfer reads from, in a form another instance can open again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SourceSpec {
    /// A public URL (`/url/get`), checked again by the egress rules when reopened.
    Url { url: String },
    /// A provider's file (`/{provider}/get/{id}`): the provider, the file id and the sealed
    /// Uppy auth token the request carried (encrypted with the fleet's `--secret`).
    Provider {
        provider: String,
        id: String,
        token: String,
    },
    /// An item picked in Google's Drive or Photos Picker (`/google-picker/get`): the pick,
    /// access token included, sealed with the fleet's `--secret`.
    GooglePicker { grant: String },
}

/// Everything needed to run a transfer again on another instance.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TransferSpec {
    pub source: SourceSpec,
    /// The `/url/get` body as the client sent it (destination, metadata, size...).
    pub body: UploadBody,
    /// The destination headers as filtered and completed at the start (may carry the caller's
    /// bearer token for the server's own endpoint).
    pub headers: Vec<(String, String)>,
    /// Largest file it may carry (server cap and token limit).
    pub limit: Option<u64>,
    /// The token's subject under `--auth-secret`.
    pub owner: Option<String>,
    /// The client's request, for the post-finish hook.
    pub hook_request: Option<HttpRequestInfo>,
}

/// Where transfers live.
#[async_trait::async_trait]
pub trait Registry: Send + Sync + std::fmt::Debug {
    /// Registers a new transfer run by this instance; returns its token and its job.
    async fn register(&self, spec: &TransferSpec) -> Result<(String, Arc<Job>), CompanionError>;

    /// The job a progress socket for `token` talks to, if the transfer exists (on a shared
    /// registry: a stand-in fed from wherever it runs, alive while the socket holds it).
    async fn attach(&self, token: &str) -> Result<Option<Arc<Job>>, CompanionError>;

    /// The runner is done with `token` (its last frame was kept long enough).
    fn remove(&self, token: &str);
}

/// A fresh unguessable transfer token (48 hex digits).
pub fn new_token() -> String {
    let mut raw = [0u8; 24];
    rand::rng().fill_bytes(&mut raw);
    raw.iter().map(|b| format!("{b:02x}")).collect()
}

/// The in-process registry: tokens to jobs, asks applied in place.
#[derive(Debug, Default)]
pub struct LocalRegistry {
    map: Mutex<HashMap<String, Arc<Job>>>,
}

impl LocalRegistry {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Job>>> {
        // A panic while holding this lock cannot leave the map inconsistent: recover it.
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait::async_trait]
impl Registry for LocalRegistry {
    async fn register(&self, spec: &TransferSpec) -> Result<(String, Arc<Job>), CompanionError> {
        let token = new_token();
        let job = Arc::new(Job::local(spec.owner.clone()));
        self.lock().insert(token.clone(), job.clone());
        Ok((token, job))
    }

    async fn attach(&self, token: &str) -> Result<Option<Arc<Job>>, CompanionError> {
        Ok(self.lock().get(token).cloned())
    }

    fn remove(&self, token: &str) {
        self.lock().remove(token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> TransferSpec {
        TransferSpec {
            source: SourceSpec::Url {
                url: "https://example.com/a".into(),
            },
            body: UploadBody::default(),
            headers: vec![],
            limit: None,
            owner: Some("alice".into()),
            hook_request: None,
        }
    }

    #[tokio::test]
    async fn tokens_are_distinct_and_jobs_found_until_removed() {
        let registry = LocalRegistry::default();
        let (a, job) = registry.register(&spec()).await.expect("register");
        let (b, _) = registry.register(&spec()).await.expect("register");
        assert_ne!(a, b);
        assert_eq!(a.len(), 48);
        assert_eq!(job.owner.as_deref(), Some("alice"));
        assert!(registry.attach(&a).await.expect("attach").is_some());
        assert!(registry.attach("nope").await.expect("attach").is_none());
        registry.remove(&a);
        assert!(registry.attach(&a).await.expect("attach").is_none());
        assert!(registry.attach(&b).await.expect("attach").is_some());
    }

    #[test]
    fn a_spec_survives_json() {
        let mut s = spec();
        s.source = SourceSpec::Provider {
            provider: "drive".into(),
            id: "f1".into(),
            token: "sealed".into(),
        };
        s.headers = vec![("authorization".into(), "Bearer x".into())];
        let text = serde_json::to_string(&s).expect("json");
        let back: TransferSpec = serde_json::from_str(&text).expect("parse");
        assert_eq!(back.source, s.source);
        assert_eq!(back.headers, s.headers);
        assert_eq!(back.owner, s.owner);
    }
}
