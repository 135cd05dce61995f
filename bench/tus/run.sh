#!/usr/bin/env bash
# tus benchmark, all peers in one run on the same machine and the same bytes:
#  1. one PATCH of BENCH_SIZE (default 1 GiB) to the fs store, sent by curl in every case.
#     Peers: ferry (release build) as configured by default (`--fsync always`: every PATCH is on
#     disk before its 204) and with `--fsync never` (`ferry-nosync`: write-back left to the
#     kernel, the durability tusd and @tus/server give, since neither ever fsyncs); @tus/server
#     2.4.5 + @tus/file-store 2.1.1; two write-only
#     baselines that just write the body to one file (no fsync): `baseline` in Node (sink.mjs)
#     and `baseline-rust` (ferry-tus-loadgen sink --file); and `discard` (ferry-tus-loadgen sink
#     --discard), which stores nothing: the ceiling curl + loopback allow on this machine, printed
#     next to "3x @tus/server" so a reader sees whether that goal is physically reachable here;
#     and the floor `dd`: the same file copied into the same directory (bs=1M), what any writer
#     of those bytes into that filesystem pays (goal: ferry >= 0.8x of it); and `floor`, the
#     receive-and-store floor (ferry-tus-loadgen floor: no HTTP framework, one thread reading the
#     body with 1 MiB reads and writing each to the same directory), the least any server that
#     stores the body over loopback can do: `dd` copies each byte twice on one core, a server
#     receives it from curl (which copies it twice more on the other core) and then stores it;
#     `floor2` is the same with a reader and a writer thread overlapping, as ferry does.
#     MB/s, peak RSS (VmHWM), CPU seconds of the server (or dd) for the run, sha256 of the stored
#     file checked (n/a for discard).
#  2. BENCH_UPLOADS (default 200) concurrent uploads of 1 MiB (POST + one PATCH each), ferry (both
#     policies; the Node client only against the default) vs @tus/server, from two clients: the Rust ferry-tus-loadgen and the Node fetch client
#     (concurrent.mjs). Two clients because on a 2-core machine the Node client alone burns about
#     a core and becomes the bottleneck (it measures itself, not the server); the Rust client is
#     cheap enough to leave the cores to the server. Every run starts after `sync`, so no peer pays
#     for the write-back of another's dirty pages. Uploads/s, p50/p99 latency, CPU seconds of
#     server and client, every stored file's sha256 checked.
# BENCH_REPS (default 5) repetitions, interleaved, peer (and client) order rotated each
# repetition; medians printed with the ratios against the goals (>= 3x @tus/server, >= 0.8x the
# baselines, RSS < 32 MiB; >= 3x uploads/s). Never fails on timing. FERRY_BIN skips the ferry
# build; the loadgen is built into CARGO_TARGET_DIR (default target/). BENCH_TMP (default
# /dev/shm, a tmpfs) holds the source file and every store: set it to a disk directory to include
# the disk. BENCH_PEERS (space-separated) picks the single-PATCH peers (default: all);
# BENCH_UPLOADS=0 skips part 2; with FERRY_BEFORE_BIN (another build of ferry) the peer
# `ferry-before` runs it the default way, for before/after figures in one run. Results: bench/results/tus.
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
# FERRY_LOADGEN_BIN (bench/run sets it) skips the build: building the loadgen alone unifies
# features differently from bench/run's shared build, so cargo would link it once more.
[[ -n ${FERRY_LOADGEN_BIN:-} ]] || (cd "$root" && cargo build -q --release -p ferry-tus-loadgen)
loadgen="${FERRY_LOADGEN_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/ferry-tus-loadgen}"
ticks="$(getconf CLK_TCK)"

