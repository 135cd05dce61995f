//! One access-control scheme for every route of `ferry`: the host application signs a bearer
//! token with a secret it shares with the server; the server checks it and records who the
//! request acts for, so the libraries can bind uploads and transfers to that subject and apply
//! the token's limits.
//!
//! A token is an HS256 JWT (any JWT library can make one) whose claims are
//! `{"sub": "<user id>", "exp": <unix seconds>}` plus optional limits:
//! `"max_size"` (bytes per file), `"types"` (MIME patterns such as `image/*` or extensions such
//! as `.pdf`) and `"prefix"` (where the file may be stored). The two-part token the `/s3/*`
//! routes took before (`base64url(payload).base64url(HMAC-SHA256)`) is still accepted.
//!
//! # Layout
//!
//! - [`client`]: the client address of a request (behind trusted proxies too).
//! - [`jwt`]: HS256 JWT signing and checking (also used for Companion's token format).
//! - [`token`]: [`Claims`], [`verify`] (both token forms) and [`issue`] for tests and docs.
//! - [`principal`]: [`Principal`], who a request acts for, and its limits ([`Admission`]).
//! - [`quota`]: [`Quota`], bytes per subject over a sliding window.
//! - [`meter`]: [`Meter`], a file of unknown size charged to the quota as its bytes arrive.
//! - [`secret`]: [`Secret`], a configured secret that is never printed.
//! - [`gate`]: [`Gate`], the axum middleware that reads the token (header or `access_token`).
//! - [`error`]: [`AuthError`], every refusal with its status and message.

pub mod client;
pub mod error;
pub mod gate;
pub mod jwt;
pub mod meter;
pub mod principal;
pub mod quota;
pub mod secret;
pub mod token;

pub use error::AuthError;
pub use gate::{Gate, Protect};
pub use meter::Meter;
pub use principal::{Admission, Principal};
pub use quota::Quota;
pub use secret::Secret;
pub use token::{Claims, issue, verify};
