#!/usr/bin/env bash
# The practice lab for real: 5 hosts in network namespaces on a bridge, links shaped with tc
# tbf; one host throttled, another with a smaller MTU. Checks the sweep's verdict and findings,
# the validity of every report format, a node killed in the middle of a sweep, and history
# across a controller restart. Every host has stand-in GPUs (tests/fake_gpu: no GPU, no real
# NCCL) so that the NCCL path of the all-reduce runs across namespaces too; one host's NCCL
# has InfiniBand turned off. Needs root and iproute2; skips (saying why) otherwise.
set -uo pipefail

# shellcheck source=tests/testlib.sh
source tests/testlib.sh
require_lab "the lab test"

export FABRIC_BIN=$PWD
export FABRIC_LAB_DIR=${TEST_TMPDIR:-/tmp}/lab
export FABRIC_LAB_PREFIX=fabtest
OUT=${TEST_TMPDIR:-/tmp}/reports
mkdir -p "$OUT"
lab() { bash scripts/lab.sh "$@"; }
trap 'lab down >/dev/null 2>&1' EXIT

lab up 5 --throttle node-3=200mbit --mtu node-5=1400 --gpus node-1=2 --gpus node-2=1 \
  --gpus node-3=1 --gpus node-4=1 --gpus node-5=1 --env node-4=NCCL_IB_DISABLE=1 ||
  { echo "FAIL: lab up"; exit 1; }

# 1. The throttled host is a straggler and the odd MTU a mismatch; nothing else, exit 2.
lab sweep --format json --output "$OUT/sweep.json"
check "sweep exits 2 (critical)" test $? -eq 2
findings=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema"] == "fabricctl.report/v1"
for f in r.get("findings", []):
    print(f["kind"], f["node"], f.get("peer", ""))
' "$OUT/sweep.json" | sort)
check "findings are exactly node-3 straggler and node-5 MTU" \
  test "$findings" = "$(printf 'mtu_mismatch node-5 \nstraggler_node node-3 ')"
healthy=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join(sorted(n["node"] for n in r["health"]["nodes"] if n["status"] == "HEALTH_OK")))
' "$OUT/sweep.json")
check "the healthy hosts are ok ($healthy)" test "$healthy" = "node-1 node-2 node-4"
pairs=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(sum(1 for p in r["health"]["pairs"] if "bw_gbps" in p))
' "$OUT/sweep.json")
check "all 10 pairs measured ($pairs)" test "$pairs" -eq 10

# 2. Every report format is valid for its consumer.
lab map --format junit --output "$OUT/map.xml"
check "map exits 2 like the sweep" test $? -eq 2
check "JUnit passes xmllint against the JUnit schema" \
  xmllint --noout --schema tests/fixtures/junit.xsd "$OUT/map.xml"
lab map --format prom --output "$OUT/map.prom"
check "prom passes promtool check metrics" sh -c "promtool check metrics < '$OUT/map.prom'"
lab map --format html --output "$OUT/map.html"
# The page as headless Chromium builds it (its DOM after parsing), not the file's text.
dom() {
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$OUT/chromium" --dump-dom "file://$1" 2>/dev/null
}
dom "$OUT/map.html" > "$OUT/map.dom"
cells=$(grep -o 'class="cell"' "$OUT/map.dom" | wc -l)
check "the HTML opens in headless Chromium with one cell per ordered pair on each map ($cells)" test "$cells" -eq 40
check "Chromium: both legends, the bandwidth scale, the times, node-3 in the drain list" python3 -c '
import re, sys
d = open(sys.argv[1]).read()
assert "id=\"status-legend\"" in d and "id=\"bandwidth-legend\"" in d and "id=\"bwscale\"" in d
assert re.search(r"<th>finished</th><td>20\d\d-\d\d-\d\d \d\d:\d\d:\d\d UTC</td>", d)
assert re.search(r"<p id=\"drain\"><b>Drain:</b> node-3</p>", d), "drain list"
assert "id=\"pairs\"" in d and "id=\"audits\"" in d
' "$OUT/map.dom"

lab metrics > "$OUT/scrape.prom"
check "the controller's /metrics passes promtool and counts 5 online nodes" sh -c \
  "promtool check metrics < '$OUT/scrape.prom' && grep -q 'fabricctl_nodes{state=\"online\"} 5' '$OUT/scrape.prom'"

# A quick sweep measures each node once; the slow pair is settled by re-pairing its ends with
# good nodes, and the throttled host is still the one named.
lab sweep --pairing quick --format json --output "$OUT/quick.json"
quick=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join(sorted(f["kind"] + ":" + f["node"] for f in r["findings"]
                      if f["kind"] != "mtu_mismatch")))
' "$OUT/quick.json")
check "quick pairing with localisation names node-3 ($quick)" test "$quick" = "straggler_node:node-3"

