#!/usr/bin/env bash
# Profile of one server process over single PATCHes (issue 28): starts FERRY_BIN (or the
# loadgen's `floor` with PEER=floor, or PEER=floor2 for its two-thread form) on a tmpfs directory, sends REPS (default 3) PATCHes of
# BENCH_SIZE (default 1 GiB) with curl, and counts, for the server's process only and over the
# request alone: CPU (task-clock), context switches, page faults and the system calls of the
# receive and write path (`perf stat`), printed per MiB. With RECORD=1 the last PATCH is also
# sampled with `perf record -g` into bench/results/tus/perf-PEER.data (report with
# `perf report -i ... --no-children`). Needs perf (apt-get install linux-perf) and a release
# build with symbols (CARGO_PROFILE_RELEASE_STRIP=false) for the record.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
peer="${PEER:-ferry}"
reps="${REPS:-3}"
size="${BENCH_SIZE:-1073741824}"
bin="${FERRY_BIN:-$root/target/release/ferry}"
loadgen="${FERRY_LOADGEN_BIN:-$root/target/release/ferry-tus-loadgen}"
out="$root/bench/results/tus"
mkdir -p "$out"
work="$(mktemp -d "${BENCH_TMP:-/dev/shm}/ferry-profile.XXXXXX")"
pid=""
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
port="$(node -e 's=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
base="http://127.0.0.1:$port"
head -c "$size" /dev/urandom >"$work/src.bin"
mkdir -p "$work/store"
case $peer in
  ferry) "$bin" serve --listen "127.0.0.1:$port" --data-dir "$work/store" --ui-dir "$work/store" \
    --max-uploads-per-client 0 --fsync "${FSYNC:-always}" >/dev/null 2>&1 & ;;
  floor | floor2)
    threads="${peer#floor}"
    "$loadgen" floor "$port" --file "$work/store/sink.bin" --threads "${threads:-1}" >/dev/null 2>&1 & ;;
esac
pid=$!
for _ in $(seq 200); do curl -s -o /dev/null -X OPTIONS "$base/files/" && break; sleep 0.05; done
events=task-clock,context-switches,page-faults
for call in recvfrom read write writev futex epoll_wait fdatasync; do events+=",syscalls:sys_enter_$call"; done
for rep in $(seq "$reps"); do
  url="$base/upload"
  if [[ $peer == ferry ]]; then
    url="$(curl -s -D - -o /dev/null -X POST -H 'Tus-Resumable: 1.0.0' -H "Upload-Length: $size" \
      "$base/files/" | awk 'tolower($1)=="location:" {print $2}' | tr -d '\r')"
    [[ $url == http* ]] || url="$base$url"
  fi
  sync
  record=()
  if [[ ${RECORD:-0} == 1 && $rep == "$reps" ]]; then
    perf record -g -q -p "$pid" -o "$out/perf-$peer.data" 2>/dev/null &
    record=($!)
  fi
  perf stat -x, -e "$events" -p "$pid" -o "$work/stat" &
  stat=$!
  sleep 0.3
  method=PUT
  [[ $peer == ferry ]] && method=PATCH
  secs="$(curl -s -o /dev/null -H 'Expect:' -X "$method" -H 'Tus-Resumable: 1.0.0' -H 'Upload-Offset: 0' \
    -H 'Content-Type: application/offset+octet-stream' -T "$work/src.bin" -w '%{time_total}' "$url")"
  kill -INT "$stat" "${record[@]}"
  wait "$stat" "${record[@]}" 2>/dev/null || true
  awk -F, -v mib="$((size / 1048576))" -v secs="$secs" -v peer="$peer" -v rep="$rep" '
    /^[0-9]/ { v[$3] = $1 }
    END {
      printf "%s rep %s: %.2f s, CPU %.0f ms (%.3f ms/MiB), per MiB:", peer, rep, secs, v["task-clock"], v["task-clock"] / mib
      n = split("context-switches page-faults syscalls:sys_enter_recvfrom syscalls:sys_enter_read syscalls:sys_enter_write syscalls:sys_enter_writev syscalls:sys_enter_futex syscalls:sys_enter_epoll_wait", k, " ")
      for (i = 1; i <= n; i++) { name = k[i]; sub("syscalls:sys_enter_", "", name); printf " %s %.2f", name, v[k[i]] / mib }
      printf "; fdatasync %d\n", v["syscalls:sys_enter_fdatasync"]
    }' "$work/stat"
  # The stored copy is not checked here (run.sh does); freeing the tmpfs keeps memory flat.
  if [[ $peer == ferry ]]; then rm -f "$work/store/tus/"*; fi
done
