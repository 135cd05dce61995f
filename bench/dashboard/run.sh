#!/usr/bin/env bash
# Dashboard benchmark: (1) gzipped size of Ferry's demo page without React next to an Uppy
# Dashboard + @uppy/tus page built the same way (same Vite, same config, React left external);
# (2) time to add 10,000 files through each full Dashboard in headless Chromium, and frame times
# while scrolling the 10,000-file list; (3) picking 10,000 real files (tmpfs) through each
# Dashboard's <input type=file>: time to the count and first rows, longest main-thread task;
# (4) dropping a folder of the same files on each Dashboard: time to a count and the first rows,
# to the full count, longest main-thread task; (5) while the sizes of the picked files are read:
# frames per second, longest task, an application timer's delay, time to every size against a
# bare loop (paint.mjs, Ferry's page only).
# Goal: Ferry's page under half of Uppy's beyond React. Figures only; never fails on timing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

[[ -d node_modules ]] || npm ci --no-audit --no-fund
[[ -d "$here/node_modules/@uppy/dashboard" ]] || (cd "$here" && npm ci --no-audit --no-fund --legacy-peer-deps --no-workspaces)

out="$root/bench/results/dashboard"
for page in ferry uppy; do
  for react in external bundled; do
    BENCH_PAGE=$page BENCH_REACT=$react npx --no-install vite build --config "$here/vite.config.mjs" >/dev/null 2>&1
  done
done

# Sum of gzip -9 sizes of a build's files with one extension.
gz() { find "$out/$1/assets" -name "*.$2" -exec sh -c 'gzip -9c "$1" | wc -c' _ {} \; | awk '{s+=$1} END {print s+0}'; }

ferry_js=$(gz ferry-no-react js)
uppy_js=$(gz uppy-no-react js)
ferry_css=$(gz ferry-no-react css)
uppy_css=$(gz uppy-no-react css)
ferry_full=$(gz ferry-full js)
uppy_full=$(gz uppy-full js)
kb() { awk -v b="$1" 'BEGIN { printf "%.1f KB", b / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "bundle size, gzip -9, React external (the part a page pays beyond React):"
printf '  %-28s JS %9s   CSS %8s\n' "Ferry demo (@ferry/react)" "$(kb "$ferry_js")" "$(kb "$ferry_css")"
printf '  %-28s JS %9s   CSS %8s\n' "Uppy Dashboard + @uppy/tus" "$(kb "$uppy_js")" "$(kb "$uppy_css")"
echo "  Ferry / Uppy JS: $(ratio "$ferry_js" "$uppy_js")  (goal: under 0.50)"
echo "  Ferry / Uppy JS+CSS: $(ratio $((ferry_js + ferry_css)) $((uppy_js + uppy_css)))"
echo "  with React bundled: Ferry $(kb "$ferry_full"), Uppy $(kb "$uppy_full")"

# Runs driver $1 (a .mjs here) into $out/$2.jsonl and prints its lines. Node 20 runs no
# TypeScript: the driver (and the shared page driver it imports) is bundled first.
drive() {
  npx --no-install rolldown "$here/$1.mjs" --platform node --format esm \
    --external playwright-core --file "$out/$1.bundle.mjs" >/dev/null
  node "$out/$1.bundle.mjs" "$out" >"$out/$2.jsonl"
  sed 's/^/  /' "$out/$2.jsonl"
}

echo "adding files through the full Dashboard (until shown), headless Chromium:"
drive measure timing
ferry_ms=$(grep '"ferry"' "$out/timing.jsonl" | sed 's/.*"ms":\([0-9]*\).*/\1/')
uppy_ms=$(grep '"uppy"' "$out/timing.jsonl" | sed 's/.*"ms":\([0-9]*\).*/\1/')
echo "  Uppy / Ferry time: $(ratio "$uppy_ms" "$ferry_ms")x"

echo "picking files through each Dashboard's <input type=file> (real files on tmpfs), headless Chromium:"
drive input input
echo "  (goal: count and first rows within 300 ms, no main-thread task over 100 ms; the change task's"
echo "   part before the event is Chromium making the File objects, not the page)"

echo "painting while the sizes of 10,000 picked files are read (Ferry's page; measured in the page), headless Chromium:"
REPS="${REPS:-6}" drive paint paint
echo "  (goal: >= 50 frames/s over the first 4 s, no task over 50 ms after the change task, timer delay"
echo "   <= 50 ms, sizesOverBare <= 1.2 (median; sizesOverSliced: against reading in slices while painting,"
echo "   no library); PAGES=label=dir,... compares builds in one run, PROFILE=1 or TRACE=1 says where the time went)"

echo "dropping a folder of the same files on each Dashboard (CDP drag of the directory), headless Chromium:"
drive drop drop
echo "  (goal: a count and first rows within 300 ms of the drop, no main-thread task over 100 ms; each"
echo "   file of a dropped folder is a round trip to the browser, so the full count comes seconds later)"