# The all-reduce over the whole lab: correct, and slow around the throttled host, which is named.
lab sweep --probes allreduce --allreduce-backend tcp --sizes 4M --format json --output "$OUT/allreduce.json"
check "the all-reduce sweep exits 2" test $? -eq 2
named=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
c = r["health"]["collectives"][0]["collective"][0]
names = [f["node"] for f in r["findings"] if f["kind"] == "allreduce_below_threshold"]
print(c.get("wrong", "0"), ",".join(names), "busbw" if c["busbw_gbytes"] > 0 else "none")
' "$OUT/allreduce.json")
check "its data check passes and node-3 is named ($named)" test "$named" = "0 node-3 busbw"
# One ring per rack: rack r1 (node-1..4) is measured, rack r2 (node-5 alone) has no ring.
lab sweep --probes allreduce --allreduce-backend tcp --sizes 4M --allreduce-group rack --format json \
  --output "$OUT/racks.json"
racks=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
rings = [c["effective_spec"]["allreduce"]["group"] for c in r["health"]["collectives"]]
names = [f["node"] for f in r["findings"] if f["kind"] == "allreduce_below_threshold"]
print(len(rings), ",".join(rings[0]), ",".join(names))
' "$OUT/racks.json")
check "per-rack rings: one ring for r1, node-3 named ($racks)" test "$racks" = "1 node-1,node-2,node-3,node-4 node-3"

# NCCL (auto: every host has GPUs and NCCL): one rank per GPU, the unique id through the
# controller; node-4's sockets are found in its rank's log and named.
lab sweep --probes allreduce --sizes 1M --format json --output "$OUT/nccl.json"
check "the NCCL all-reduce sweep exits 2" test $? -eq 2
nccl=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
c = r["health"]["collectives"][0]
fallback = [f["node"] for f in r["findings"] if f["kind"] == "tcp_fallback"]
print(c["device"], c["collective"][0].get("wrong", "0"), ",".join(fallback), sep="|")
' "$OUT/nccl.json")
check "NCCL over 6 ranks sums correctly and node-4 falls back to TCP ($nccl)" \
  test "$nccl" = "nccl, 6 ranks on 5 nodes|0|node-4"

# 3. An agent killed in the middle of a sweep costs its pairs, not the sweep.
start=$SECONDS
lab sweep --format json --output "$OUT/killed.json" &
sweep=$!
for _ in $(seq 1 100); do
  lab history --format json 2>/dev/null | grep -q SWEEP_RUNNING && break
  sleep 0.1
done
lab kill node-2 >/dev/null
wait $sweep
check "the sweep with a dead node still exits 2" test $? -eq 2
check "and finishes within its deadline ($((SECONDS - start))s)" test $((SECONDS - start)) -lt 90
verdict=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
kinds = sorted({(f["kind"], f["node"]) for f in r["findings"]})
unreachable = [n for k, n in kinds if k == "node_unreachable"]
measured = sum(1 for p in r["health"]["pairs"]
               if "bw_gbps" in p and "node-2" not in (p["node"], p["peer"]))
print(",".join(unreachable), measured)
' "$OUT/killed.json")
check "node-2 is node_unreachable and the other 6 pairs are measured ($verdict)" test "$verdict" = "node-2 6"
lab map --format html --output "$OUT/killed.html"
dom "$OUT/killed.html" > "$OUT/killed.dom"
check "Chromium: the dead node is marked in the node table and on the maps" python3 -c '
import sys
d = open(sys.argv[1]).read()
assert "<tr class=\"unreachable\"><td>node-2</td>" in d, "node table"
assert "node-2 \u2715</text>" in d, "map label"
' "$OUT/killed.dom"

# 4. History survives a controller restart.
lab restart-controller >/dev/null
sweeps=$(lab history --format json | python3 -c '
import json, sys
print(" ".join(s["state"] for s in json.load(sys.stdin)["sweeps"]))')
check "history lists every sweep after a restart ($sweeps)" \
  test "$sweeps" = "$(printf 'SWEEP_COMPLETED %.0s' 1 2 3 4 5; echo SWEEP_COMPLETED)"
lab map 1 --format json --output "$OUT/again.json"
check "the first sweep's report is intact" python3 -c '
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["findings"] == b["findings"] and a["health"] == b["health"]
' "$OUT/sweep.json" "$OUT/again.json"

# 5. History pruned on demand: the newest two sweeps stay, and each node's last pass (a pass
# needs pair probes with two peers: the all-reduce sweeps pass nobody); the others' reports go.
keep=$( { lab history --format json | python3 -c '
import json, sys
ids = sorted(int(s["sweep_id"]) for s in json.load(sys.stdin)["sweeps"])
print("\n".join(str(i) for i in ids[-2:]))'
  lab nodes --format json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["nodes"]:
    if "known_good" in n: print(n["known_good"]["sweep_id"])'; } | sort -un)
kept=$(wc -l <<<"$keep")
check "history prune --keep-sweeps 2 deletes all but those ($((6 - kept)) of 6)" \
  test "$(lab history prune --keep-sweeps 2 2>&1 | cut -d' ' -f1-3)" = "pruned $((6 - kept)) sweeps"
left=$(lab history --format json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["sweeps"]))')
check "$kept sweeps are left ($left)" test "$left" = "$kept"
gone=$(comm -23 <(seq 1 6 | sort) <(sort <<<"$keep") | head -n1)
check "a pruned sweep's report is gone (sweep $gone)" \
  bash -c "[[ -n '$gone' ]] && ! bash scripts/lab.sh map '$gone' --format json >/dev/null 2>&1"

finish
