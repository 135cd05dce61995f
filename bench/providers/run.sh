#!/usr/bin/env bash
# bench/providers: each of PROVIDERS (default "drive dropbox box onedrive") through ferry's
# Companion routes, against its fake in ferry-testkit (`ferry-fakes`, release build; every fake
# serves the same fixture, `ferry_testkit::fake::bench`), on loopback, one provider after the other:
#   listing   — a folder of ITEMS (10,000) files paged through /{provider}/list to the end
#               (seconds to all pages, pages/s, slowest page; median of REPS)
#   small     — SMALL (100) files of SMALL_KIB KiB imported with POST /{provider}/get into
#               ferry's own tus endpoint, CONC at a time (seconds, files/s, MiB/s)
#   large     — one LARGE_MIB (1024) MiB file imported the same way (seconds, MiB/s)
#   link      — the same size as a link import (POST /url/get) from a plain loopback origin, right
#               after the provider's large import: the same transfer engine and tus ingest, the
#               reference the provider's import is compared with (its speed ratio)
# ferry's peak RSS (VmHWM from /proc, reset between phases through clear_refs) per phase, and
# for the two large imports the CPU seconds (user + system, from /proc) ferry and the serving
# process (the fakes, or the link origin) spent, each including ferry serving the stored file
# back once: unlike wall time, these hardly move with the load of a shared machine, so they say
# where an import's time goes.
# Sign-in goes through ferry's /connect, the fake's consent page when it shows one, and the
# redirect back. Every imported file is read back from ferry and compared by sha256 with what the
# fake serves. Companion is not measured: its provider clients have their API bases hard-coded
# (Drive's `https://www.googleapis.com/drive/v3` got prefixUrl, and likewise for the others) and no
# option points them at a fake, so only ferry's absolute figures are printed (see bench/README.md).
# Environment: PROVIDERS, ITEMS, SMALL, SMALL_KIB, LARGE_MIB, CONC, REPS, FERRY_BIN, FERRY_FAKES_BIN.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
PROVIDERS=${PROVIDERS:-drive dropbox box onedrive}
ITEMS=${ITEMS:-10000}
SMALL=${SMALL:-100}
SMALL_KIB=${SMALL_KIB:-64}
LARGE_MIB=${LARGE_MIB:-1024}
CONC=${CONC:-6}
REPS=${REPS:-5}
# Without FERRY_BIN / FERRY_FAKES_BIN, the release builds of this checkout (cargo rebuilds only
# what changed, so a stale binary is never measured).
if [[ -z ${FERRY_BIN:-} || -z ${FERRY_FAKES_BIN:-} ]]; then
  (cd "$root" && cargo build --release -q -p ferry -p ferry-testkit --bins)
fi
FERRY_BIN=${FERRY_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/ferry}
FERRY_FAKES_BIN=${FERRY_FAKES_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/ferry-fakes}

work=$(mktemp -d)
source "$root/bench/support/processes.sh"
trap 'stop_all; rm -rf "$work"' EXIT

node_() { node --experimental-websocket --no-warnings "$@"; }
peak_kib() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }
reset_peak() { echo 5 >"/proc/$1/clear_refs"; }
tck=$(getconf CLK_TCK)
# CPU seconds (user + system) a process has used so far.
cpu_s() { awk -v t="$tck" '{printf "%.2f", ($14 + $15) / t}' "/proc/$1/stat"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
field() { node -e "const d=JSON.parse(require('fs').readFileSync(0,'utf8'));console.log(eval('d.'+process.argv[1]))" "$1"; }

echo "starting the fakes (${ITEMS}-item folder, ${SMALL} x ${SMALL_KIB} KiB, ${LARGE_MIB} MiB)..."
# The fakes run until their stdin closes.
start_held "$work" "$work/fakes.json" "$FERRY_FAKES_BIN" --folder-items "$ITEMS" --small-files "$SMALL" \
  --small-size $((SMALL_KIB * 1024)) --large-size $((LARGE_MIB * 1024 * 1024))
fakes_pid=${pids[0]}
for _ in $(seq 1 1200); do
  [[ -s $work/fakes.json ]] && break
  sleep 0.1
done
fx() { field "$1" <"$work/fakes.json"; }
# A provider's key in the fakes' JSON line.
fake_of() { case $1 in drive) echo google ;; *) echo "$1" ;; esac; }

