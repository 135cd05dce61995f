#!/usr/bin/env bash
# S3 benchmark: a 1 GiB multipart upload from headless Chromium straight to a local Garage
# bucket, signed by `ferry`'s /s3 routes: @ferry/core's S3MultipartUploader (5 parts in flight)
# vs Uppy's @uppy/aws-s3 6.3.1 (parts of one file one at a time) vs the browser's floor `bare`
# (page/bare.js: the same parts PUT with plain XHR, no library), same page, same run,
# BENCH_REPS (default 2) alternating runs each, on raw loopback and with 40 ms of emulated
# latency per request (BENCH_LATENCIES_MS). Goal: Ferry at least 2x Uppy's throughput. The floor,
# in the same run on raw loopback: Garage's own ingest of the same file with boto3 (native.py,
# 5 MiB parts, 5 in flight; boto3 is installed into a venv under bench/results/s3 on first run).
# Goal: Ferry at least 0.8x of it. Each run also reports the CPU seconds each process spent
# (cpu.ts: the page's renderer, Chromium's browser process and network service, Garage, ferry,
# boto3) and, with BENCH_PROFILE=1, the page's main-thread time: whose work a distance is.
# BENCH_DRIVER=cdp drives the pages over a bare DevTools pipe instead of Playwright (whose
# Network domain, on in every page it drives, slows some peers more than others).
# Prints figures and the ratios; never fails on timing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
boto3_version=1.44.8

[[ -d node_modules ]] || npm ci --no-audit --no-fund
[[ -d "$here/node_modules/@uppy/aws-s3" ]] || (cd "$here" && npm ci --no-audit --no-fund --no-workspaces)
scripts/ensure-garage.sh
# The bundled driver runs from bench/results/s3, so the e2e helpers inside it cannot find the
# binaries relative to the repository: name both explicitly (ferry signs, ferry-garage is the
# testkit's launcher of the Garage it uploads to).
target="${CARGO_TARGET_DIR:-$root/target}"
[[ -n ${FERRY_BIN:-} ]] || cargo build -q -p ferry
[[ -n ${FERRY_GARAGE_BIN:-} ]] || cargo build -q -p ferry-testkit --bins
export FERRY_BIN="${FERRY_BIN:-$target/debug/ferry}"
export FERRY_GARAGE_BIN="${FERRY_GARAGE_BIN:-$target/debug/ferry-garage}"

out="$root/bench/results/s3"
mkdir -p "$out"
# boto3 for the floor, pinned, in the suite's own venv (not the system's Python).
if [[ ! -x $out/venv/bin/python ]] || ! "$out/venv/bin/python" -c 'import boto3' 2>/dev/null; then
  python3 -m venv "$out/venv"
  "$out/venv/bin/pip" install -q --disable-pip-version-check "boto3==$boto3_version"
fi
export BENCH_PYTHON="$out/venv/bin/python"
# BENCH_FERRY_AT=COMMIT: that commit's @ferry/core runs on the same page as `ferry-at`, beside
# this checkout's, in the same run (its sources exported under bench/results/s3, so they resolve
# this checkout's node_modules).
if [[ -n ${BENCH_FERRY_AT:-} ]]; then
  at="$out/core-at-$(git rev-parse --short "$BENCH_FERRY_AT")"
  rm -rf "$at" && mkdir -p "$at"
  git archive "$BENCH_FERRY_AT" packages/core/src | tar -x -C "$at"
  export BENCH_CORE_AT_SRC="$at/packages/core/src/index.ts"
  export BENCH_PEERS="${BENCH_PEERS:-ferry,ferry-at,uppy,bare}"
fi
npx --no-install vite build --config "$here/vite.config.mjs" >/dev/null
# Node 20 runs no TypeScript: bundle the driver (and the e2e helpers it shares) first.
npx --no-install rolldown "$here/measure.ts" --platform node --format esm \
  --external playwright-core --file "$out/measure.mjs" >/dev/null

echo "$(( ${BENCH_SIZE:-1073741824} / 1048576 )) MiB multipart upload, Chromium -> Garage on loopback, signed by ferry:"
node "$out/measure.mjs" "$out/page" "$here/native.py" | tee "$out/timing.jsonl" | sed 's/^/  /'

