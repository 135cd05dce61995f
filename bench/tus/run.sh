#!/usr/bin/env bash
# tus benchmark, all peers in one run on the same machine and the same bytes:
#  1. one PATCH of BENCH_SIZE (default 1 GiB) to the fs store: ferry (release build) vs
#     @tus/server 2.4.5 + @tus/file-store 2.1.1 vs a baseline server that only writes the body
#     to disk; curl sends the file in every case. Throughput, peak RSS (VmHWM), sha256 checked.
#  2. BENCH_UPLOADS (default 200) concurrent uploads of 1 MiB (POST + PATCH each) from one Node
#     client: uploads per second and p99 latency, ferry vs @tus/server, every file's sha256
#     checked.
# BENCH_REPS (default 5) repetitions, interleaved, peer order rotated each repetition; medians
# printed with the ratios against the goals (>= 3x @tus/server, >= 0.8x baseline, RSS < 32 MiB;
# >= 3x uploads/s). Never fails on timing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
reps="${BENCH_REPS:-5}"
size="${BENCH_SIZE:-1073741824}"
uploads="${BENCH_UPLOADS:-200}"

[[ -d "$here/node_modules/@tus/server" ]] || (cd "$here" && npm ci --no-audit --no-fund --no-workspaces)
if [[ -z ${FERRY_BIN:-} ]]; then
  (cd "$root" && cargo build -q --release -p ferry)
  FERRY_BIN="${CARGO_TARGET_DIR:-$root/target}/release/ferry"
fi

work="$(mktemp -d /tmp/ferry-bench-tus.XXXXXX)"
out="$root/bench/results/tus"
mkdir -p "$out"
: >"$out/patch.tsv"
: >"$out/concurrent.jsonl"
pid=""
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { node -e 's=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# start PEER DIR: starts a server, sets $pid, $base and $store (where uploads land).
start() {
  local peer=$1 dir=$2 port
  port="$(free_port)"
  base="http://127.0.0.1:$port"
  case $peer in
    ferry)
      "$FERRY_BIN" serve --listen "127.0.0.1:$port" --data-dir "$dir" --ui-dir "$dir" \
        --max-uploads-per-client 0 >/dev/null 2>&1 &
      store="$dir/tus" ;;
    tus-node)
      node "$here/tus-server.mjs" "$port" "$dir" >/dev/null 2>&1 &
      store="$dir" ;;
    baseline)
      node "$here/sink.mjs" "$port" "$dir/sink.bin" >/dev/null 2>&1 &
      store="$dir" ;;
  esac
  pid=$!
  for _ in $(seq 200); do
    curl -s -o /dev/null -X OPTIONS "$base/files/" && return 0
    sleep 0.05
  done
  echo "$peer did not start" >&2
  exit 1
}

stop() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
}

peak_rss_kib() { awk '/VmHWM/ {print $2}' "/proc/$pid/status"; }

echo "preparing a $((size / 1048576)) MiB random file ..."
head -c "$size" /dev/urandom >"$work/src.bin"
want="$(sha256sum "$work/src.bin" | cut -d' ' -f1)"

# patch_once PEER: one upload of the file in a single request; appends "peer secs rss_kib ok".
patch_once() {
  local peer=$1 dir="$work/$1" url stored secs
  rm -rf "$dir" && mkdir -p "$dir"
  start "$peer" "$dir"
  if [[ $peer == baseline ]]; then
    url="$base/upload"
    secs="$(curl -s -o /dev/null -H 'Expect:' -X PUT -T "$work/src.bin" -w '%{time_total}' "$url")"
    stored="$dir/sink.bin"
  else
    url="$(curl -s -D - -o /dev/null -X POST -H 'Tus-Resumable: 1.0.0' -H "Upload-Length: $size" \
      "$base/files/" | awk 'tolower($1)=="location:" {print $2}' | tr -d '\r')"
    [[ $url == http* ]] || url="$base$url"
    secs="$(curl -s -o /dev/null -H 'Expect:' -X PATCH -H 'Tus-Resumable: 1.0.0' \
      -H 'Upload-Offset: 0' -H 'Content-Type: application/offset+octet-stream' \
      -T "$work/src.bin" -w '%{time_total}' "$url")"
    stored="$store/${url##*/}"
  fi
  local rss ok=bad
  rss="$(peak_rss_kib)"
  stop
  [[ "$(sha256sum "$stored" | cut -d' ' -f1)" == "$want" ]] && ok=ok
  printf '%s\t%s\t%s\t%s\n' "$peer" "$secs" "$rss" "$ok" | tee -a "$out/patch.tsv" | sed 's/^/    /'
  rm -rf "$dir"
}

