#!/usr/bin/env bash
# Many small files: COUNT (500) real files of KIB (10) KiB picked through each Dashboard in
# headless Chromium and uploaded over tus, timed from the upload click to done. Ferry's demo page
# of this checkout served by the release `ferry serve` (default durability: --fsync always) vs
# Uppy's Dashboard + @uppy/tus served with @tus/server + @tus/file-store from one Node process
# (which never fsyncs). Every stored file is compared with its source; request counts (creations,
# and requests to upload URLs) explain the ratio. Chromium is driven over a bare DevTools pipe
# (bench/support/cdp.ts says why). Goal: Ferry at least 3x faster. Figures only; never fails on timing.
# Other peers (measure.mjs says more): `floor`, a bare page POSTing each file once on Ferry's server;
# `wire`, the same POSTs from Node over 6 connections; `ferry?QUERY`, `ferry@DIR`, `NAME --flag`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

[[ -d node_modules ]] || npm ci --no-audit --no-fund
[[ -d "$here/node_modules/@tus/server" ]] || (cd "$here" && npm ci --no-audit --no-fund --legacy-peer-deps --no-workspaces)
export FERRY_BIN="${FERRY_BIN:-$root/target/release/ferry}"
[[ -x $FERRY_BIN ]] || cargo build --release -p ferry

out="$root/bench/results/small-files"
for page in ferry uppy; do
  BENCH_PAGE=$page npx --no-install vite build --config "$here/vite.config.mjs" >/dev/null 2>&1
done

# Both ways of driving Chromium in one run unless told otherwise (measure.mjs says why).
[[ -n ${HARNESSES:-} || ${DEVTOOLS_NETWORK:-} == 1 ]] || export HARNESSES=bare,network,playwright

# Node 20 runs no TypeScript: bundle the driver (and the e2e helpers it imports) first.
npx --no-install rolldown "$here/measure.mjs" --platform node --format esm \
  --external playwright-core --file "$out/measure.bundle.mjs" >/dev/null
echo "${FILES:-500} files of ${KIB:-10} KiB through each Dashboard to its tus endpoint, headless Chromium, ${REPS:-3} reps:"
node "$out/measure.bundle.mjs" "$out" "$here" | tee "$out/runs.jsonl" | sed 's/^/  /'
grep '"summary"' "$out/runs.jsonl" | while read -r summary; do
  harness=$(sed -n 's/.*"harness":"\([^"]*\)".*/\1/p' <<<"$summary")
  ratio=$(sed -n 's/.*"uppyOverFerry":\([0-9.]*\).*/\1/p' <<<"$summary")
  [[ -z $ratio ]] || echo "  Uppy / Ferry time, driven by $harness: ${ratio}x  (goal: at least 3x)"
  # With the bare page among the peers (PEERS=ferry,floor,uppy): Ferry against that floor.
  floor=$(sed -n 's/.*"overFloor":{[^}]*"ferry":\([0-9.]*\).*/\1/p' <<<"$summary")
  [[ -z $floor ]] || echo "  Ferry / floor page time, driven by $harness: ${floor}x"
done
