#!/usr/bin/env bash
# Build profiles: the `release` binary (`make run`) against the `dist` binary (what ships), or any
# two builds (FERRY_BIN against FERRY_DIST_BIN), on the workloads of bench/tus and
# bench/companion, both binaries in one run, alternating (the order flips every repetition):
#   1. tus-patch: one PATCH of SIZE_MIB (default 1024) MiB to the fs store, sent by curl (MB/s);
#   2. tus-concurrent: UPLOADS (default 200) concurrent uploads of 1 MiB from bench/tus's Rust
#      client, ferry-tus-loadgen (uploads/s, p99; it checks every stored file by sha256);
#   3. companion: a SIZE_MIB link import from a loopback origin into ferry's own tus endpoint,
#      driven by bench/companion's drive.mjs (seconds; the stored file is compared with cmp).
# The tus runs use `--fsync never`, so the disk's flush speed does not hide the binaries' own.
# Each run also records the server's CPU seconds (user + sys): on a machine shared with other
# builds, CPU time is steadier than wall time. Prints medians and dist / release ratios; never
# fails on timing. REPS (default 5), WORKLOADS (default all three). FERRY_BIN (release) and FERRY_DIST_BIN (dist) skip the
# builds; the loadgen is built into CARGO_TARGET_DIR (default target/). Results:
# bench/results/profiles/runs.tsv.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
reps="${REPS:-5}"
size_mib="${SIZE_MIB:-1024}"
uploads="${UPLOADS:-200}"
read -r -a workloads <<<"${WORKLOADS:-tus-patch tus-concurrent companion}"
target="${CARGO_TARGET_DIR:-$root/target}"

if [[ -z ${FERRY_BIN:-} ]]; then
  (cd "$root" && cargo build -q --release -p ferry)
  FERRY_BIN="$target/release/ferry"
fi
if [[ -z ${FERRY_DIST_BIN:-} ]]; then
  (cd "$root" && cargo build -q --profile dist -p ferry)
  FERRY_DIST_BIN="$target/dist/ferry"
fi
loadgen="${FERRY_LOADGEN_BIN:-$target/release/ferry-tus-loadgen}"
if [[ -z ${FERRY_LOADGEN_BIN:-} && " ${workloads[*]} " == *" tus-concurrent "* ]]; then
  (cd "$root" && cargo build -q --release -p ferry-tus-loadgen)
fi
if [[ ! -d $root/bench/companion/node_modules/ws ]]; then
  (cd "$root/bench/companion" && flock /tmp/ferry-npm.lock npm ci --no-audit --no-fund --silent)
fi
ticks="$(getconf CLK_TCK)"

