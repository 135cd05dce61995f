//! Contract tests of the `dropbox` provider over real HTTP against the testkit's fake Dropbox:
//! sign-in (code flow with PKCE and `token_access_type=offline`), Companion's list shape with
//! `?cursor=` paging, thumbnails by the signed link, byte-exact imports into tus (non-ASCII
//! names through `Dropbox-API-Arg`, a cut body resumed with `Range`, an expired token renewed
//! mid-import), refresh mid-list, team spaces, logout, rate limits and bad input.

mod browsing;
#[path = "../common/mod.rs"]
mod common;
mod imports;
mod search;

use std::sync::atomic::Ordering;

use common::providers::*;
use common::ratelimit;
use ferry_testkit::fake::dropbox::{TEAM_NS, thumbnail_of};
use ferry_testkit::garage::Garage;
use ferry_testkit::{random_bytes, sha256_hex};
use serde_json::{Value, json};

fn access_of(token: &str) -> String {
    session_of("dropbox", token)["accessToken"]
        .as_str()
        .expect("access")
        .to_owned()
}

fn by_name<'a>(items: &'a [Value], name: &str) -> &'a Value {
    items
        .iter()
        .find(|i| i["name"] == name)
        .unwrap_or_else(|| panic!("{name} listed: {items:?}"))
}
