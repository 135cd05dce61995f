//! `ferry-garage`: starts one test Garage node through [`Garage::start`] (the same bootstrap the
//! Rust tests use), prints its connection as one JSON line on stdout, and stops it (by PID, on
//! drop) when stdin closes. The e2e specs start Garage through this binary, so the bootstrap
//! exists once.

use ferry_testkit::garage::Garage;
use tokio::io::AsyncReadExt;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let garage = Garage::start().await;
    println!(
        "{{\"endpoint\":\"{}\",\"region\":\"{}\",\"accessKey\":\"{}\",\"secretKey\":\"{}\",\"bucket\":\"{}\"}}",
        garage.endpoint, garage.region, garage.access_key, garage.secret_key, garage.bucket
    );
    // Until the parent closes stdin (or exits): then Garage is stopped and its directory removed.
    let mut sink = Vec::new();
    let _ = tokio::io::stdin().read_to_end(&mut sink).await;
    drop(garage);
}
