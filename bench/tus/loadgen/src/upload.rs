//! The concurrent tus client: N uploads started at once, each a creation POST and one PATCH of
//! the whole body, timed per upload and end to end; the stored files are checked by sha256
//! afterwards (not timed). Same contract and output as `bench/tus/concurrent.mjs`.

use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rand::RngCore;
use reqwest::StatusCode;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::Error;

/// Runs the measurement and prints its JSON line on stdout.
pub async fn run(base_url: &str, store_dir: &Path, n: usize, size: usize) -> Result<(), Error> {
    if n == 0 {
        return Err("N must be at least 1".into());
    }
    let base = reqwest::Url::parse(base_url).map_err(|err| format!("bad BASE_URL: {err}"))?;
    let files = base.join("files/")?;
    let bodies = random_bodies(n, size);
    // HTTP/1.1 keep-alive with no cap on connections or idle ones: every upload gets its own
    // connection, so all N really run at the same time.
    let client = reqwest::Client::builder()
        .http1_only()
        .pool_max_idle_per_host(usize::MAX)
        .tcp_nodelay(true)
        .build()?;

    let started = Instant::now();
    let tasks: Vec<_> = bodies
        .iter()
        .map(|body| tokio::spawn(one(client.clone(), files.clone(), body.clone())))
        .collect();
    let mut results = Vec::with_capacity(n);
    for task in tasks {
        results.push(task.await??);
    }
    let seconds = started.elapsed().as_secs_f64();

    let mut ok = true;
    for ((_, id), body) in results.iter().zip(&bodies) {
        let path = store_dir.join(id);
        let stored =
            std::fs::read(&path).map_err(|err| format!("cannot read {}: {err}", path.display()))?;
        if Sha256::digest(&stored) != Sha256::digest(body) {
            eprintln!("sha256 mismatch: {}", path.display());
            ok = false;
        }
    }
    let mut ms: Vec<f64> = results
        .iter()
        .map(|(took, _)| took.as_secs_f64() * 1000.0)
        .collect();
    ms.sort_by(f64::total_cmp);
    let line = Summary {
        seconds,
        per_second: n as f64 / seconds,
        p50: percentile(&ms, 50.0),
        p99: percentile(&ms, 99.0),
        ok,
    };
    println!("{}", serde_json::to_string(&line)?);
    Ok(())
}

/// The JSON line, fields in the order concurrent.mjs prints them; latencies in milliseconds.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    seconds: f64,
    per_second: f64,
    p50: f64,
    p99: f64,
    ok: bool,
}

/// N random bodies, prepared before the clock starts; cloning a `Bytes` shares, never copies.
fn random_bodies(n: usize, size: usize) -> Vec<Bytes> {
    let mut rng = rand::rng();
    (0..n)
        .map(|_| {
            let mut body = vec![0; size];
            rng.fill_bytes(&mut body);
            Bytes::from(body)
        })
        .collect()
}

/// One upload; returns its latency (start of POST to the 204) and the id the server stored it as.
async fn one(
    client: reqwest::Client,
    files: reqwest::Url,
    body: Bytes,
) -> Result<(Duration, String), Error> {
    let started = Instant::now();
    let created = client
        .post(files.clone())
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", body.len().to_string())
        .send()
        .await?;
    let status = created.status();
    let location = created
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    // Read the body to the end so the connection goes back to the pool for the PATCH.
    created.bytes().await?;
    if status != StatusCode::CREATED {
        return Err(format!("create: {status}").into());
    }
    let location = location.ok_or("create: 201 without a Location")?;
    let url = files.join(&location)?;
    let id = url
        .path_segments()
        .and_then(|mut segments| segments.next_back())
        .filter(|id| !id.is_empty())
        .ok_or_else(|| format!("create: Location {location} has no id"))?
        .to_owned();
    let patched = client
        .patch(url)
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .body(body)
        .send()
        .await?;
    let status = patched.status();
    patched.bytes().await?;
    if status != StatusCode::NO_CONTENT {
        return Err(format!("patch: {status}").into());
    }
    Ok((started.elapsed(), id))
}

/// Nearest-rank percentile of sorted values, as in concurrent.mjs.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}
