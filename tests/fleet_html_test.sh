#!/usr/bin/env bash
# A fleet's HTML report in headless Chromium: 1,000 nodes in leaves of 32, every pair within a
# leaf measured (the maps would pass 20,000 cells, so they are drawn leaf by leaf). The file
# stays under 4 MB, Chromium opens it (within a minute on a loaded CI machine; about a second
# on an idle one), and the DOM holds a map per leaf.
set -uo pipefail
source tests/testlib.sh
require_programs chromium
OUT=${TEST_TMPDIR:-/tmp}/fleet-html
mkdir -p "$OUT"
"$1" 1000 > "$OUT/fleet.html"
size=$(stat -c %s "$OUT/fleet.html")
check "the 1,000-node report is under 4 MB ($size bytes)" test "$size" -lt $((4 << 20))
start=$(date +%s.%N)
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$OUT/chromium" --dump-dom "file://$OUT/fleet.html" > "$OUT/fleet.dom" 2>/dev/null
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
echo "Chromium loaded and dumped it in $took s"
check "Chromium opens it within a minute ($took s)" awk -v t="$took" 'BEGIN {exit !(t < 60)}'
groups=$(grep -o '<details class="group">' "$OUT/fleet.dom" | wc -l)
check "a map per leaf in the DOM ($groups)" test "$groups" -eq 32
check "the leaf x leaf table is there" grep -q 'id="groups"' "$OUT/fleet.dom"
finish
