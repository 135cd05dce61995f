#!/usr/bin/env bash
# Counts the fsync and fdatasync calls `ferry` makes for N small uploads created at once, and
# times them: `bench/tus/dir-syncs.sh FERRY_BIN [FERRY_BIN ...]` (several binaries alternate, so
# a build before and after a change compare in one run).
#
# ferry-tus-loadgen sends N (default 500) uploads of SIZE (default 10 KiB) all at once, POST +
# PATCH each, and checks every stored file by sha256; `perf stat` counts the syscalls of the
# ferry process meanwhile. Data goes under BENCH_TMP (default /var/tmp, on disk: syncs on tmpfs
# cost nothing). Needs `perf` (Debian: linux-perf). BENCH_REPS (default 3) rounds. Prints one
# line per run; never fails on timing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
n="${BENCH_UPLOADS:-500}"
size="${BENCH_SIZE:-10240}"
reps="${BENCH_REPS:-3}"
(( $# > 0 )) || { echo "usage: $0 FERRY_BIN [FERRY_BIN ...]" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf is needed (apt-get install -y linux-perf)" >&2; exit 2; }
(cd "$root" && cargo build -q --release -p ferry-tus-loadgen)
loadgen="${CARGO_TARGET_DIR:-$root/target}/release/ferry-tus-loadgen"
ticks="$(getconf CLK_TCK)"

one() {
  local bin=$1 dir port pid perfpid before after
  dir="$(mktemp -d "${BENCH_TMP:-/var/tmp}/ferry-dir-syncs.XXXXXX")"
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  "$bin" serve --listen "127.0.0.1:$port" --data-dir "$dir/data" --ui-dir "$dir" \
    --max-uploads-per-client 0 >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -s -o /dev/null -X OPTIONS "http://127.0.0.1:$port/files/" && break; sleep 0.1; done
  sync
  perf stat -x, -e syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync -p "$pid" -o "$dir/perf" &
  perfpid=$!
  sleep 0.5
  before="$(awk '{print $14 + $15}' "/proc/$pid/stat")"
  local result
  result="$("$loadgen" upload "http://127.0.0.1:$port" "$dir/data/tus" "$n" "$size")"
  after="$(awk '{print $14 + $15}' "/proc/$pid/stat")"
  kill -INT "$perfpid"; wait "$perfpid" 2>/dev/null || true
  kill "$pid"; wait "$pid" 2>/dev/null || true
  local fsync fdatasync
  fsync="$(awk -F, '/sys_enter_fsync/ {print $1}' "$dir/perf")"
  fdatasync="$(awk -F, '/sys_enter_fdatasync/ {print $1}' "$dir/perf")"
  echo "$bin fsync=$fsync fdatasync=$fdatasync cpu_s=$(awk -v t="$((after - before))" -v h="$ticks" 'BEGIN {printf "%.2f", t / h}') $result"
  rm -rf "$dir"
}

for _ in $(seq "$reps"); do
  for bin in "$@"; do one "$bin"; done
done
