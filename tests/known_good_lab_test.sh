#!/usr/bin/env bash
# Earned passes in a practice lab (network namespaces on a bridge, every link 1 Gbit/s): a full
# sweep of 8 hosts passes them all; then two of them are slowed to half rate and their agents
# restarted (a bad rollout). `fabricctl sweep --max-age 1h` over all eight measures the two
# beside max(3, 2) known-good references, which judge them, and drains exactly those two: the
# stale nodes do not set their own yardstick. Needs root and iproute2; skips (saying why)
# otherwise.
set -uo pipefail

# shellcheck source=tests/testlib.sh
source tests/testlib.sh
require_lab "the known-good lab"

export FABRIC_BIN=$PWD
export FABRIC_LAB_DIR=${TEST_TMPDIR:-/tmp}/known-good-lab
export FABRIC_LAB_PREFIX=fabkg
OUT=${TEST_TMPDIR:-/tmp}/known-good-reports
mkdir -p "$OUT"
lab() { bash scripts/lab.sh "$@"; }
trap 'lab down >/dev/null 2>&1' EXIT

if ! lab up 8 > "$OUT/up.log" 2>&1; then
  bad "lab up (see $OUT/up.log)"
  finish
fi

# What a report says: its drain list, its decision, and each node's pass.
summary() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("drain", ",".join(sorted(r.get("summary", {}).get("drain", []))))
print("measured", ",".join(sorted(n["node"] for n in r.get("health", {}).get("nodes", []))))
print("passed", ",".join(sorted(n["node"] for n in r.get("health", {}).get("nodes", [])
                                if n.get("pass", {}).get("earned"))))
print("decision", r.get("sweep", {}).get("max_age_decision", ""))
PY
}

lab sweep --probes tcp_bw --format json --output "$OUT/full.json" 2> "$OUT/full.err"
code=$?
got=$(summary "$OUT/full.json")
check "the full sweep passes all eight (exit $code)" \
  bash -c "[[ $code -eq 0 ]] && grep -qx 'passed node-1,node-2,node-3,node-4,node-5,node-6,node-7,node-8' <<<'$got'"

for host in node-3 node-6; do
  lab throttle "$host" 500mbit >> "$OUT/fault.log" 2>&1 || bad "throttle $host (see $OUT/fault.log)"
  lab restart "$host" >> "$OUT/fault.log" 2>&1 || bad "restart $host (see $OUT/fault.log)"
done

lab sweep --probes tcp_bw --max-age 1h --format json --output "$OUT/aged.json" 2> "$OUT/aged.err"
code=$?
got=$(summary "$OUT/aged.json")
echo "$got"
check "--max-age measures the two restarted hosts beside three references" \
  bash -c "grep -q '^decision 2 stale node(s) measured beside 3 known-good reference(s)' <<<'$got' &&
           [[ \$(grep '^measured ' <<<'$got' | tr ',' '\n' | wc -l) -eq 5 ]] &&
           grep -q '^measured .*node-3' <<<'$got' && grep -q '^measured .*node-6' <<<'$got'"
check "and drains exactly those two (exit $code)" \
  bash -c "[[ $code -eq 2 ]] && grep -qx 'drain node-3,node-6' <<<'$got'"
check "neither slow host is passed" bash -c "! grep -q '^passed .*node-[36]' <<<'$got'"
finish