work="$(mktemp -d "${BENCH_TMP:-/dev/shm}/ferry-bench-tus.XXXXXX")"
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
  store="$dir"
  case $peer in
    ferry | ferry-nosync | ferry-before)
      local fsync=always bin="$FERRY_BIN"
      [[ $peer == ferry-nosync ]] && fsync=never
      [[ $peer == ferry-before ]] && bin="$FERRY_BEFORE_BIN"
      "$bin" serve --listen "127.0.0.1:$port" --data-dir "$dir" --ui-dir "$dir" \
        --max-uploads-per-client 0 --fsync "$fsync" >/dev/null 2>&1 &
      store="$dir/tus" ;;
    tus-node) node "$here/tus-server.mjs" "$port" "$dir" >/dev/null 2>&1 & ;;
    baseline) node "$here/sink.mjs" "$port" "$dir/sink.bin" >/dev/null 2>&1 & ;;
    baseline-rust) "$loadgen" sink "$port" --file "$dir/sink.bin" >/dev/null 2>&1 & ;;
    discard) "$loadgen" sink "$port" --discard >/dev/null 2>&1 & ;;
    floor) "$loadgen" floor "$port" --file "$dir/sink.bin" >/dev/null 2>&1 & ;;
    floor2) "$loadgen" floor "$port" --file "$dir/sink.bin" --threads 2 >/dev/null 2>&1 & ;;
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

# Writes the previous run's dirty pages to disk before the next run starts, so no peer pays for
# another's writeback (peers that never fsync leave up to 1 GiB dirty behind them).
settle() { sync; sleep 0.5; }

peak_rss_kib() { awk '/VmHWM/ {print $2}' "/proc/$pid/status"; }
# CPU time the hypervisor took from this machine so far (the `steal` column of /proc/stat), in
# seconds: runs during which it grows were slowed by other tenants and are flagged.
steal_secs() { awk -v t="$ticks" '/^cpu / {printf "%.2f", $9 / t}' /proc/stat; }
stolen_since() { awk -v a="$1" -v b="$(steal_secs)" 'BEGIN {printf "%.2f", b - a}'; }

cpu_secs() { awk -v t="$ticks" '{printf "%.2f", ($14 + $15) / t}' "/proc/$pid/stat"; }

echo "preparing a $((size / 1048576)) MiB random file ..."
head -c "$size" /dev/urandom >"$work/src.bin"
want="$(sha256sum "$work/src.bin" | cut -d' ' -f1)"

# patch_once PEER: one upload of the file in a single request; appends
# "peer secs rss_kib ok stolen_secs cpu_secs rep".
patch_once() {
  local peer=$1 dir="$work/$1" url stored="" secs steal0 cpu=0
  rm -rf "$dir" && mkdir -p "$dir"
  settle
  [[ $peer == dd ]] || start "$peer" "$dir"
  steal0="$(steal_secs)"
  case $peer in
    ferry | ferry-nosync | ferry-before | tus-node)
      url="$(curl -s -D - -o /dev/null -X POST -H 'Tus-Resumable: 1.0.0' -H "Upload-Length: $size" \
        "$base/files/" | awk 'tolower($1)=="location:" {print $2}' | tr -d '\r')"
      [[ $url == http* ]] || url="$base$url"
      secs="$(curl -s -o /dev/null -H 'Expect:' -X PATCH -H 'Tus-Resumable: 1.0.0' \
        -H 'Upload-Offset: 0' -H 'Content-Type: application/offset+octet-stream' \
        -T "$work/src.bin" -w '%{time_total}' "$url")"
      stored="$store/${url##*/}" ;;
    dd)
      local t0=$EPOCHREALTIME
      TIMEFORMAT='%3U %3S'
      { time dd if="$work/src.bin" of="$dir/dd.bin" bs=1M status=none 2>&3; } 3>&2 2>"$work/cpu"
      secs="$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.6f", b - a}')"
      cpu="$(awk '{printf "%.2f", $1 + $2}' "$work/cpu")"
      stored="$dir/dd.bin" ;;
    *)
      secs="$(curl -s -o /dev/null -H 'Expect:' -X PUT -T "$work/src.bin" -w '%{time_total}' "$base/upload")"
      [[ $peer == discard ]] || stored="$dir/sink.bin" ;;
  esac
  local rss=0 ok=bad
  if [[ -n $pid ]]; then
    rss="$(peak_rss_kib)"
    cpu="$(cpu_secs)"
    stop
  fi
  if [[ -z $stored ]]; then
    ok=n/a
  elif [[ "$(sha256sum "$stored" | cut -d' ' -f1)" == "$want" ]]; then
    ok=ok
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$peer" "$secs" "$rss" "$ok" "$(stolen_since "$steal0")" "$cpu" "$rep" |
    tee -a "$out/patch.tsv" | sed 's/^/    /'
  rm -rf "$dir"
}