node - "$out/timing.jsonl" <<'JS'
const runs = require('node:fs').readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const goal = (ok) => (ok ? 'met' : 'missed');
const at = process.env.BENCH_FERRY_AT;
for (const latency of [...new Set(runs.map((r) => r.latency))]) {
  const of = (peer) => runs.filter((r) => r.peer === peer && r.latency === latency).map((r) => r.mbps);
  const peers = [...new Set(runs.filter((r) => r.latency === latency).map((r) => r.peer))];
  const u = of('uppy').length ? median(of('uppy')) : undefined;
  const n = of('native').length ? median(of('native')) : undefined;
  const b = of('bare').length ? median(of('bare')) : undefined;
  console.log(`  ${latency ? `${latency} ms emulated latency` : 'loopback, no added latency'} (medians of ${of(peers[0]).length} runs):`);
  for (const peer of peers) {
    const m = median(of(peer));
    const name =
      peer === 'native' ? "floor: Garage's own ingest (boto3, same parts)"
      : peer === 'bare' ? 'browser floor: bare page, plain XHR, same parts'
      : peer === 'ferry-at' ? `ferry at ${at}` : peer;
    const vsUppy = u && peer !== 'uppy' && peer !== 'native' ? `; / Uppy ${(m / u).toFixed(2)}x${peer === 'ferry' ? ` (goal >= 2x: ${goal(m / u >= 2)})` : ''}` : '';
    const vsFloor = n && peer !== 'native' ? `; / floor ${(m / n).toFixed(2)}x${peer === 'ferry' ? ` (goal >= 0.8x: ${goal(m / n >= 0.8)})` : ''}` : '';
    const vsBare = b && peer !== 'bare' && peer !== 'native' ? `; / bare ${(m / b).toFixed(2)}x` : '';
    console.log(`    ${name.padEnd(48)} ${m.toFixed(1).padStart(6)} MB/s${vsUppy}${vsBare}${vsFloor}`);
  }
  // Paired by repetition: each peer over the bare page run in the same repetition.
  if (b) {
    for (const peer of peers.filter((p) => p !== 'bare' && p !== 'native')) {
      const pairs = [...new Set(runs.map((r) => r.rep))].map((rep) => {
        const get = (p) => runs.find((r) => r.peer === p && r.rep === rep && r.latency === latency)?.mbps;
        return get(peer) / get('bare');
      });
      console.log(`    ${peer} / bare, per repetition: ${pairs.map((x) => x.toFixed(2)).join(' ')} (median ${median(pairs).toFixed(2)})`);
    }
  }
  // Where each peer's CPU went (median seconds per run, by process role; cpu.ts).
  console.log('    CPU seconds per run by process (median), and the page main thread with BENCH_PROFILE=1:');
  for (const peer of peers) {
    const mine = runs.filter((r) => r.peer === peer && r.latency === latency);
    const roles = [...new Set(mine.flatMap((r) => Object.keys(r.cpu ?? {})))].sort();
    const cpu = roles.map((role) => `${role} ${median(mine.map((r) => r.cpu?.[role] ?? 0)).toFixed(2)}`);
    const main = mine[0]?.main
      ? `; main thread: tasks ${median(mine.map((r) => r.main.TaskDuration))} ms, script ${median(mine.map((r) => r.main.ScriptDuration))} ms`
      : '';
    console.log(`      ${peer.padEnd(20)} ${cpu.join(', ')}${main}`);
  }
  if (of('ferry-at').length && of('ferry').length) {
    // Paired by repetition: the two engines ran back to back, under the same load.
    const pairs = [...new Set(runs.map((r) => r.rep))].map((rep) => {
      const get = (peer) => runs.find((r) => r.peer === peer && r.rep === rep && r.latency === latency)?.mbps;
      return get('ferry') / get('ferry-at');
    });
    console.log(`    this checkout / ${at}, per repetition: ${pairs.map((x) => x.toFixed(2)).join(' ')} (median ${median(pairs).toFixed(2)})`);
  }
}
JS
