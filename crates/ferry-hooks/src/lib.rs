//! Upload lifecycle hooks, so the application around Ferry can decide who may upload what and
//! learn when a file has arrived. The events and their JSON are tusd v2's, so a hook receiver
//! written for tusd works with Ferry unchanged.
//!
//! The upload libraries (ferry-tus, ferry-form, ferry-companion) emit through the [`Hooks`]
//! trait and never learn who listens; the binary picks [`HookSender`] (HTTP or a directory of
//! executables) or [`NoHooks`]. Nothing here knows axum or any library's types: events are
//! built from plain values and `http` types, and decisions come back as plain values.
//!
//! ```no_run
//! # use ferry_hooks::*;
//! # async fn create(hooks: &dyn Hooks, request: HttpRequestInfo) -> Result<(), HookError> {
//! let event = HookEvent::new(HookType::PreCreate, Upload { size: Some(1024), ..Upload::default() }, request);
//! match hooks.blocking(event).await? {
//!     HookDecision::Reject(reply) => { /* answer reply.status, reply.headers, reply.body */ }
//!     HookDecision::Continue { response, changes } => { /* apply changes.id, .metadata, .storage_key */ }
//! }
//! # Ok(()) }
//! ```
//!
//! # Layout
//!
//! - [`kind`]: the seven hook types, which block, and the enabled set.
//! - [`event`]: the hook request (`Type`, `Upload`, `HTTPRequest`) and its JSON.
//! - [`response`]: the receiver's answer as tusd parses it.
//! - [`decision`]: that answer as checked decisions (reject, change id/metadata/storage, stop).
//! - [`hooks`]: the [`Hooks`] trait and its [`HookStats`], [`NoHooks`] and the post-receive
//!   [`StopSignal`].
//! - [`throttle`]: when post-receive is due ([`ProgressThrottle`]).
//! - [`config`]: [`HooksConfig`] with tusd's defaults.
//! - `sender`: [`HookSender`]: enabled filter, timeout, bounded background queue; its
//!   transports `sender/http.rs` (POST with retries) and `sender/file.rs` (executables).
//! - [`error`]: [`HookError`], the crate's one error type.

pub mod config;
pub mod decision;
pub mod error;
pub mod event;
pub mod hooks;
pub mod kind;
pub mod response;
pub mod throttle;

mod sender;

pub use config::HooksConfig;
pub use decision::{CustomId, FileChanges, HookDecision, HookReply, ResponseOverride, StorageKey};
pub use error::HookError;
pub use event::{HookEvent, HttpRequestInfo, Storage, Upload};
pub use hooks::{HookStats, Hooks, NoHooks, StopSignal};
pub use kind::{EnabledEvents, HookType};
pub use response::HookResponse;
pub use sender::HookSender;
pub use throttle::ProgressThrottle;
