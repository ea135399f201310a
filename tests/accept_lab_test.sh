#!/usr/bin/env bash
# fabricctl accept in a practice lab (network namespaces on a bridge, links shaped with tc): four
# hosts swept first become the known-good references; then racks of new hosts are accepted or
# rejected against them. A healthy pair of hosts is accepted over two passes, nothing raised; a
# host with another MTU is rejected for its configuration (config_drift, and the sweep's own
# mtu_mismatch); a rack of four hosts at 60 % of the references' rate, which judged among
# themselves would be alike, is rejected host by host as below_reference, each host's figure in
# the acceptance about 60 % of the references' among themselves. In every case nothing
# else is named; and with two rails whose switches speak LLDP, a host whose rail-1 NIC is cabled
# to rail 0's switch is rejected as miscabled, and one whose rail-0 NIC is on another port than
# the cabling plan's, while a host cabled as planned is accepted. Each acceptance is recorded in
# the controller's history (`history --acceptances`). Automatic references follow the site's
# placement (the configuration's `nodes:`), never the labels agents give themselves. Needs root, iproute2 and lldpd; skips
# (saying why) otherwise.
set -uo pipefail

# shellcheck source=tests/testlib.sh
source tests/testlib.sh
require_lab "the acceptance lab"
require_programs lldpd lldpcli

export FABRIC_BIN=$PWD
export FABRIC_LAB_DIR=${TEST_TMPDIR:-/tmp}/accept-lab
export FABRIC_LAB_PREFIX=fabaccept
OUT=${TEST_TMPDIR:-/tmp}/accept-reports
mkdir -p "$OUT"
lab() { bash scripts/lab.sh "$@"; }
trap 'lab down >/dev/null 2>&1' EXIT

# One line per new node: "NODE accepted" or "NODE rejected CHECK:KIND,... ", then a line per
# finding about a reference or no new node ("reference KIND NODE", "other KIND ...") that is not
# a configuration finding every node shares.
verdicts_of() {
  python3 - "$1" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
for n in a.get("nodes", []):
    failed = sorted(c["name"] + ":" + f["kind"] for c in n.get("checks", []) for f in c.get("findings", []))
    print(n["node"], "accepted" if n.get("accepted") else "rejected " + ",".join(failed))
for f in a.get("reference_findings", []):
    if f["kind"] != "rdma_unavailable":
        print("reference", f["kind"], f.get("node", ""))
for f in a.get("other_findings", []):
    print(" ".join(x for x in ("other", f["kind"], f.get("node", ""), f.get("device", "")) if x))
print("passes", len(a.get("sweep_ids", [])))
PY
}

accept_case() {  # NAME WANT_EXIT WANT_VERDICTS ACCEPT_FLAGS...
  local name=$1 want_exit=$2 want=$3; shift 3
  lab accept --duration 500ms --format json --output "$OUT/$name.json" "$@" 2> "$OUT/$name.err"
  local got_exit=$? got
  got=$(verdicts_of "$OUT/$name.json" 2>&1)
  if [[ $got_exit -eq $want_exit && $got == "$want" ]]; then
    ok "$name: exit $got_exit, [${got//$'\n'/; }]"
  else
    bad "$name: exit $got_exit (want $want_exit), [${got//$'\n'/; }] (want [${want//$'\n'/; }])"
    cat "$OUT/$name.err"
    lab accept --duration 500ms "$@" 2>/dev/null | head -40
  fi
}

slow=()
for i in 8 9 10 11; do slow+=(--throttle "node-$i=600mbit"); done
if ! lab up 11 --mtu node-7=1400 "${slow[@]}" > "$OUT/up.log" 2>&1; then
  bad "lab up (see $OUT/up.log)"
  finish
fi

# Nothing is known-good yet: accept refuses to judge against nobody, and says how to go on.
lab accept --nodes node-5 > /dev/null 2> "$OUT/no-references.err"
code=$?
check "no known-good reference: exit 3 ($code), naming --reference" \
  bash -c "[[ $code -eq 3 ]] && grep -q -- '--reference none' '$OUT/no-references.err'"

# The references: a sweep of four healthy hosts, with the audits, passes them.
lab sweep --nodes 'node-[1-4]' --duration 500ms --audits --format json --output "$OUT/references.json" \
  2> "$OUT/references.err"
