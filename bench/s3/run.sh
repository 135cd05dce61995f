#!/usr/bin/env bash
# S3 benchmark: a 1 GiB multipart upload from headless Chromium straight to a local Garage
# bucket, signed by `ferry`'s /s3 routes: @ferry/core's S3MultipartUploader (5 parts in flight)
# vs Uppy's @uppy/aws-s3 6.3.1 (parts of one file one at a time), same page, same run,
# BENCH_REPS (default 2) alternating runs each, on raw loopback and with 40 ms of emulated
# latency per request (BENCH_LATENCIES_MS). Goal: Ferry at least 2x Uppy's throughput.
# Prints figures and the ratio; never fails on timing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

[[ -d node_modules ]] || npm ci --no-audit --no-fund
[[ -d "$here/node_modules/@uppy/aws-s3" ]] || (cd "$here" && npm ci --no-audit --no-fund --no-workspaces)
scripts/ensure-garage.sh
if [[ -z ${FERRY_BIN:-} ]]; then
  cargo build -q -p ferry
  export FERRY_BIN="${CARGO_TARGET_DIR:-$root/target}/debug/ferry"
fi

out="$root/bench/results/s3"
mkdir -p "$out"
npx --no-install vite build --config "$here/vite.config.mjs" >/dev/null
# Node 20 runs no TypeScript: bundle the driver (and the e2e helpers it shares) first.
npx --no-install rolldown "$here/measure.ts" --platform node --format esm \
  --external playwright-core --file "$out/measure.mjs" >/dev/null

echo "$(( ${BENCH_SIZE:-1073741824} / 1048576 )) MiB multipart upload, Chromium -> Garage on loopback, signed by ferry:"
node "$out/measure.mjs" "$out/page" | tee "$out/timing.jsonl" | sed 's/^/  /'

node - "$out/timing.jsonl" <<'JS'
const runs = require('node:fs').readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
for (const latency of [...new Set(runs.map((r) => r.latency))]) {
  const of = (peer) => runs.filter((r) => r.peer === peer && r.latency === latency).map((r) => r.mbps);
  const f = median(of('ferry'));
  const u = median(of('uppy'));
  const label = latency ? `${latency} ms emulated latency` : 'loopback, no added latency';
  console.log(`  ${label}: median Ferry ${f.toFixed(1)} MB/s, Uppy ${u.toFixed(1)} MB/s (${of('ferry').length} runs each); Ferry / Uppy ${(f / u).toFixed(2)}x (goal >= 2x: ${f / u >= 2 ? 'met' : 'missed'})`);
}
JS
