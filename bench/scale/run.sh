#!/usr/bin/env bash
# bench/scale: what coordinating several instances costs. BENCH_UPLOADS (default 200) concurrent
# tus uploads of BENCH_SIZE (default 1 MiB) bytes (creation POST + one PATCH each) on the S3
# store (a local Garage bucket), sent by the Rust client (bench/tus/loadgen):
#   single — one `ferry` on the bucket, no Redis (the in-process upload lock);
#   pair   — two independent `ferry` processes on the bucket, no Redis, every upload PATCHed where
#            it was created (two processes without any coordination: the baseline);
#   stay   — two instances on one redis-server (`--redis-url`), uploads PATCHed where created:
#            `pair` plus the Redis lease of every request (the coordination's own cost);
#   cross  — the same fleet, every upload created on one instance and PATCHed on the other (the
#            path a load balancer without stickiness produces).
# Uploads/s, p50 and p99 latency per setup (medians of BENCH_REPS, default 3, order rotated), the
# fleet's ratios to `pair` (goal: coordination costs under 10%, i.e. >= 0.9x), and Redis commands
# per upload (INFO commandstats around each run; the read-back GETs that check every stored
# upload by sha256 take no lock, so they cost none). All processes share this machine's 2 cores.
# Never fails on timing. FERRY_BIN skips the ferry build;
# CARGO_TARGET_DIR is honoured. Needs Garage (scripts/ensure-garage.sh) and redis-server.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
reps="${BENCH_REPS:-3}"
uploads="${BENCH_UPLOADS:-200}"
size="${BENCH_SIZE:-1048576}"
target="${CARGO_TARGET_DIR:-$root/target}"

if [[ -z ${FERRY_BIN:-} ]]; then
  (cd "$root" && cargo build -q --release -p ferry)
  FERRY_BIN="$target/release/ferry"
fi
# FERRY_LOADGEN_BIN and FERRY_GARAGE_BIN (bench/run sets both) skip the build.
if [[ -z ${FERRY_LOADGEN_BIN:-} || -z ${FERRY_GARAGE_BIN:-} ]]; then
  (cd "$root" && cargo build -q --release -p ferry-tus-loadgen -p ferry-testkit --bins)
fi
loadgen="${FERRY_LOADGEN_BIN:-$target/release/ferry-tus-loadgen}"
garage_bin="${FERRY_GARAGE_BIN:-$target/release/ferry-garage}"
redis_bin="${REDIS_SERVER_BIN:-redis-server}"

work="$(mktemp -d /tmp/ferry-bench-scale.XXXXXX)"
results="$root/bench/results/scale"
mkdir -p "$results"
source "$root/bench/support/processes.sh"
trap 'stop_all; rm -rf "$work"' EXIT

json() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

echo "starting Garage and Redis..."
start_held "$work" "$work/garage.json" "$garage_bin" # Garage runs until its stdin closes
for _ in $(seq 1 1200); do [[ -s $work/garage.json ]] && break; sleep 0.1; done
g=$(head -n1 "$work/garage.json")
s3_args=(--store s3 --s3-force-path-style --s3-endpoint "$(json "$g" endpoint)" --s3-bucket "$(json "$g" bucket)"
  --s3-region "$(json "$g" region)" --s3-access-key "$(json "$g" accessKey)" --s3-secret-key "$(json "$g" secretKey)")
rport=$(free_port)
"$redis_bin" --port "$rport" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
pids+=($!)
rcli() { redis-cli -p "$rport" "$@"; }
for _ in $(seq 1 100); do rcli ping >/dev/null 2>&1 && break; sleep 0.05; done

start_ferry() { # LOG ARGS... -> prints "PID PORT"
  local log=$1 port
  shift
  port=$(free_port)
  mkdir -p "$work/d$port"
  FERRY_LOG=warn "$FERRY_BIN" serve --listen "127.0.0.1:$port" --data-dir "$work/d$port" --no-ui --max-uploads-per-client 0 "${s3_args[@]}" "$@" >"$log" 2>&1 &
  echo "$! $port"
}

