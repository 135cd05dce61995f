//! Behaviour beyond single requests: the store conformance suite on the fs store, concurrency,
//! limits, expiration, and property tests of the parsers.

#[path = "../common/mod.rs"]
mod common;

mod concat_leftovers;
mod concurrency;
mod conformance;
mod durability;
mod expiration;
mod hooks;
mod limits;
mod parsers;
mod streaming;
mod write_path;