# ferry with every measured provider pointed at its fake.
args=()
for p in $PROVIDERS; do
  f=$(fake_of "$p")
  case $p in
  drive) urls=(auth-url authUrl token-url tokenUrl api-url apiUrl) ;;
  dropbox) urls=(auth-url authUrl token-url tokenUrl api-url apiUrl content-url contentUrl) ;;
  box | onedrive) urls=(auth-url authUrl token-url tokenUrl api-url apiUrl) ;;
  *) echo "unknown provider $p (drive, dropbox, box, onedrive)" >&2 && exit 2 ;;
  esac
  flag=$f
  args+=("--$flag-key" "$(fx "$f.key")" "--$flag-secret" "$(fx "$f.secret")")
  for ((i = 0; i < ${#urls[@]}; i += 2)); do
    args+=("--$flag-${urls[i]}" "$(fx "$f.${urls[i + 1]}")")
  done
done
port=$(free_port)
ferry="http://127.0.0.1:$port"
"$FERRY_BIN" serve --listen "127.0.0.1:$port" --data-dir "$work/ferry-data" --allow-local-urls \
  --secret bench-secret "${args[@]}" >/dev/null 2>&1 &
fpid=$!
pids+=("$fpid")
wait_ready "$ferry/health"

head -c $((LARGE_MIB * 1024 * 1024)) /dev/urandom >"$work/src.bin"
oport=$(free_port)
# Not through node_: a backgrounded function is a subshell, and its PID is not node's.
node --experimental-websocket --no-warnings client.mjs origin "$oport" "$work/src.bin" &
origin_pid=$!
pids+=("$origin_pid")
wait_ready "http://127.0.0.1:$oport/"

# connect -> the fake's authorize (and consent page, if it shows one) -> redirect -> send-token.
sign_in() {
  local p=$1 state landed pending action
  state=$(printf '{"origin":"%s"}' "$ferry" | base64 -w0)
  landed=$(curl -s -c "$work/jar" -b "$work/jar" -L -o "$work/consent.html" -w '%{url_effective}' \
    "$ferry/$p/connect?state=$state")
  if grep -q 'name=pending' "$work/consent.html"; then
    pending=$(grep -o 'name=pending value=[0-9a-f]*' "$work/consent.html" | sed 's/.*value=//')
    action=$(grep -o 'action=[^ >]*' "$work/consent.html" | sed 's/action=//')
    landed=$(curl -s -c "$work/jar" -b "$work/jar" -L -o /dev/null -w '%{url_effective}' \
      -d "pending=$pending&decision=allow" "$(node -e 'console.log(new URL(process.argv[1]).origin)' "$landed")$action")
  fi
  node -e "console.log(new URL(process.argv[1]).searchParams.get('uppyAuthToken') ?? '')" "$landed"
}

: >"$work/report"
for p in $PROVIDERS; do
  f=$(fake_of "$p")
  echo "== $p: signing in..."
  token=$(sign_in "$p")
  [[ -n $token ]] || { echo "$p: no token after sign-in" >&2; exit 1; }
  node -e "const d=JSON.parse(require('fs').readFileSync(0,'utf8'))['$f'].bench;
    require('fs').writeFileSync('$work/small.json', JSON.stringify(d.small));
    require('fs').writeFileSync('$work/large.json', JSON.stringify([d.large]));" <"$work/fakes.json"

  echo "   listing ${ITEMS} items, $REPS times..."
  : >"$work/list"
  reset_peak "$fpid"
  for _ in $(seq "$REPS"); do
    node_ client.mjs list "$ferry" "$p" "$token" "$(fx "$f.bench.bigFolder")" >>"$work/list"
  done
  list_rss=$(peak_kib "$fpid")
  list_s=$(node -e "for (const l of require('fs').readFileSync(0,'utf8').trim().split('\n')) console.log(JSON.parse(l).seconds)" <"$work/list" | median)
  list_line=$(node -e "
    const ls=require('fs').readFileSync(0,'utf8').trim().split('\n').map(JSON.parse);
    const m=ls.find(l=>l.seconds===Number(process.argv[1]));
    console.log(m.pages, m.items, m.pagesPerSecond.toFixed(1), m.slowestPageMs.toFixed(1))" "$list_s" <"$work/list")
  read -r pages items pps slowest <<<"$list_line"
  [[ $items == "$ITEMS" ]] || { echo "$p: listed $items items, want $ITEMS" >&2; exit 1; }

  echo "   importing ${SMALL} small files, ${CONC} at a time..."
  reset_peak "$fpid"
  small=$(node_ client.mjs import "$ferry" "$p" "$token" "$ferry/files/" "$CONC" "$work/small.json")
  small_rss=$(peak_kib "$fpid")

  echo "   importing the ${LARGE_MIB} MiB file..."
  reset_peak "$fpid"
  c0=$(cpu_s "$fpid") s0=$(cpu_s "$fakes_pid")
  large=$(node_ client.mjs import "$ferry" "$p" "$token" "$ferry/files/" 1 "$work/large.json")
  large_rss=$(peak_kib "$fpid")
  large_cpu="$(awk -v a="$c0" -v b="$(cpu_s "$fpid")" 'BEGIN {printf "%.2f", b - a}') $(awk -v a="$s0" -v b="$(cpu_s "$fakes_pid")" 'BEGIN {printf "%.2f", b - a}')"

  echo "   link import of ${LARGE_MIB} MiB from a plain origin (reference)..."
  reset_peak "$fpid"
  c0=$(cpu_s "$fpid") s0=$(cpu_s "$origin_pid")
  linked=$(node_ client.mjs link "$ferry" "http://127.0.0.1:$oport/src.bin" "$ferry/files/" $((LARGE_MIB * 1024 * 1024)))
  link_rss=$(peak_kib "$fpid")
  curl -s "$(field url <<<"$linked")" | cmp - "$work/src.bin"
  # After the read-back, as the provider import's CPU includes its own.
  link_cpu="$(awk -v a="$c0" -v b="$(cpu_s "$fpid")" 'BEGIN {printf "%.2f", b - a}') $(awk -v a="$s0" -v b="$(cpu_s "$origin_pid")" 'BEGIN {printf "%.2f", b - a}')"

  node -e '
    // `node -e SCRIPT ARGS`: the arguments start at argv[1].
    const [s, l, k] = [1, 2, 3].map((i) => JSON.parse(process.argv[i]));
    const [p, listS, pages, items, pps, slowest, listRss, smallRss, largeRss, linkRss, reps, largeCpu, linkCpu] = process.argv.slice(4);
    const cpu = (pair, server) => { const [f, s] = pair.split(" "); return `CPU ferry ${f} s, ${server} ${s} s`; };
    const mib = (kib) => (Number(kib) / 1024).toFixed(0);
    console.log(`${p} (all imports byte-exact):`);
    console.log(`  list ${items} items        ${Number(listS).toFixed(3)} s to all ${pages} pages (${pps} pages/s, slowest page ${slowest} ms; median of ${reps})   peak RSS ${mib(listRss)} MiB`);
    console.log(`  import ${s.files} x ${(s.bytes / s.files / 1024).toFixed(0)} KiB     ${s.seconds.toFixed(2)} s (${s.filesPerSecond.toFixed(1)} files/s, ${s.mibPerSecond.toFixed(1)} MiB/s; ${s.exact}/${s.files} sha256 equal)   peak RSS ${mib(smallRss)} MiB`);
    console.log(`  import ${(l.bytes / 1048576).toFixed(0)} MiB file     ${l.seconds.toFixed(2)} s (${l.mibPerSecond.toFixed(0)} MiB/s; sha256 equal)   peak RSS ${mib(largeRss)} MiB   ${cpu(largeCpu, "fake")}`);
    console.log(`  link import, same size  ${k.seconds.toFixed(2)} s (${k.mibPerSecond.toFixed(0)} MiB/s; cmp equal)   peak RSS ${mib(linkRss)} MiB   ${cpu(linkCpu, "origin")}`);
    console.log(`  ${p} import vs the link import just after it: ${(k.seconds / l.seconds).toFixed(2)}x the speed`);
  ' "$small" "$large" "$linked" "$p" "$list_s" "$pages" "$items" "$pps" "$slowest" "$list_rss" "$small_rss" "$large_rss" "$link_rss" "$REPS" "$large_cpu" "$link_cpu" >>"$work/report"
done

echo
echo "Providers through ferry against their fakes (loopback; release builds; load average $(cut -d' ' -f1-3 /proc/loadavg)):"
cat "$work/report"
