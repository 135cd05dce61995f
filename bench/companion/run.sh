#!/usr/bin/env bash
# bench/companion: a 1 GiB link import from a loopback origin to a tus endpoint, side by side:
#   ferry      — companion + tus endpoint in one process (release build)
#   companion  — Uppy's @uppy/companion 6.2.2 + @tus/server 2.4 (two Node processes)
# with the floor measured in the same repetition: curl downloading the same file from the same
# origin into the same tmpfs. Two origins: Node's (peers.mjs, the one Companion is measured
# against) and a fast one (`ferry-tus-loadgen origin`, sendfile), which tells whether the origin
# or the importer is the slow part. Prints median seconds, MiB/s and peak RSS (VmHWM) per side,
# and the ratios to the floor. Every transfer is checked byte for byte (cmp).
# Environment: REPS (default 3), SIZE_MIB (default 1024), FERRY_BIN (default: release build),
# BENCH_TMPFS (default /dev/shm: source, floor copies and data directories live there).
# Before / after in one run: BEFORE_BIN and/or BEFORE_ARGS add a "ferry-before" side per origin
# (BEFORE_BIN defaults to FERRY_BIN; BEFORE_ARGS=--no-local-handoff measures the loopback-HTTP
# path with the same build). COMPANION=0 leaves Companion out. PERF=1 also reports ferry's CPU
# per import (`perf stat -e task-clock` on its process, median ms) and curl's for the floor.
set -euo pipefail
cd "$(dirname "$0")"
here=$(pwd)
root=$(cd ../.. && pwd)
REPS=${REPS:-3}
SIZE_MIB=${SIZE_MIB:-1024}
COMPANION=${COMPANION:-1}
PERF=${PERF:-0}
# Without FERRY_BIN, the release build of this checkout (cargo rebuilds only what changed, so a
# stale binary is never measured).
if [[ -z ${FERRY_BIN:-} ]]; then
  (cd "$root" && cargo build --release -q -p ferry)
  FERRY_BIN="${CARGO_TARGET_DIR:-$root/target}/release/ferry"
fi
# The fast origin; FERRY_LOADGEN_BIN (bench/run sets it) skips the build.
[[ -n ${FERRY_LOADGEN_BIN:-} ]] || (cd "$root" && cargo build --release -q -p ferry-tus-loadgen)
loadgen="${FERRY_LOADGEN_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/ferry-tus-loadgen}"
if [[ ! -d node_modules/@uppy/companion ]]; then
  flock /tmp/ferry-npm.lock npm install --no-audit --no-fund --silent
fi

