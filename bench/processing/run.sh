#!/usr/bin/env bash
# bench/processing: ferry's Assembly API (release build) on this machine's engines, in one run:
#   images — IMAGES (100) JPEGs of IMAGE_W x IMAGE_H (4000x3000, 12 MP), each to 3 outputs
#            (320 px thumbnail JPEG, 1280 px JPEG, 1280 px WebP): one Assembly per image through
#            ferry (--assembly-workers 2; these JPEGs resize in process, docs/processing.md),
#            against sharp (libvips in one Node process, the idiomatic clone() pipeline), CONC
#            (2) images in flight for both.
#            Throughput, per-image latency p50/p99, peak RSS (ferry: the server plus its engine
#            children, sampled; sharp: the process's own peak), CPU seconds per image (ferry: the
#            server and its engine children; sharp: its process, from its first image).
#   video  — a VIDEO_SECONDS (60) s 1080p H.264/AAC clip to web MP4 (`web/mp4/1080p`) and 3
#            thumbnails through one Assembly, against the very ffmpeg command lines ferry ran
#            (read from its debug log) rerun by hand, one after another.
#   burst  — BURST (50) small-image Assemblies posted at once with --assembly-workers 2: every
#            one must complete; queue wait (execution_start - start_date) p50/max; peak RSS.
# Figures only; nothing here fails on timing. Environment: IMAGES, IMAGE_W, IMAGE_H, CONC,
# VIDEO_SECONDS, VIDEO_REPS (3 pairs, alternating which side goes first), BURST, FERRY_BIN,
# BENCH_TMPFS (default /dev/shm), PHASES (default "images video burst": the ones to run).
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
IMAGES=${IMAGES:-${BENCH_IMAGES:-100}}
IMAGE_W=${IMAGE_W:-4000}
IMAGE_H=${IMAGE_H:-3000}
CONC=${CONC:-2}
VIDEO_SECONDS=${VIDEO_SECONDS:-60}
VIDEO_REPS=${VIDEO_REPS:-3}
PHASES=${PHASES:-images video burst}
BURST=${BURST:-50}
if [[ ${BENCH_QUICK:-} == 1 ]]; then
  IMAGES=${BENCH_IMAGES:-6} IMAGE_W=1600 IMAGE_H=1200 VIDEO_SECONDS=3 VIDEO_REPS=1 BURST=8
fi
for tool in ffmpeg ffprobe vips vipsheader; do
  command -v "$tool" >/dev/null || { echo "bench/processing needs $tool (scripts/ensure-apt-tools.sh)" >&2; exit 1; }
done
if [[ -z ${FERRY_BIN:-} ]]; then
  (cd "$root" && cargo build --release -q -p ferry)
fi
FERRY_BIN=${FERRY_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/ferry}
if [[ ! -d node_modules/sharp ]]; then
  flock /tmp/ferry-npm.lock npm install --no-audit --no-fund --silent
fi

work=$(mktemp -d "${BENCH_TMPFS:-/dev/shm}/ferry-bench-processing.XXXXXX")
source "$root/bench/support/processes.sh"
trap 'stop_all; rm -rf "$work"' EXIT

wants() { [[ " $PHASES " == *" $1 "* ]]; }
echo "making inputs for: $PHASES..."
mkdir -p "$work/images" "$work/small"
# Test pattern plus temporal noise, so each frame is different and photo-like in entropy.
if wants images; then
  ffmpeg -loglevel error -f lavfi -i "testsrc2=size=${IMAGE_W}x${IMAGE_H}:rate=1" \
    -vf "noise=alls=12:allf=t" -frames:v "$IMAGES" -q:v 3 "$work/images/img-%03d.jpg"
fi
if wants burst; then
  ffmpeg -loglevel error -f lavfi -i "testsrc2=size=1024x768:rate=1" -vf "noise=alls=12:allf=t" \
    -frames:v "$BURST" -q:v 3 "$work/small/small-%03d.jpg"
fi
if wants video; then
  ffmpeg -loglevel error -f lavfi -i "testsrc2=size=1920x1080:rate=30" \
    -f lavfi -i "sine=frequency=440:sample_rate=48000" -t "$VIDEO_SECONDS" \
    -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -b:a 128k "$work/clip.mp4"
fi

port=$(free_port)
ferry="http://127.0.0.1:$port"
FERRY_LOG="info,ferry_process::engines=debug" "$FERRY_BIN" serve --listen "127.0.0.1:$port" \
  --data-dir "$work/ferry-data" --assembly-key bench-key --assembly-workers 2 --no-ui \
  >"$work/ferry.log" 2>&1 &
fpid=$!
pids+=("$fpid")
wait_ready "$ferry/health"

for phase in $PHASES; do
  case $phase in
    images) node measure.mjs images "$ferry" "$fpid" "$work/images" "$CONC" "$work/sharp-out" ;;
    video) node measure.mjs video "$ferry" "$fpid" "$work/clip.mp4" "$work/ferry.log" "$work/by-hand" "$VIDEO_REPS" ;;
    burst) node measure.mjs burst "$ferry" "$fpid" "$work/small" ;;
    *) echo "unknown phase $phase (PHASES takes images, video, burst)" >&2; exit 1 ;;
  esac
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