# concurrent_once CLIENT PEER: BENCH_UPLOADS uploads from the rust or node client; appends a line
# with the client's JSON result, the server's peak RSS and the CPU seconds of server and client.
concurrent_once() {
  local client=$1 peer=$2 dir="$work/$2" line rss server_cpu client_cpu steal0
  local -a cmd
  rm -rf "$dir" && mkdir -p "$dir"
  settle
  start "$peer" "$dir"
  steal0="$(steal_secs)"
  case $client in
    rust) cmd=("$loadgen" upload "$base" "$store" "$uploads" 1048576) ;;
    node) cmd=(node "$here/concurrent.mjs" "$base" "$store" "$uploads" 1048576) ;;
  esac
  # bash's `time` gives the client's user + sys CPU (includes preparing bodies and the sha256
  # check, which are not timed: it shows the client's weight, not the timed window alone).
  TIMEFORMAT='%3U %3S'
  { time "${cmd[@]}" >"$work/line" 2>&3; } 3>&2 2>"$work/cpu"
  line="$(cat "$work/line")"
  client_cpu="$(awk '{printf "%.2f", $1 + $2}' "$work/cpu")"
  rss="$(peak_rss_kib)"
  server_cpu="$(cpu_secs)"
  stop
  echo "{\"client\":\"$client\",\"peer\":\"$peer\",\"rssKib\":$rss,\"serverCpu\":$server_cpu,\"clientCpu\":$client_cpu,\"stolen\":$(stolen_since "$steal0"),\"run\":$line}" |
    tee -a "$out/concurrent.jsonl" | sed 's/^/    /'
  rm -rf "$dir"
}

read -r -a peers <<<"${BENCH_PEERS:-ferry ferry-nosync tus-node baseline baseline-rust discard floor floor2 dd}"
echo "1) one PATCH of $((size / 1048576)) MiB, $reps reps (peer, seconds, peak RSS KiB, sha256, CPU seconds stolen by the hypervisor, CPU seconds of the server or dd):"
for rep in $(seq "$reps"); do
  for i in "${!peers[@]}"; do patch_once "${peers[$(((rep + i) % ${#peers[@]}))]}"; done
done