listed=$(lab nodes --format json | python3 -c '
import json, sys
print(",".join(sorted(n["inventory"]["node_name"] for n in json.load(sys.stdin).get("nodes", [])
                      if n.get("known_good") and not n["known_good"].get("lost"))))')
check "the reference sweep makes node-1..4 known-good ($listed)" test "$listed" = "node-1,node-2,node-3,node-4"

accept_case healthy-pair 0 "$(printf 'node-5 accepted\nnode-6 accepted\npasses 2')" \
  --nodes 'node-[5-6]' --repeat 2
# The acceptance is kept in history: node-5 and node-6 accepted, over its two passes' sweeps.
sweeps=$(python3 - "$OUT/healthy-pair.json" 2>/dev/null <<'PY'
import json, sys
print(",".join(str(i) for i in json.load(open(sys.argv[1])).get("sweep_ids", [])))
PY
)
lab history --acceptances > "$OUT/acceptances.txt" 2>&1
check "history --acceptances: node-5 and node-6 accepted over sweeps ${sweeps:-none}" \
  grep -q " accepted 2 (node-5,node-6), rejected 0; sweeps ${sweeps:-none}\$" "$OUT/acceptances.txt"
# Automatic references come from the site's placement, never from what agents say of
# themselves: node-1..4's agents label themselves rack=r1, the rack the site places node-7 in,
# and are not preferred for that; node-5 (rack=r2 by its agent), which the site places there,
# is. The rest are the most recently passed (node-1..6 alike, by the last acceptance's sweep),
# then by name.
printf 'nodes:\n  - {node: node-7, labels: {rack: r1}}\n  - {node: node-5, labels: {rack: r1}}\n' \
  >> "$FABRIC_LAB_DIR/lab.yaml"
lab accept --nodes node-7 --duration 500ms --format json --output "$OUT/placed.json" \
  2> "$OUT/placed.err"
refs=$(python3 -c 'import json, sys; print(",".join(json.load(open(sys.argv[1])).get("reference_nodes", [])))' \
  "$OUT/placed.json" 2>&1)
check "automatic references by the site's placement, not self-labels: node-5,node-1,node-2,node-3 ($refs)" \
  test "$refs" = "node-5,node-1,node-2,node-3"
accept_case other-mtu 2 "$(printf 'node-7 rejected configuration:config_drift,configuration:mtu_mismatch\npasses 1')" \
  --nodes node-7 --reference 'node-[1-4]'
want=""
for i in 8 9 10 11; do want+="node-$i rejected fabric:below_reference"$'\n'; done
# Four of the eight nodes judged to drain at once: more than the breaker allows (10 %, 3 nodes),
# so nobody is drained and the breaker says so; the four are rejected all the same.
accept_case slow-rack 2 "${want}other drain_breaker_open"$'\n'"passes 1" \
  --nodes 'node-[8-11]' --reference 'node-[1-4]'
check "slow-rack: each node's Gb/s with the references is 40-80 % of theirs among themselves" \
  python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
shares = [f["bw_gbps"] / f["reference_bw_gbps"] for n in a["nodes"] for f in n["figures"]]
print("slow-rack shares:", ", ".join("%.2f" % s for s in shares))
sys.exit(0 if len(shares) == 4 and all(0.4 < s < 0.8 for s in shares) else 1)' "$OUT/slow-rack.json"

# The acceptance as JUnit: one case per node and check, the rejected ones failures.
lab accept --nodes node-7 --reference 'node-[1-4]' --duration 500ms --format junit \
  > "$OUT/other-mtu.xml" 2>/dev/null
check "JUnit: 4 cases for node-7, 1 failure naming config_drift" \
  grep -q 'tests="4" failures="1"' "$OUT/other-mtu.xml"
check "JUnit: the failure is the configuration check's" \
  grep -q 'name="configuration">' "$OUT/other-mtu.xml"

# A miscabled NIC: two rails whose switches speak LLDP, node-6's rail-1 NIC cabled to rail 0's
# switch (it still reaches rail 1 through the switches, so every figure is fine).
# A cabling plan beside it: node-5's NICs and node-6's rail-0 NIC planned, the latter at a port
# it is not on; node-6's rail-1 NIC left to the rails' rule.
cat > "$OUT/cabling.txt" <<'PLAN'
# node  netdev  switch    port
node-5  eth0    rail0-sw  p5
node-5  eth1    rail1-sw  r1p5
node-6  eth0    rail0-sw  p9
PLAN
lab down > /dev/null 2>&1
if ! lab up 6 --rails 2 --miscable node-6:1=0 --cabling "$OUT/cabling.txt" > "$OUT/up-rails.log" 2>&1; then
  bad "lab up --rails 2 --miscable (see $OUT/up-rails.log)"
  finish
fi
lab sweep --nodes 'node-[1-4]' --duration 500ms --audits --format json --output "$OUT/rail-references.json" \
  2> "$OUT/rail-references.err"
accept_case miscabled 2 \
  "$(printf 'node-5 accepted\nnode-6 rejected cabling:miscabled,cabling:miscabled\npasses 1')" \
  --nodes 'node-[5-6]' --reference 'node-[1-4]'
check "miscabled names node-6's eth1 on rail0-sw, a leaf of rail0" \
  grep -q "node-6's eth1 (rail1) is cabled to rail0-sw, a leaf of rail0" "$OUT/miscabled.json"
check "miscabled names node-6's eth0 at port p6 where the plan has p9" \
  grep -q "node-6's eth0 (rail0) is cabled to rail0-sw port [^;]*p6; the cabling plan cables it to rail0-sw port p9" \
  "$OUT/miscabled.json"
finish