commands() { rcli INFO commandstats | awk -F'[=,:]' '/^cmdstat_/ {n += $3} END {print n + 0}'; }

run_single() {
  local pid port line
  read -r pid port < <(start_ferry "$work/single.log")
  pids+=("$pid") # stopped at exit too, should the run fail
  wait_ready "http://127.0.0.1:$port/health"
  line=$("$loadgen" upload "http://127.0.0.1:$port" - "$uploads" "$size")
  stop "$pid"
  echo "$line" >>"$results/single.jsonl"
}

run_two() { # NAME REDIS(yes|no) LOADGEN-FLAGS...
  local name=$1 redis=$2 pa pb porta portb line before after
  shift 2
  local cluster=()
  [[ $redis == yes ]] && cluster=(--redis-url "redis://127.0.0.1:$rport/")
  read -r pa porta < <(start_ferry "$work/a.log" "${cluster[@]}")
  read -r pb portb < <(start_ferry "$work/b.log" "${cluster[@]}")
  pids+=("$pa" "$pb")
  wait_ready "http://127.0.0.1:$porta/health"
  wait_ready "http://127.0.0.1:$portb/health"
  before=$(commands)
  line=$("$loadgen" upload "http://127.0.0.1:$porta" - "$uploads" "$size" --also "http://127.0.0.1:$portb" "$@")
  after=$(commands)
  stop "$pa" "$pb"
  line=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["redisPerUpload"]=(int(sys.argv[2])-int(sys.argv[3]))/int(sys.argv[4]); print(json.dumps(d))' \
    "$line" "$after" "$before" "$uploads")
  echo "$line" >>"$results/$name.jsonl"
}

setups=(single pair stay cross)
for name in "${setups[@]}"; do : >"$results/$name.jsonl"; done
run_setup() {
  case $1 in
  single) run_single ;;
  pair) run_two pair no --stay ;;
  stay) run_two stay yes --stay ;;
  cross) run_two cross yes ;;
  esac
}
for rep in $(seq "$reps"); do
  echo "repetition $rep/$reps"
  for i in "${!setups[@]}"; do
    run_setup "${setups[$(((i + rep) % ${#setups[@]}))]}"
  done
done

python3 - "$results" "$uploads" "$size" <<'EOF'
import json, statistics, sys
names = ("single", "pair", "stay", "cross")
rows = {n: [json.loads(l) for l in open(f"{sys.argv[1]}/{n}.jsonl")] for n in names}
n, size = sys.argv[2], int(sys.argv[3])
med = lambda name, k: statistics.median(r[k] for r in rows[name])
ok = all(r["ok"] for rs in rows.values() for r in rs)
print(f"\n{n} concurrent tus uploads of {size // 1024} KiB on the S3 store (Garage), medians of {len(rows['single'])}; every upload sha256-checked: {'all equal' if ok else 'MISMATCH'}")
labels = {
    "single": "1 instance, no Redis",
    "pair": "2 processes, no Redis",
    "stay": "2 instances + Redis, PATCH local",
    "cross": "2 instances + Redis, PATCH across",
}
for name, label in labels.items():
    redis = f"   Redis commands/upload {med(name, 'redisPerUpload'):.1f}" if name in ("stay", "cross") else ""
    print(f"  {label:36} {med(name, 'perSecond'):7.1f} uploads/s   p50 {med(name, 'p50'):7.1f} ms   p99 {med(name, 'p99'):7.1f} ms{redis}")
for name in ("stay", "cross"):
    print(f"  {name} / pair: {med(name, 'perSecond') / med('pair', 'perSecond'):.2f}x uploads/s, p99 {med(name, 'p99') / med('pair', 'p99'):.2f}x (goal: >= 0.90x uploads/s)")
EOF
