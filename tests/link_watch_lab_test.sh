#!/usr/bin/env bash
# The agents' link watch in a practice lab (network namespaces on a bridge): a host's link goes
# down and comes back twice between sweeps, its switch port turned off and on while no sweep
# runs. The next `fabricctl check` on that host names link_flapping (critical: drain) from its
# agent's watch, and the check on another host names nothing; the next sweep names it too, drains
# that host alone and raises nothing else, every pair measured at full rate. Needs root and
# iproute2; skips (saying why) otherwise.
set -uo pipefail

# shellcheck source=tests/testlib.sh
source tests/testlib.sh
require_lab "the link watch lab"

export FABRIC_BIN=$PWD
export FABRIC_LAB_DIR=${TEST_TMPDIR:-/tmp}/watch-lab
export FABRIC_LAB_PREFIX=fabwatch
OUT=${TEST_TMPDIR:-/tmp}/watch-reports
mkdir -p "$OUT"
lab() { bash scripts/lab.sh "$@"; }
trap 'lab down >/dev/null 2>&1' EXIT

if ! lab up 4 > "$OUT/up.log" 2>&1; then
  bad "lab up (see $OUT/up.log)"
  finish
fi

# Before any flap: the watch has sampled (every second in the lab) and found nothing.
sleep 3
lab check node-2 --audits link_watch --format drain > "$OUT/quiet.drain" 2> "$OUT/quiet.err"
code=$?
check "before the flap: check on node-2 exits 0 ($code), drains nothing" \
  bash -c "[[ $code -eq 0 && ! -s '$OUT/quiet.drain' ]]"

lab flap node-2 2 > "$OUT/flap.log" 2>&1 || bad "lab flap (see $OUT/flap.log)"
sleep 3  # the next samples, and the agent back with its controller

lab check node-2 --format drain > "$OUT/flapped.drain" 2> "$OUT/flapped.err"
code=$?
check "after the flaps: check on node-2 exits 2 ($code) and drains it for link_flapping" \
  bash -c "[[ $code -eq 2 ]] && grep -qx \$'node-2\tlink_flapping' '$OUT/flapped.drain'"
lab check node-2 --audits link_watch > "$OUT/flapped.txt" 2>&1
check "the check says how often and when" grep -q "eth0 went down 2 times in the last 1h" "$OUT/flapped.txt"
lab check node-3 --audits link_watch --format drain > "$OUT/other.drain" 2>&1
code=$?
check "node-3's own check names nothing ($code)" bash -c "[[ $code -eq 0 && ! -s '$OUT/other.drain' ]]"

# The next sweep asks every agent for its watch: node-2 drained for it, nothing else named.
lab sweep --format json --output "$OUT/sweep.json" 2> "$OUT/sweep.err"
code=$?
got=$(python3 - "$OUT/sweep.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for f in r.get("findings", []):
    if f["kind"] != "rdma_unavailable":
        print(f["kind"], f.get("node", ""), f.get("device", ""))
print("drain", ",".join(r.get("summary", {}).get("drain", [])))
PY
)
want=$'link_flapping node-2 eth0\ndrain node-2'
if [[ $code -eq 2 && $got == "$want" ]]; then
  ok "sweep: exit 2, [${got//$'\n'/; }]"
else
  bad "sweep: exit $code (want 2), [${got//$'\n'/; }] (want [${want//$'\n'/; }])"
  cat "$OUT/sweep.err"
fi
finish
