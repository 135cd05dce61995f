#!/usr/bin/env bash
# Core benchmark: in headless Chromium, the time from addFiles(N generated files) until the
# Dashboard has painted the new count, for Ferry (@ferry/core + @ferry/react, the demo page)
# and Uppy (@uppy/core 6.3 + @uppy/react 6.1 + @uppy/dashboard), both built with the same Vite
# in this run. Goal: 10,000 files under 300 ms, 100,000 under 3 s, linear. Never fails on timing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

[[ -d node_modules ]] || npm ci --no-audit --no-fund
[[ -d "$here/node_modules/@uppy/dashboard" ]] ||
  (cd "$here" && npm ci --no-audit --no-fund --legacy-peer-deps --no-workspaces)

out="$root/bench/results/core"
mkdir -p "$out"
for page in ferry uppy; do
  BENCH_PAGE=$page npx --no-install vite build --config "$here/vite.config.mjs" >/dev/null
done

echo "addFiles(N) until the Dashboard shows N, headless Chromium (ms):"
# Node 20 runs no TypeScript: bundle the driver (and the shared page driver it imports) first.
npx --no-install rolldown "$here/measure.mjs" --platform node --format esm \
  --external playwright-core --file "$out/measure.bundle.mjs" >/dev/null
node "$out/measure.bundle.mjs" "$out" | tee "$out/timing.jsonl" | sed 's/^/  /'

node - "$out/timing.jsonl" <<'JS'
const lines = require('node:fs').readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const ms = (page, files) => lines.find((l) => l.page === page && l.files === files)?.ms ?? null;
const fmt = (v) => (v === null ? 'n/a' : `${v} ms`);
const per = (page, files) => (ms(page, files) === null ? 'n/a' : `${((ms(page, files) / files) * 1000).toFixed(1)} µs/file`);
for (const n of [1000, 10000, 100000]) {
  const f = ms('ferry', n);
  const u = ms('uppy', n);
  const ratio = f && u ? `  Uppy / Ferry: ${(u / f).toFixed(1)}x` : '';
  console.log(`  ${String(n).padStart(6)} files: Ferry ${fmt(f)} (${per('ferry', n)}), Uppy ${fmt(u)}${ratio}`);
}
const f10 = ms('ferry', 10000);
const f100 = ms('ferry', 100000);
if (f10 !== null) console.log(`  goal 10,000 < 300 ms: ${f10 < 300 ? 'met' : 'missed'}`);
if (f100 !== null) console.log(`  goal 100,000 < 3000 ms: ${f100 < 3000 ? 'met' : 'missed'}`);
if (f10 && f100) console.log(`  Ferry 100,000 / 10,000: ${(f100 / f10).toFixed(1)}x (linear = 10x)`);
const u1 = ms('uppy', 1000);
const u10 = ms('uppy', 10000);
if (u1 && u10) console.log(`  Uppy 10,000 / 1,000: ${(u10 / u1).toFixed(1)}x (linear = 10x)`);
JS
