#!/usr/bin/env bash
# Times the creation of 1-byte partial uploads (`Upload-Concat: partial`, the byte in the POST)
# with many uploads already stored: `bench/tus/partials.sh FERRY_BIN [FERRY_BIN ...]` (several
# binaries alternate, so a build before and after a change compare in one run).
#
# A finished partial asks the store which pending finals wait for it; the fs store used to read
# every info file to answer. The store is seeded with BENCH_STORED (default 20000) finished
# uploads written straight to disk (copies of one real upload's info), then ferry is started on
# it and BENCH_PARTIALS (default 30) partials are created one after another. Prints, per binary
# and round, the median and worst request time (curl's time_total); never fails on timing. Data
# goes under BENCH_TMP (default /var/tmp). BENCH_REPS (default 2) rounds.
set -euo pipefail
stored="${BENCH_STORED:-20000}"
partials="${BENCH_PARTIALS:-30}"
reps="${BENCH_REPS:-2}"
(( $# > 0 )) || { echo "usage: $0 FERRY_BIN [FERRY_BIN ...]" >&2; exit 2; }

start() { # bin dir port -> pid on stdout
  "$1" serve --listen "127.0.0.1:$3" --data-dir "$2/data" --ui-dir "$2" --fsync never \
    --max-uploads-per-client 0 >"$2/log" 2>&1 &
  echo $!
}

wait_up() {
  for _ in $(seq 300); do curl -s -o /dev/null -X OPTIONS "http://127.0.0.1:$1/files/" && return; sleep 0.1; done
  echo "ferry did not start" >&2; exit 1
}

# One finished upload made through ferry, then cloned on disk `stored` times.
seed() { # bin dir
  local port pid location
  port="$(free_port)"
  pid="$(start "$1" "$2" "$port")"
  wait_up "$port"
  location="$(curl -s -D - -o /dev/null -X POST "http://127.0.0.1:$port/files/" \
    -H 'Tus-Resumable: 1.0.0' -H 'Upload-Length: 1' \
    -H 'Content-Type: application/offset+octet-stream' --data-binary x |
    awk 'tolower($1) == "location:" {print $2}' | tr -d '\r')"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  python3 - "$2/data/tus" "${location##*/}" "$stored" <<'EOF'
import json, os, sys, uuid
root, template, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
info = json.load(open(os.path.join(root, template + ".info")))
for _ in range(n):
    info["id"] = uuid.uuid4().hex
    with open(os.path.join(root, info["id"]), "wb") as f:
        f.write(b"x")
    with open(os.path.join(root, info["id"] + ".info"), "w") as f:
        json.dump(info, f)
EOF
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

one() { # bin dir
  local port pid times
  port="$(free_port)"
  pid="$(start "$1" "$2" "$port")"
  wait_up "$port"
  times="$(for _ in $(seq "$partials"); do
    curl -s -o /dev/null -w '%{time_total}\n' -X POST "http://127.0.0.1:$port/files/" \
      -H 'Tus-Resumable: 1.0.0' -H 'Upload-Length: 1' -H 'Upload-Concat: partial' \
      -H 'Content-Type: application/offset+octet-stream' --data-binary x
  done | sort -n)"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "$1 stored=$stored partials=$partials median_ms=$(echo "$times" |
    awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]*1000}') max_ms=$(echo "$times" |
    awk 'END {printf "%.1f", $1*1000}')"
}

dir="$(mktemp -d "${BENCH_TMP:-/var/tmp}/ferry-partials.XXXXXX")"
trap 'rm -rf "$dir"' EXIT
seed "$1" "$dir"
for _ in $(seq "$reps"); do
  for bin in "$@"; do one "$bin" "$dir"; done
done
