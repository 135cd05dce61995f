//! The hostile-input suite: every route of `ferry serve`, probed over real HTTP with requests
//! an attacker or a broken client sends, each with the exact status and message it must get.
//! Organised by route (one module per surface, one table per server configuration); to grow
//! it, add a line to the route's table. Findings of past audits stay here as regression probes.
//!
//! Other suites cover what a table cannot: `ferry-companion/tests/ssrf.rs` (every address form
//! a link import must refuse, against a listening sink), `ferry/tests/auth.rs` (every protected
//! route and token shape), and the property tests of each parser (`tests/parsers.rs` in
//! ferry-auth, ferry-companion and ferry-hooks; `ferry-tus/tests/behaviour/parsers.rs`).

#[path = "../common/mod.rs"]
mod common;
mod companion;
mod form;
mod probe;
mod tus;
mod wire;
