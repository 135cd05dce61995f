#!/usr/bin/env bash
# bench/companion: a 1 GiB link import from a loopback origin to a tus endpoint, side by side:
#   ferry      — companion + tus endpoint in one process (release build)
#   companion  — Uppy's @uppy/companion 6.2.2 + @tus/server 2.4 (two Node processes)
# with the raw curl download of the same file as the floor. Prints median seconds, MiB/s and
# peak RSS (VmHWM) per side, and the ratios. Every transfer is checked byte for byte (cmp).
# Environment: REPS (default 3), SIZE_MIB (default 1024), FERRY_BIN (default: release build).
set -euo pipefail
cd "$(dirname "$0")"
here=$(pwd)
root=$(cd ../.. && pwd)
REPS=${REPS:-3}
SIZE_MIB=${SIZE_MIB:-1024}
FERRY_BIN=${FERRY_BIN:-$root/target/release/ferry}

if [[ ! -x $FERRY_BIN ]]; then
  (cd "$root" && cargo build --release -q -p ferry)
fi
if [[ ! -d node_modules/@uppy/companion ]]; then
  flock /tmp/ferry-npm.lock npm install --no-audit --no-fund --silent
fi

work=$(mktemp -d)
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
source_url="http://127.0.0.1:$origin_port/src.bin"
wait_ready "$source_url"

echo "curl floor..."
: >"$work/curl"
for _ in $(seq "$REPS"); do
  curl -s -o /dev/null -w '%{time_total}\n' "$source_url" >>"$work/curl"
done

echo "ferry..."
: >"$work/ferry.t"
: >"$work/ferry.rss"
for _ in $(seq "$REPS"); do
  port=$(free_port)
  rm -rf "$work/ferry-data"
  "$FERRY_BIN" serve --listen "127.0.0.1:$port" --data-dir "$work/ferry-data" --allow-local-urls \
    >/dev/null 2>&1 &
  fpid=$!
  pids+=("$fpid")
  wait_ready "http://127.0.0.1:$port/health"
  read -r secs url < <(node drive.mjs "http://127.0.0.1:$port" "$source_url" "http://127.0.0.1:$port/files/" $((SIZE_MIB * 1024 * 1024)))
  peak_kib "$fpid" >>"$work/ferry.rss"
  echo "$secs" >>"$work/ferry.t"
  curl -s "$url" | cmp - "$work/src.bin"
  stop "$fpid"
done

echo "@uppy/companion + @tus/server..."
: >"$work/comp.t"
: >"$work/comp.rss"
: >"$work/tus.rss"
for _ in $(seq "$REPS"); do
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
  read -r secs url < <(node drive.mjs "http://127.0.0.1:$cport" "$source_url" "http://127.0.0.1:$tport/files/" $((SIZE_MIB * 1024 * 1024)))
  peak_kib "$cpid" >>"$work/comp.rss"
  peak_kib "$tpid" >>"$work/tus.rss"
  echo "$secs" >>"$work/comp.t"
  curl -s "$url" | cmp - "$work/src.bin"
  stop "$cpid" "$tpid"
done

c=$(median <"$work/curl")
f=$(median <"$work/ferry.t")
n=$(median <"$work/comp.t")
frss=$(median <"$work/ferry.rss")
nrss=$(median <"$work/comp.rss")
trss=$(median <"$work/tus.rss")
echo
echo "link import of ${SIZE_MIB} MiB, loopback origin -> tus, median of $REPS (all byte-exact):"
awk -v c="$c" -v f="$f" -v n="$n" -v fr="$frss" -v nr="$nrss" -v tr="$trss" -v m="$SIZE_MIB" 'BEGIN {
  printf "  %-34s %8.2f s %8.0f MiB/s\n", "curl download (floor)", c, m / c
  printf "  %-34s %8.2f s %8.0f MiB/s   peak RSS %6.0f MiB\n", "ferry (companion + tus)", f, m / f, fr / 1024
  printf "  %-34s %8.2f s %8.0f MiB/s   peak RSS %6.0f MiB (+ @tus/server %.0f MiB)\n", "@uppy/companion + @tus/server", n, m / n, nr / 1024, tr / 1024
  printf "  ferry throughput vs Companion: %.2fx; peak RSS: %.1f%% of Companion (%.1f%% of Companion + @tus/server)\n", n / f, 100 * fr / nr, 100 * fr / (nr + tr)
}'
echo "  raw samples (s): curl $(tr '\n' ' ' <"$work/curl")| ferry $(tr '\n' ' ' <"$work/ferry.t")| companion $(tr '\n' ' ' <"$work/comp.t")"
