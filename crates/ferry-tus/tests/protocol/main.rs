//! Table-driven tests of the tus protocol over real HTTP, one module per verb.

#[path = "../common/mod.rs"]
mod common;

mod concat_limits;
mod concat_unfinished;
mod delete;
mod get;
mod head;
mod ietf;
mod options;
mod patch;
mod post;