work="$(mktemp -d /tmp/ferry-bench-profiles.XXXXXX)"
out="$root/bench/results/profiles"
mkdir -p "$out"
: >"$out/runs.tsv"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { node -e 's=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
wait_ready() {
  for _ in $(seq 200); do
    curl -s -o /dev/null "$1" && return 0
    sleep 0.05
  done
  echo "not ready: $1" >&2
  exit 1
}
cpu_secs() { awk -v t="$ticks" '{printf "%.2f", ($14 + $15) / t}' "/proc/$1/stat"; }
settle() { sync; sleep 0.5; }

size=$((size_mib * 1048576))
echo "preparing ${size_mib} MiB of random bytes ..."
head -c "$size" /dev/urandom >"$work/src.bin"
origin_port="$(free_port)"
node "$root/bench/companion/peers.mjs" origin "$origin_port" "$work/src.bin" >/dev/null &
pids+=($!)
source_url="http://127.0.0.1:$origin_port/src.bin"
wait_ready "$source_url"

# start BIN: a ferry on a fresh data directory; sets $fpid and $base.
start() {
  local port
  port="$(free_port)"
  base="http://127.0.0.1:$port"
  rm -rf "$work/data" && mkdir -p "$work/data"
  "$1" serve --listen "127.0.0.1:$port" --data-dir "$work/data" --no-ui --fsync never \
    --max-uploads-per-client 0 --allow-local-urls >/dev/null 2>&1 &
  fpid=$!
  pids+=("$fpid")
  wait_ready "$base/health"
}
stop() {
  kill "$fpid" 2>/dev/null || true
  wait "$fpid" 2>/dev/null || true
}

# run PROFILE BIN WORKLOAD: one measurement; appends "profile workload figure cpu ok".
run() {
  local profile=$1 bin=$2 workload=$3 figure ok=bad url secs line
  settle
  start "$bin"
  case $workload in
    tus-patch)
      url="$(curl -s -D - -o /dev/null -X POST -H 'Tus-Resumable: 1.0.0' -H "Upload-Length: $size" \
        "$base/files/" | awk 'tolower($1)=="location:" {print $2}' | tr -d '\r')"
      secs="$(curl -s -o /dev/null -H 'Expect:' -X PATCH -H 'Tus-Resumable: 1.0.0' \
        -H 'Upload-Offset: 0' -H 'Content-Type: application/offset+octet-stream' \
        -T "$work/src.bin" -w '%{time_total}' "$base$url")"
      figure="$(awk -v s="$secs" -v b="$size" 'BEGIN {printf "%.1f", b / 1e6 / s}')"
      cmp -s "$work/data/tus/${url##*/}" "$work/src.bin" && ok=ok ;;
    tus-concurrent)
      line="$("$loadgen" upload "$base" "$work/data/tus" "$uploads" 1048576)"
      figure="$(node -e 'const r=JSON.parse(process.argv[1]);console.log(r.perSecond.toFixed(1)+"/"+r.p99.toFixed(0))' "$line")"
      [[ $line == *'"ok":true'* ]] && ok=ok ;;
    companion)
      read -r secs url < <(node "$root/bench/companion/drive.mjs" "$base" "$source_url" "$base/files/" "$size")
      figure="$secs"
      curl -s "$url" | cmp -s - "$work/src.bin" && ok=ok ;;
  esac
  local cpu
  cpu="$(cpu_secs "$fpid")"
  stop
  printf '%s\t%s\t%s\t%s\t%s\n' "$profile" "$workload" "$figure" "$cpu" "$ok" | tee -a "$out/runs.tsv" | sed 's/^/    /'
}

echo "profile, workload, figure (MB/s | uploads/s/p99 ms | seconds), server CPU s, check:"
for rep in $(seq "$reps"); do
  for workload in "${workloads[@]}"; do
    if ((rep % 2)); then
      run release "$FERRY_BIN" "$workload"
      run dist "$FERRY_DIST_BIN" "$workload"
    else
      run dist "$FERRY_DIST_BIN" "$workload"
      run release "$FERRY_BIN" "$workload"
    fi
  done
done

node - "$out/runs.tsv" <<'JS'
const fs = require('node:fs');
const rows = fs.readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => l.split('\t'));
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const of = (p, w, i) => rows.filter((r) => r[0] === p && r[1] === w).map((r) => Number(r[2].split('/')[i ?? 0]));
const cpu = (p, w) => median(rows.filter((r) => r[0] === p && r[1] === w).map((r) => Number(r[3])));
const bad = rows.filter((r) => r[4] !== 'ok').length;
console.log(`\nsummary: medians of each workload's reps; failed checks: ${bad}`);
const line = (label, w, i, unit, higherIsBetter) => {
  if (!of('dist', w).length) return;
  const [r, d] = [median(of('release', w, i)), median(of('dist', w, i))];
  const speed = higherIsBetter ? r / d : d / r;
  console.log(`  ${label.padEnd(28)} release ${r.toFixed(1).padStart(7)} ${unit.padEnd(9)} dist ${d.toFixed(1).padStart(7)} ${unit.padEnd(9)} release speed ${(100 * speed).toFixed(0)}% of dist`);
};
line('1 GiB PATCH', 'tus-patch', 0, 'MB/s', true);
line('200 x 1 MiB concurrent', 'tus-concurrent', 0, 'uploads/s', true);
line('200 x 1 MiB concurrent p99', 'tus-concurrent', 1, 'ms', false);
line('link import', 'companion', 0, 's', false);
for (const w of ['tus-patch', 'tus-concurrent', 'companion'].filter((w) => of('dist', w).length)) {
  console.log(`  server CPU, ${w.padEnd(15)} release ${cpu('release', w).toFixed(2)} s, dist ${cpu('dist', w).toFixed(2)} s (release / dist ${(cpu('release', w) / cpu('dist', w)).toFixed(2)}x)`);
}
JS
