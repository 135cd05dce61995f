//! Redis implementations of Ferry's coordination seams, so several `ferry` instances can share
//! uploads, transfers, progress sockets and logins. Nothing else in the tree talks to Redis: the
//! libraries call traits (upload lock, transfer registry, progress hub, auth hand-off), this crate
//! implements them on Redis, and the binary plugs them in when `--redis-url` is set.
//!
//! # Layout
//!
//! - [`cluster`] — [`Cluster`], one instance's handle (command connection, instance id, figures).
//! - [`config`] — [`ClusterConfig`], URL, prefix and timings.
//! - [`lock`] — [`LeaseLocks`] and [`Lease`], lease locks with fencing and release requests.
//! - [`upload_lock`] — [`RedisUploadLocks`], ferry-tus's `UploadLock` on these leases.
//! - [`transfers`] — [`TransferRegistry`] and [`OwnedTransfer`], records, ownership, takeover.
//! - [`companion_registry`] — [`RedisRegistry`], ferry-companion's transfer `Registry` on those
//!   records and the progress topics (keepers, stand-ins for remote sockets, takeovers).
//! - [`replay`] — [`Topics`], pub/sub with a kept last message (progress frames, auth tokens).
//! - [`oauth`] — [`OAuthStates`], one-time OAuth state.
//! - [`assemblies`] — [`RedisAssemblies`], ferry-process's Assembly `Fleet` on the transfer
//!   registry (a run claimed by one instance, taken over, canceled from any).
//! - [`assembly_caps`] — [`RedisCaps`], ferry-process's per-client Assembly caps counted once for
//!   the fleet (leases, so a dead instance's counts lapse).
//! - [`auth_handoff`] — [`RedisHandoff`], ferry-companion's login `AuthHandoff` on the auth topics.
//! - [`figures`] — [`Figures`] for `/metrics` and `/health`.
//! - `pubsub` — the instance's one shared subscriber connection; `keys` — key and channel names;
//!   `clock` — milliseconds for Redis arguments.
//! - [`error`] — [`ClusterError`].

pub mod assemblies;
pub mod assembly_caps;
pub mod auth_handoff;
mod clock;
pub mod cluster;
pub mod companion_registry;
pub mod config;
pub mod error;
pub mod figures;
mod keys;
pub mod lock;
pub mod oauth;
mod pubsub;
pub mod replay;
pub mod transfers;
pub mod upload_lock;

pub use assemblies::RedisAssemblies;
pub use assembly_caps::RedisCaps;
pub use auth_handoff::RedisHandoff;
pub use cluster::Cluster;
pub use companion_registry::RedisRegistry;
pub use config::ClusterConfig;
pub use error::{ClusterError, Result};
pub use figures::Figures;
pub use lock::{Holder, Lease, LeaseLocks};
pub use oauth::OAuthStates;
pub use replay::{TopicStream, Topics};
pub use transfers::{
    Claimed, Control, Desired, Directives, OwnedTransfer, TransferRecord, TransferRegistry,
};
pub use upload_lock::RedisUploadLocks;
