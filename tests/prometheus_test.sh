#!/usr/bin/env bash
# Prometheus and node_exporter for real (Debian's prometheus 2.42 and prometheus-node-exporter
# 1.5): Prometheus scrapes the practice lab's controller and a node_exporter that reads the
# textfile directory where `fabricctl check` and `fabricctl map` write, with the shipped alert
# rules loaded; the series are read back through Prometheus' HTTP API. Checks the recipes of
# docs/operations.md and docs/reports.md end to end: both files accepted side by side, each
# node's verdict kept when a later sweep leaves the node out, counters, process metrics, and the
# node alert firing for the right node. Needs root, iproute2, prometheus and
# prometheus-node-exporter; skips otherwise.
set -uo pipefail

# shellcheck source=tests/testlib.sh
source tests/testlib.sh
require_lab "the Prometheus test"
require_programs prometheus prometheus-node-exporter promtool python3

export FABRIC_BIN=$PWD
export FABRIC_LAB_DIR=${TEST_TMPDIR:-/tmp}/prom-lab
export FABRIC_LAB_PREFIX=fabprom
DIR=${TEST_TMPDIR:-/tmp}/prom
rm -rf "$DIR"
mkdir -p "$DIR/tsdb"
# Debian's textfile directory, docs/operations.md's: the package's node_exporter reads it by default.
# Files of ours already there are put back afterwards.
TEXTFILE=/var/lib/prometheus/node-exporter
mkdir -p "$TEXTFILE" "$DIR/saved"
for f in fabric_check.prom fabric_map.prom; do
  [[ -e $TEXTFILE/$f ]] && mv "$TEXTFILE/$f" "$DIR/saved/"
