//! The concurrent tus client: N uploads started at once, each a creation POST and one PATCH of
//! the whole body, timed per upload and end to end; the stored files are checked by sha256
//! afterwards (not timed), from the store's directory or, for object stores and fleets, by
//! reading each upload back with a GET. Same contract and output as `bench/tus/concurrent.mjs`.
//! With several instances of one fleet, upload i is created on instance i mod k and patched on
//! the next one, so every PATCH takes the fleet's cross-instance path.

use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rand::RngCore;
use reqwest::StatusCode;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::Error;

/// Runs the measurement against `bases` (one server, or instances of one fleet) and prints its
/// JSON line on stdout. `store_dir` `-` reads the uploads back over HTTP. `stay`: each upload
/// is patched where it was created.
pub async fn run(
    bases: &[String],
    store_dir: &Path,
    n: usize,
    size: usize,
    stay: bool,
) -> Result<(), Error> {
    if n == 0 {
        return Err("N must be at least 1".into());
    }
    let endpoints = bases
        .iter()
        .map(|b| {
            let base = reqwest::Url::parse(b).map_err(|err| format!("bad BASE_URL {b}: {err}"))?;
            Ok::<_, Error>(base.join("files/")?)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let bodies = random_bodies(n, size);
    // HTTP/1.1 keep-alive with no cap on connections or idle ones: every upload gets its own
    // connection, so all N really run at the same time.
    let client = reqwest::Client::builder()
        .http1_only()
        .pool_max_idle_per_host(usize::MAX)
        .tcp_nodelay(true)
        .build()?;

    let started = Instant::now();
    let k = endpoints.len();
    let tasks: Vec<_> = bodies
        .iter()
        .enumerate()
        .map(|(i, body)| {
            let next = if stay { i } else { i + 1 };
            let (create_on, patch_on) = (endpoints[i % k].clone(), endpoints[next % k].clone());
            tokio::spawn(one(client.clone(), create_on, patch_on, body.clone()))
        })
        .collect();
    let mut results = Vec::with_capacity(n);
    for task in tasks {
        results.push(task.await??);
    }
    let seconds = started.elapsed().as_secs_f64();

    let mut ok = true;
    for ((_, id), body) in results.iter().zip(&bodies) {
        let stored = if store_dir == Path::new("-") {
            let url = endpoints[0].join(id)?;
            client.get(url).send().await?.bytes().await?.to_vec()
        } else {
            let path = store_dir.join(id);
            std::fs::read(&path).map_err(|err| format!("cannot read {}: {err}", path.display()))?
        };
        if Sha256::digest(&stored) != Sha256::digest(body) {
            eprintln!("sha256 mismatch: upload {id}");
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
    patch_on: reqwest::Url,
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
    let created_at = files.join(&location)?;
    let id = created_at
        .path_segments()
        .and_then(|mut segments| segments.next_back())
        .filter(|id| !id.is_empty())
        .ok_or_else(|| format!("create: Location {location} has no id"))?
        .to_owned();
    let patched = client
        .patch(patch_on.join(&id)?)
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