runs=("rust ferry" "node tus-node" "rust ferry-nosync" "rust tus-node" "node ferry")
((uploads > 0)) || reps=0
echo "2) $uploads concurrent uploads of 1 MiB, $reps reps (client, server):"
for rep in $(seq "$reps"); do
  for i in "${!runs[@]}"; do
    # shellcheck disable=SC2086 # "client peer" splits into two arguments on purpose
    concurrent_once ${runs[$(((rep + i) % ${#runs[@]}))]}
  done
done

node - "$out/patch.tsv" "$out/concurrent.jsonl" "$size" <<'JS'
const fs = require('node:fs');
const [tsv, jsonl, size] = process.argv.slice(2);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const goal = (ok) => (ok ? 'met' : 'missed');
const rows = fs.readFileSync(tsv, 'utf8').trim().split('\n').map((l) => l.split('\t'));
const of = (peer) => rows.filter((r) => r[0] === peer);
const mbps = (peer) => median(of(peer).map((r) => Number(size) / 1e6 / Number(r[1])));
const rss = (peer) => Math.max(...of(peer).map((r) => Number(r[2]))) / 1024;
const bad = rows.filter((r) => r[3] === 'bad').length;
// Steal: CPU time the hypervisor gave other tenants during a run; such runs are slowed unevenly.
const disturbed = (xs) => `${xs.filter((x) => x > 0.05).length} of ${xs.length} runs lost CPU to the hypervisor (${xs.reduce((a, b) => a + b, 0).toFixed(2)} s in all)`;
console.log(`\nsummary (medians of ${of('ferry').length} reps; sha256 mismatches: ${bad}, discard not checked)`);
console.log(`  single PATCH: ${disturbed(rows.map((r) => Number(r[4] ?? 0)))}`);
const label = { ferry: 'ferry', 'ferry-before': 'ferry (before)', 'ferry-nosync': 'ferry --fsync never', 'tus-node': '@tus/server', baseline: 'baseline (node)', 'baseline-rust': 'baseline-rust', discard: 'discard (ceiling)', floor: 'receive+store floor', floor2: 'floor, 2 threads', dd: 'dd (floor)' };
const present = Object.keys(label).filter((p) => of(p).length > 0);
const cpu = (peer) => median(of(peer).map((r) => Number(r[5] ?? 0)));
for (const p of present) {
  console.log(`  single PATCH ${label[p].padEnd(19)} ${mbps(p).toFixed(0).padStart(5)} MB/s   peak RSS ${rss(p).toFixed(1)} MiB   CPU ${cpu(p).toFixed(2)} s`);
}
const has = (p) => present.includes(p);
if (has('tus-node') && has('discard')) {
  const target = 3 * mbps('tus-node');
  const ceiling = mbps('discard');
  console.log(`  3x @tus/server = ${target.toFixed(0)} MB/s vs ceiling ${ceiling.toFixed(0)} MB/s (${target <= ceiling ? 'reachable here' : 'above the ceiling: not reachable on this machine'})`);
}
for (const f of ['ferry', 'ferry-before', 'ferry-nosync'].filter(has)) {
  const parts = [];
  if (has('dd')) { const r = mbps(f) / mbps('dd'); parts.push(`/ dd floor ${r.toFixed(2)}x (goal >= 0.8x: ${goal(r >= 0.8)})`); }
  for (const fl of ['floor', 'floor2'].filter(has)) parts.push(`/ ${label[fl]} ${(mbps(f) / mbps(fl)).toFixed(2)}x`);
  if (has('discard')) parts.push(`/ discard ${(mbps(f) / mbps('discard')).toFixed(2)}x`);
  if (has('tus-node')) { const r = mbps(f) / mbps('tus-node'); parts.push(`/ @tus/server ${r.toFixed(2)}x (goal >= 3x: ${goal(r >= 3)})`); }
  for (const b of ['baseline', 'baseline-rust'].filter(has)) { const r = mbps(f) / mbps(b); parts.push(`/ ${label[b]} ${r.toFixed(2)}x (${goal(r >= 0.8)})`); }
  console.log(`  ${label[f]}: ${parts.join('; ')}; peak RSS ${rss(f).toFixed(1)} MiB (goal < 32 MiB: ${goal(rss(f) < 32)})`);
  // The same repetition's runs are closest in time: their ratios, one per repetition.
  for (const other of ['dd', 'floor', 'floor2', 'discard'].filter(has)) {
    const reps = [...new Set(rows.map((r) => r[6]))];
    const per = reps.map((rep) => {
      const a = rows.find((r) => r[0] === f && r[6] === rep);
      const b = rows.find((r) => r[0] === other && r[6] === rep);
      return a && b ? (Number(b[1]) / Number(a[1])).toFixed(2) : '-';
    });
    console.log(`    per repetition ${label[f]} / ${label[other]}: ${per.join(' ')}`);
  }
}
const runs = fs.readFileSync(jsonl, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
if (runs.length === 0) process.exit(0);
const c = (client, peer, get) => median(runs.filter((r) => r.client === client && r.peer === peer).map(get));
const cbad = runs.filter((r) => !r.run.ok).length;
console.log(`  concurrent (${runs.length} runs; sha256 mismatches: ${cbad}); ${disturbed(runs.map((r) => r.stolen ?? 0))}; CPU seconds per run, medians:`);
for (const client of ['rust', 'node']) {
  const servers = ['ferry', 'ferry-nosync', 'tus-node'].filter((p) => runs.some((r) => r.client === client && r.peer === p));
  for (const p of servers) {
    console.log(`    ${client} client -> ${label[p].padEnd(19)} ${c(client, p, (r) => r.run.perSecond).toFixed(0).padStart(5)} uploads/s   p50 ${c(client, p, (r) => r.run.p50).toFixed(0).padStart(5)} ms   p99 ${c(client, p, (r) => r.run.p99).toFixed(0).padStart(5)} ms   server CPU ${c(client, p, (r) => r.serverCpu).toFixed(2)} s   client CPU ${c(client, p, (r) => r.clientCpu).toFixed(2)} s`);
  }
  for (const f of servers.filter((p) => p !== 'tus-node')) {
    const ups = c(client, f, (r) => r.run.perSecond) / c(client, 'tus-node', (r) => r.run.perSecond);
    console.log(`    ${client} client: ${label[f]} / @tus/server uploads/s ${ups.toFixed(2)}x (goal >= 3x: ${goal(ups >= 3)})`);
  }
}
JS