done
lab() { bash scripts/lab.sh "$@"; }
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  lab down >/dev/null 2>&1
  rm -f "$TEXTFILE/fabric_check.prom" "$TEXTFILE/fabric_map.prom"
  for f in "$DIR"/saved/*.prom; do [[ -e $f ]] && mv "$f" "$TEXTFILE/"; done
}
trap cleanup EXIT

lab up 4 --leaves 2 --rails 2 --throttle node-3=200mbit > "$DIR/lab.up" 2>&1 || { cat "$DIR/lab.up"; echo "FAIL: lab up"; exit 1; }
CTL_NS=$(cat "$FABRIC_LAB_DIR/controller.ns")
METRICS=$(sed -E 's|^http://([^/]+)/metrics$|\1|' "$FABRIC_LAB_DIR/metrics.url")
in_ctl() { nsenter --net="/run/netns/$CTL_NS" "$@"; }
in_ctl ip link set lo up

# Four hosts on two leaves (node-1,2 and node-3,4), each with two NICs (rail0 and rail1); node-3's
# rail-0 NIC throttled. A sweep: node-3 critical (slow_nic on rail0). Then docs/operations.md's textfile recipe: a node's
# check and the latest sweep's map, side by side in node_exporter's directory.
lab sweep --duration 500ms --format json --output "$DIR/sweep1.json" 2> "$DIR/sweep1.err"
check "the first sweep exits 2 (node-3's rail-0 NIC slow)" test $? -eq 2
cli/fabricctl check --format prom --output /var/lib/prometheus/node-exporter/fabric_check.prom
check "check exits 1 here (no RDMA: a warning)" test $? -eq 1
lab map --format prom --output /var/lib/prometheus/node-exporter/fabric_map.prom
# A second sweep that leaves node-3 out: its verdict must stay in the controller's series.
lab sweep --nodes node-1,node-2,node-4 --duration 500ms --format json --output "$DIR/sweep2.json" 2> "$DIR/sweep2.err"
rc=$?
# Its verdict is whatever three healthy hosts' figures give (a noisy pair may warn); what the
# checks below need is that it ran without node-3 and measured the others.
check "the second sweep, without node-3, gives a verdict (exit $rc)" \
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); n=sorted(x["node"] for x in r["health"]["nodes"]); sys.exit(not (int(sys.argv[2]) <= 2 and n == ["node-1","node-2","node-4"] and r["health"].get("pairs")))' "$DIR/sweep2.json" "$rc"
# What the series must say follows from the two sweeps' reports: node-3 critical is the subject,
# the healthy hosts' verdicts are what their figures gave.
expect() {
  python3 - "$DIR/sweep1.json" "$DIR/sweep2.json" "$1" <<'PY'
import json, sys
r1, r2 = (json.load(open(f)) for f in sys.argv[1:3])
level = {"HEALTH_OK": 0, "HEALTH_WARNING": 1, "HEALTH_CRITICAL": 2, "HEALTH_UNKNOWN": 3}
sev = {"SEVERITY_OK": 0, "SEVERITY_WARNING": 1, "SEVERITY_CRITICAL": 2}
def status(*reports):  # the last report that includes a node gives its status
    out = {}
    for r in reports:
        out.update({n["node"]: level.get(n["status"], 3) for n in r["health"]["nodes"]})
    return " ".join(f"node={k}={v}" for k, v in sorted(out.items()))
def worst(r):
    return sev.get(r["summary"].get("worst_severity", "SEVERITY_OK"), 0)
what = sys.argv[3]
if what == "status-controller": print(status(r1, r2))
elif what == "status-map": print(status(r1))
elif what == "worst2": print(f"={worst(r2)}")
elif what == "sweeps":
    n = {k: 0 for k in ("ok", "warning", "critical")}
    for r in (r1, r2): n[("ok", "warning", "critical")[worst(r)]] += 1
    print(" ".join(f"result={k}={v}" for k, v in sorted(n.items())))
elif what == "slow_nic":
    print(f"kind=slow_nic,severity=critical={sum(f['kind'] == 'slow_nic' and f['severity'] == 'SEVERITY_CRITICAL' for r in (r1, r2) for f in r.get('findings', []))}")
elif what == "critical-nodes":
    print(" ".join(sorted(n["node"] for r in (r1, r2) for n in r["health"]["nodes"] if n["status"] == "HEALTH_CRITICAL")))
PY
}
for x in status-controller status-map worst2 sweeps slow_nic critical-nodes; do echo "expected $x: $(expect $x)"; done

# node_exporter (textfile collector only, its directory Debian's default) and Prometheus, in the
# controller's namespace.
in_ctl prometheus-node-exporter --web.listen-address=127.0.0.1:19100 --collector.disable-defaults \
  --collector.textfile > "$DIR/node_exporter.log" 2>&1 &
pids+=($!)
cp deploy/prometheus/fabricctl-rules.yml "$DIR/"
cat > "$DIR/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [fabricctl-rules.yml]
scrape_configs:
  - job_name: fabric-controller
    static_configs: [{targets: ["$METRICS"]}]
  - job_name: node
    static_configs: [{targets: ["127.0.0.1:19100"]}]
YAML
check "promtool check config" promtool check config "$DIR/prometheus.yml"
in_ctl prometheus --config.file="$DIR/prometheus.yml" --storage.tsdb.path="$DIR/tsdb" \
  --web.listen-address=127.0.0.1:19090 > "$DIR/prometheus.log" 2>&1 &
pids+=($!)

# query EXPR: the values of an instant query, "labels=value" per series, sorted.
query() {
  in_ctl python3 - "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
url = "http://127.0.0.1:19090/api/v1/query?" + urllib.parse.urlencode({"query": sys.argv[1]})
try:
    r = json.load(urllib.request.urlopen(url, timeout=5))
except Exception as e:
    print("error:", e); sys.exit(0)
out = []
for s in r["data"]["result"]:
    m = {k: v for k, v in s["metric"].items() if k not in ("instance", "job", "__name__")}
    out.append(",".join(f"{k}={m[k]}" for k in sorted(m)) + "=" + s["value"][1])
print(" ".join(sorted(out)))
PY
}
wait_query() {  # EXPR EXPECTED SECONDS: until the query answers EXPECTED
  local got=""
  for _ in $(seq 1 "$3"); do got=$(query "$1"); [[ $got == "$2" ]] && return 0; sleep 1; done
  echo "query $1: '$got', expected '$2'" >&2
  return 1
}
matches_then_query() {  # PATTERN EXPR EXPECTED SECONDS: EXPECTED matches PATTERN, and the query answers it
  # shellcheck disable=SC2053  # $1 is a glob pattern
  [[ $3 == $1 ]] || { echo "expected '$3' does not match $1" >&2; return 1; }
  wait_query "$2" "$3" "$4"
}

check "both scrape targets up" wait_query 'up' "=1 =1" 60
check "node_exporter read both textfiles without error" \
  wait_query 'node_textfile_scrape_error' "=0" 20
check "the check's verdict from the textfile: warning" \
  wait_query 'fabricctl_check_worst_severity' "=1" 20
check "the controller's latest sweep is the second; the map's file shows the first" \
  wait_query 'fabricctl_sweep_id' "=1 =2" 5
check "the controller: node-3 critical, kept though the latest sweep left it out" \
  matches_then_query '*node=node-3=2*' 'fabricctl_node_status{job="fabric-controller"}' "$(expect status-controller)" 20
check "the map's textfile: the sweep it rendered (node-3 critical)" \
  matches_then_query '*node=node-3=2*' 'fabricctl_node_status{job="node"}' "$(expect status-map)" 5
check "node-3's last sweep is older than node-1's" \
  wait_query 'fabricctl_node_last_sweep_timestamp_seconds{node="node-3"} < bool ignoring(node) fabricctl_node_last_sweep_timestamp_seconds{node="node-1"}' "=1" 5
pairs=$(query 'count(fabricctl_pair_bandwidth_bytes_per_second{job="fabric-controller",probe="tcp_bw"})')
check "every ordered pair's bandwidth on both rails, node-3's included ($pairs)" test "$pairs" = "=24"
check "pair series carry their rail" \
  wait_query 'count by (rail) (fabricctl_pair_bandwidth_bytes_per_second{job="fabric-controller"})' "rail=rail0=12 rail=rail1=12" 5
check "leaf-pair series of the latest sweep, per rail" \
  wait_query 'count by (rail) (fabricctl_group_pair_bandwidth_bytes_per_second{job="fabric-controller",level="leaf"})' "rail=rail0=3 rail=rail1=3" 5
check "latency series carry their probe" \
  wait_query 'count(fabricctl_pair_latency_seconds{job="fabric-controller",probe="tcp_lat"}) >= bool 12' "=1" 5
check "the latest sweep's verdict: the second's ($(expect worst2))" \
  wait_query 'fabricctl_sweep_worst_severity{job="fabric-controller"}' "$(expect worst2)" 5
check "sweeps_total counts both sweeps by verdict" \
  wait_query 'fabricctl_sweeps_total' "$(expect sweeps)" 5
check "findings_total counted node-3's slow NIC" \
  matches_then_query '*=[1-9]*' 'fabricctl_findings_total{kind="slow_nic",severity="critical"}' "$(expect slow_nic)" 5
check "the controller's process metrics" \
  wait_query 'process_resident_memory_bytes{job="fabric-controller"} > bool 0' "=1" 5
check "fabricctl_build_info from all three sources" \
  wait_query 'count by (source) (fabricctl_build_info)' "source=check=1 source=sweep=2" 5
alerts=""
for _ in $(seq 1 30); do
  alerts=$(in_ctl python3 -c '
import json, urllib.request
r = json.load(urllib.request.urlopen("http://127.0.0.1:19090/api/v1/alerts", timeout=5))
print(" ".join(sorted(a["labels"]["alertname"] + ":" + a["labels"].get("node", "") + ":" + a["state"]
                      for a in r["data"]["alerts"])))' 2>/dev/null)
  [[ $alerts == *FabricctlNodeCritical:node-3:firing* ]] && break
  sleep 1
done
# Only for node-3, unless a healthy host's own figures made it critical in its last sweep.
critical=" $(expect critical-nodes) "
check "the shipped rules: FabricctlNodeCritical fires for node-3 only ($alerts)" \
  bash -c '[[ "$1" == *FabricctlNodeCritical:node-3:firing* ]] || exit 1
    for n in node-1 node-2 node-4; do
      [[ "$1" == *FabricctlNodeCritical:$n:* && "$2" != *" $n "* ]] && exit 1
    done; exit 0' _ "$alerts" "$critical"

# The shipped Grafana dashboard: every panel's query runs and returns series (the node
# variable set to "All", as Grafana sends it: .*), and every metric name it uses exists.
cp deploy/grafana/fabricctl.json "$DIR/"
dashboard=$(in_ctl python3 - "$DIR/fabricctl.json" <<'PY'
import json, re, sys, urllib.error, urllib.parse, urllib.request
def query(expr):
    url = "http://127.0.0.1:19090/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        r = json.load(urllib.request.urlopen(url, timeout=5))
    except urllib.error.HTTPError as e:  # Prometheus answers a bad query with 400 and a reason
        r = json.load(e)
    return r
d = json.load(open(sys.argv[1]))
ids = [p["id"] for p in d["panels"]]
assert len(ids) == len(set(ids)), "duplicate panel ids"
problems, names, queries = [], set(), 0
for p in d["panels"]:
    for t in p.get("targets", []):
        expr = t["expr"].replace("$node", ".*")
        assert "$" not in expr, "a variable the test does not set: " + expr
        names.update(re.findall(r"\b((?:fabricctl|process)_[a-z_]+)", expr))
        r = query(expr)
        queries += 1
        if r.get("status") != "success":
            problems.append("%s: %s: %s" % (p["title"], expr, r.get("error")))
            continue
        # A panel that shows only what crosses a line ("> 0", "> 86400") may rightly be empty
        # here; what it filters must not be.
        unfiltered = re.sub(r"\s*(>=|<=|==|!=|>|<)\s*[0-9.e+]+\s*$", "", expr)
        if not query(unfiltered).get("data", {}).get("result"):
            problems.append("%s: no series: %s" % (p["title"], unfiltered))
for n in sorted(names):
    if not query("count(%s)" % n).get("data", {}).get("result"):
        problems.append("no series " + n)
print("%d panels, %d queries, %d series names; %s" % (len(ids), queries, len(names), "; ".join(problems) or "all answer"))
PY
)
check "the Grafana dashboard's queries all answer with series ($dashboard)" test "${dashboard##*; }" = "all answer"

finish
