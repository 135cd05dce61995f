//! Ferry's processing service: Transloadit-compatible Assemblies. An Assembly is a graph of steps,
//! each run by a robot (`/image/resize`, `/video/encode`, ...), over the files uploaded with it
//! (in the creating form, or through ferry's tus endpoint). Uppy's `@uppy/transloadit` and
//! Transloadit's SDKs work against it with their endpoint set to ferry's origin.
//!
//! # Layout
//!
//! - [`api`]: the HTTP routes (create, status, cancel, files) and their CORS; [`openapi`]: their
//!   part of `/openapi.json`.
//! - [`service`]: the Assemblies, the worker pool, cancel; [`run`](mod@run): executing one.
//! - [`assembly`]: the record on disk, its store, the Assembly Status JSON.
//! - [`auth`]: signatures and expiry; [`limits`]: caps on params; [`error`]: the error answer.
//! - [`steps`]: instructions checked and ordered, templates, `${...}` variables.
//! - [`robots`]: the robots and their parameters; [`engines`]: the engine adapters.
//! - [`live`]: update streams' channels and what they send.
//! - [`notify`]: `notify_url` webhooks; [`tus`]: uploads arriving through the tus endpoint.
//! - [`mime`]: file types from content; [`id`]: Assembly and file ids.
//! - [`upkeep`]: per-client and disk caps, expiry of ended and abandoned Assemblies.
//! - [`fleet`]: several instances sharing Assemblies (the seam ferry-cluster implements).

pub mod api;
pub mod assembly;
pub mod auth;
pub mod engines;
pub mod error;
pub mod fleet;
pub mod id;
pub mod limits;
pub mod live;
pub mod mime;
pub mod notify;
pub mod openapi;
pub mod robots;
mod run;
pub mod service;
pub mod steps;
pub mod tus;
pub mod upkeep;

pub use api::router;
pub use assembly::status::Urls;
pub use auth::Credentials;
pub use error::ApiError;
pub use robots::engine::Engines as RobotEngines;
pub use service::{ProcessConfig, Service};
pub use upkeep::caps::Quotas;
pub use upkeep::clock::Clock;