work=$(mktemp -d "${BENCH_TMPFS:-/dev/shm}/ferry-bench-companion.XXXXXX")
pids=()
stop() { # stop the given PIDs (only processes this script started)
  for pid in "$@"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
cleanup() { stop "${pids[@]}"; rm -rf "$work"; }
trap cleanup EXIT

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
wait_ready() { # URL
  for _ in $(seq 1 200); do
    curl -s -o /dev/null "$1" && return 0
    sleep 0.05
  done
  echo "not ready: $1" >&2
  return 1
}
peak_kib() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "generating ${SIZE_MIB} MiB of random bytes..."
head -c $((SIZE_MIB * 1024 * 1024)) /dev/urandom >"$work/src.bin"
origin_port=$(free_port)
node peers.mjs origin "$origin_port" "$work/src.bin" >/dev/null &
pids+=($!)
fast_port=$(free_port)
"$loadgen" origin "$fast_port" "$work/src.bin" &
pids+=($!)
declare -A origin=([node]="http://127.0.0.1:$origin_port/src.bin" [fast]="http://127.0.0.1:$fast_port/src.bin")
wait_ready "${origin[node]}"
wait_ready "${origin[fast]}"
bytes=$((SIZE_MIB * 1024 * 1024))
for f in curl-node curl-fast ferry-node ferry-fast before-node before-fast comp; do : >"$work/$f.t"; done
for f in ferry-node ferry-fast before-node before-fast curl-node curl-fast; do : >"$work/$f.cpu"; done
: >"$work/ferry.rss"
: >"$work/comp.rss"
: >"$work/tus.rss"

# curl ORIGIN: the floor, the same bytes from the same origin into the same tmpfs.
floor_once() {
  local measure=()
  [[ $PERF == 1 ]] && measure=(perf stat -x, -e task-clock -o "$work/perf-curl.out")
  "${measure[@]}" curl -s -o "$work/floor.bin" -w '%{time_total}\n' "${origin[$1]}" >>"$work/curl-$1.t"
  if [[ $PERF == 1 ]]; then
    awk -F, '/task-clock/ {printf "%.0f\n", $1}' "$work/perf-curl.out" >>"$work/curl-$1.cpu"
  fi
  cmp "$work/floor.bin" "$work/src.bin"
  rm -f "$work/floor.bin"
}

ferry_once() { # ORIGIN [before]
  local port fpid secs url side=ferry bin=$FERRY_BIN extra=() perf_pid=
  if [[ ${2:-} == before ]]; then
    side=before
    bin=${BEFORE_BIN:-$FERRY_BIN}
    read -r -a extra <<<"${BEFORE_ARGS:-}"
  fi
  port=$(free_port)
  rm -rf "$work/ferry-data"
  "$bin" serve --listen "127.0.0.1:$port" --data-dir "$work/ferry-data" --allow-local-urls \
    "${extra[@]}" >/dev/null 2>&1 &
  fpid=$!
  pids+=("$fpid")
  wait_ready "http://127.0.0.1:$port/health"
  if [[ $PERF == 1 ]]; then
    perf stat -x, -e task-clock -p "$fpid" -o "$work/perf.out" &
    perf_pid=$!
  fi
  read -r secs url < <(node drive.mjs "http://127.0.0.1:$port" "${origin[$1]}" "http://127.0.0.1:$port/files/" "$bytes")
  if [[ -n $perf_pid ]]; then
    kill -INT "$perf_pid"
    wait "$perf_pid" 2>/dev/null || true
    awk -F, '/task-clock/ {printf "%.0f\n", $1}' "$work/perf.out" >>"$work/$side-$1.cpu"
  fi
  if [[ $side == ferry ]]; then peak_kib "$fpid" >>"$work/ferry.rss"; fi
  echo "$secs" >>"$work/$side-$1.t"
  curl -s "$url" | cmp - "$work/src.bin"
  stop "$fpid"
  rm -rf "$work/ferry-data"
}

companion_once() {
  local tport cport tpid cpid secs url
  tport=$(free_port)
  cport=$(free_port)
  rm -rf "$work/tus-data" "$work/comp-data"
  mkdir -p "$work/tus-data" "$work/comp-data"
  node peers.mjs tus "$tport" "$work/tus-data" >/dev/null 2>&1 &
  tpid=$!
  COMPANION_SECRET=bench-secret COMPANION_DOMAIN="127.0.0.1:$cport" COMPANION_PROTOCOL=http \
    COMPANION_DATADIR="$work/comp-data" COMPANION_CLIENT_ORIGINS=true \
    COMPANION_ENABLE_URL_ENDPOINT=true COMPANION_ALLOW_LOCAL_URLS=true \
    COMPANION_UPLOAD_URLS="http://127.0.0.1:$tport/files/.*" NODE_ENV=development \
    node peers.mjs companion "$cport" >/dev/null 2>&1 &
  cpid=$!
  pids+=("$tpid" "$cpid")
  wait_ready "http://127.0.0.1:$tport/files/"
  wait_ready "http://127.0.0.1:$cport/"
  read -r secs url < <(node drive.mjs "http://127.0.0.1:$cport" "${origin[node]}" "http://127.0.0.1:$tport/files/" "$bytes")
  peak_kib "$cpid" >>"$work/comp.rss"
  peak_kib "$tpid" >>"$work/tus.rss"
  echo "$secs" >>"$work/comp.t"
  curl -s "$url" | cmp - "$work/src.bin"
  stop "$cpid" "$tpid"
  rm -rf "$work/tus-data" "$work/comp-data"
}

# Each repetition runs every side once (order rotated), so a ratio compares runs minutes apart
# at most (the machine's load drifts).
steps=("floor_once node" "floor_once fast" "ferry_once node" "ferry_once fast")
before=0
if [[ -n ${BEFORE_BIN:-}${BEFORE_ARGS:-} ]]; then
  before=1
  steps+=("ferry_once node before" "ferry_once fast before")
fi
[[ $COMPANION == 1 ]] && steps+=(companion_once)
for rep in $(seq "$REPS"); do
  echo "rep $rep of $REPS (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  for i in "${!steps[@]}"; do
    # shellcheck disable=SC2086 # "function origin [before]" splits into words on purpose
    ${steps[$(((rep + i) % ${#steps[@]}))]}
  done
done

cn=$(median <"$work/curl-node.t")
cf=$(median <"$work/curl-fast.t")
fn=$(median <"$work/ferry-node.t")
ff=$(median <"$work/ferry-fast.t")
n=$(median <"$work/comp.t")
frss=$(median <"$work/ferry.rss")
nrss=$(median <"$work/comp.rss")
trss=$(median <"$work/tus.rss")
# Absent sides (COMPANION=0, no before side) print as 0.
n=${n:-0} nrss=${nrss:-0} trss=${trss:-0}
echo
echo "link import of ${SIZE_MIB} MiB, loopback origin -> tus (tmpfs), median of $REPS (all byte-exact):"
awk -v cn="$cn" -v cf="$cf" -v fn="$fn" -v ff="$ff" -v n="$n" -v fr="$frss" -v nr="$nrss" -v tr="$trss" -v m="$SIZE_MIB" 'BEGIN {
  printf "  %-44s %8.2f s %8.0f MiB/s\n", "curl, Node origin -> tmpfs (floor)", cn, m / cn
  printf "  %-44s %8.2f s %8.0f MiB/s\n", "curl, fast origin (sendfile) -> tmpfs (floor)", cf, m / cf
  printf "  %-44s %8.2f s %8.0f MiB/s   peak RSS %6.0f MiB\n", "ferry (companion + tus), Node origin", fn, m / fn, fr / 1024
  printf "  %-44s %8.2f s %8.0f MiB/s\n", "ferry (companion + tus), fast origin", ff, m / ff
  if (n > 0) printf "  %-44s %8.2f s %8.0f MiB/s   peak RSS %6.0f MiB (+ @tus/server %.0f MiB)\n", "@uppy/companion + @tus/server, Node origin", n, m / n, nr / 1024, tr / 1024
  printf "  ferry / its floor (goal >= 0.85x): Node origin %.2fx (%s), fast origin %.2fx (%s)\n", cn / fn, (cn / fn >= 0.85 ? "met" : "missed"), cf / ff, (cf / ff >= 0.85 ? "met" : "missed")
  if (n > 0) printf "  ferry throughput vs Companion: %.2fx; peak RSS: %.1f%% of Companion (%.1f%% of Companion + @tus/server)\n", n / fn, 100 * fr / nr, 100 * fr / (nr + tr)
}'
if [[ $before == 1 ]]; then
  bn=$(median <"$work/before-node.t")
  bf=$(median <"$work/before-fast.t")
  awk -v cn="$cn" -v cf="$cf" -v bn="$bn" -v bf="$bf" -v m="$SIZE_MIB" -v what="${BEFORE_BIN:-FERRY_BIN} ${BEFORE_ARGS:-}" 'BEGIN {
    printf "  before (%s):\n", what
    printf "  %-44s %8.2f s %8.0f MiB/s   / floor %.2fx\n", "ferry-before, Node origin", bn, m / bn, cn / bn
    printf "  %-44s %8.2f s %8.0f MiB/s   / floor %.2fx\n", "ferry-before, fast origin", bf, m / bf, cf / bf
  }'
fi
if [[ $PERF == 1 ]]; then
  for f in ferry-node ferry-fast before-node before-fast curl-node curl-fast; do
    if [[ -s $work/$f.cpu ]]; then
      echo "  CPU of the process per import, $f: median $(median <"$work/$f.cpu") ms (samples: $(tr '\n' ' ' <"$work/$f.cpu"))"
    fi
  done
fi
echo "  raw samples (s): curl-node $(tr '\n' ' ' <"$work/curl-node.t")| curl-fast $(tr '\n' ' ' <"$work/curl-fast.t")| ferry-node $(tr '\n' ' ' <"$work/ferry-node.t")| ferry-fast $(tr '\n' ' ' <"$work/ferry-fast.t")| before-node $(tr '\n' ' ' <"$work/before-node.t")| before-fast $(tr '\n' ' ' <"$work/before-fast.t")| companion $(tr '\n' ' ' <"$work/comp.t")"