concurrent_once() {
  local peer=$1 dir="$work/$1" line rss
  rm -rf "$dir" && mkdir -p "$dir"
  start "$peer" "$dir"
  line="$(node "$here/concurrent.mjs" "$base" "$store" "$uploads" 1048576)"
  rss="$(peak_rss_kib)"
  stop
  echo "{\"peer\":\"$peer\",\"rssKib\":$rss,\"run\":$line}" | tee -a "$out/concurrent.jsonl" | sed 's/^/    /'
  rm -rf "$dir"
}

echo "1) one PATCH of $((size / 1048576)) MiB, $reps reps (peer, seconds, peak RSS KiB, sha256):"
peers=(ferry tus-node baseline)
for rep in $(seq "$reps"); do
  for i in 0 1 2; do patch_once "${peers[$(((rep + i) % 3))]}"; done
done

echo "2) $uploads concurrent uploads of 1 MiB, $reps reps:"
for rep in $(seq "$reps"); do
  if ((rep % 2)); then order=(ferry tus-node); else order=(tus-node ferry); fi
  for peer in "${order[@]}"; do concurrent_once "$peer"; done
done

node - "$out/patch.tsv" "$out/concurrent.jsonl" "$size" <<'JS'
const fs = require('node:fs');
const [tsv, jsonl, size] = process.argv.slice(2);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const rows = fs.readFileSync(tsv, 'utf8').trim().split('\n').map((l) => l.split('\t'));
const of = (peer) => rows.filter((r) => r[0] === peer);
const mbps = (peer) => median(of(peer).map((r) => Number(size) / 1e6 / Number(r[1])));
const rss = (peer) => Math.max(...of(peer).map((r) => Number(r[2]))) / 1024;
const bad = rows.filter((r) => r[3] !== 'ok').length;
console.log(`\nsummary (medians of ${of('ferry').length} reps; sha256 mismatches: ${bad})`);
for (const p of ['ferry', 'tus-node', 'baseline']) console.log(`  single PATCH ${p.padEnd(9)} ${mbps(p).toFixed(0).padStart(5)} MB/s   peak RSS ${rss(p).toFixed(1)} MiB`);
const vsTus = mbps('ferry') / mbps('tus-node');
const vsBase = mbps('ferry') / mbps('baseline');
console.log(`  ferry / @tus/server ${vsTus.toFixed(2)}x (goal >= 3x: ${vsTus >= 3 ? 'met' : 'missed'}); ferry / baseline ${vsBase.toFixed(2)}x (goal >= 0.8x: ${vsBase >= 0.8 ? 'met' : 'missed'}); ferry peak RSS ${rss('ferry').toFixed(1)} MiB (goal < 32 MiB: ${rss('ferry') < 32 ? 'met' : 'missed'})`);
const runs = fs.readFileSync(jsonl, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const c = (peer, key) => median(runs.filter((r) => r.peer === peer).map((r) => r.run[key]));
const cbad = runs.filter((r) => !r.run.ok).length;
for (const p of ['ferry', 'tus-node']) console.log(`  concurrent ${p.padEnd(9)} ${c(p, 'perSecond').toFixed(0).padStart(5)} uploads/s   p50 ${c(p, 'p50').toFixed(0)} ms   p99 ${c(p, 'p99').toFixed(0)} ms`);
const ups = c('ferry', 'perSecond') / c('tus-node', 'perSecond');
console.log(`  ferry / @tus/server uploads/s ${ups.toFixed(2)}x (goal >= 3x: ${ups >= 3 ? 'met' : 'missed'}); sha256 mismatches: ${cbad}`);
JS
