//! Contract tests of the `drive` provider over real HTTP against the testkit's fake Google:
//! the OAuth login with both hand-offs, hostile inputs (forged and replayed state, foreign
//! origins, tokens for another provider, path tricks), the list shape and paging to the end,
//! imports byte-exact at every destination (tus, form, and `s3-multipart` into a real Garage
//! bucket), refresh, logout, rate limits.

#[path = "../common/mod.rs"]
mod common;
mod imports;
mod listing;
mod login;
mod origins;
mod tokens;

use std::sync::atomic::Ordering;

use futures_util::StreamExt;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use common::providers::*;
use common::ratelimit;
use ferry_testkit::garage::Garage;
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::{Value, json};

const DOCX: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
