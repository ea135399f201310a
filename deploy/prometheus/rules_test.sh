#!/usr/bin/env bash
# Checks what deploy/prometheus and deploy/grafana ship:
#   - the alert rules pass `promtool check rules` and their unit tests (`promtool test rules`);
#   - the example prometheus.yml passes `promtool check config` (with the rules beside it);
#   - the Grafana dashboard parses, its panel ids are unique, every panel uses the Prometheus
#     data source variable, every query parses as PromQL, and every fabricctl_* / process_*
#     series a query (or a rule) names is one fabricctl exports.
#
#   rules_test.sh PROMETHEUS_DIR GRAFANA_DIR     e.g. rules_test.sh deploy/prometheus deploy/grafana
#
# Prints a PASS or FAIL line per check (SKIPPED where promtool is not installed: apt install
# prometheus) and exits non-zero if any check failed.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 PROMETHEUS_DIR GRAFANA_DIR" >&2
  exit 2
fi
prom_dir=$1
grafana_dir=$2
rules=$prom_dir/fabricctl-rules.yml
rules_test=$prom_dir/fabricctl-rules_test.yml
config=$prom_dir/prometheus.yml
dashboard=$grafana_dir/fabricctl.json

# Every series fabricctl exports (the controller's /metrics and `fabricctl check --format prom`
# textfiles). A dashboard query or a rule naming anything else is a typo or a stale name.
KNOWN_SERIES="
fabricctl_build_info
fabricctl_nodes
fabricctl_sweep_worst_severity
fabricctl_sweep_id
fabricctl_sweep_finished_timestamp_seconds
fabricctl_sweep_duration_seconds
fabricctl_findings
fabricctl_node_status
fabricctl_node_last_sweep_timestamp_seconds
fabricctl_pair_bandwidth_bytes_per_second
fabricctl_pair_latency_seconds
fabricctl_pair_last_measured_timestamp_seconds
fabricctl_group_pair_bandwidth_bytes_per_second
fabricctl_group_pair_bad_pairs
fabricctl_sweeps_total
fabricctl_findings_total
fabricctl_check_worst_severity
fabricctl_check_timestamp_seconds
fabricctl_check_duration_seconds
fabricctl_check_node_status
fabricctl_check_findings
process_cpu_seconds_total
process_resident_memory_bytes
process_start_time_seconds
process_open_fds
process_max_fds
"

tmp=$(mktemp -d "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/fabricctl-rules-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

pass=0 fail=0 skip=0
# check DESCRIPTION COMMAND...: one line per check; the command's output only when it fails.
check() {
  local what=$1
  shift
  if "$@" > "$tmp/out" 2>&1; then
    echo "PASS: $what"
    pass=$((pass + 1))
  else
    echo "FAIL: $what"
    sed 's/^/    /' "$tmp/out"
    fail=$((fail + 1))
  fi
}
skipped() {
  echo "SKIPPED: $1 (promtool is not installed: apt install prometheus)"
  skip=$((skip + 1))
}

for f in "$rules" "$rules_test" "$config" "$dashboard"; do
  check "$f exists" test -s "$f"
done

# The dashboard: parsed and checked by Python; it also writes every query (Grafana's variables
# replaced by sample values) as a recording rule for promtool to parse.
dashboard_check() {
  KNOWN_SERIES=$KNOWN_SERIES python3 - "$dashboard" "$tmp/dashboard-queries.yml" <<'PY'
import json, os, re, sys

dashboard_path, queries_path = sys.argv[1:3]
known = set(os.environ["KNOWN_SERIES"].split())
series_re = re.compile(r"\b((?:fabricctl|process)_[A-Za-z0-9_:]+)")
problems = []

with open(dashboard_path) as f:
    d = json.load(f)

if d.get("schemaVersion", 0) < 37:
    problems.append("schemaVersion %s, expected 37 or later" % d.get("schemaVersion"))

variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
ds_vars = {n for n, v in variables.items()
           if v.get("type") == "datasource" and v.get("query") == "prometheus"}
if not ds_vars:
    problems.append("no data source variable of type prometheus in templating")

def walk(panels):
    for p in panels:
        yield p
        yield from walk(p.get("panels", []))

panels = list(walk(d.get("panels", [])))
ids = [p.get("id") for p in panels]
dup = sorted({i for i in ids if ids.count(i) > 1}, key=str)
if None in ids:
    problems.append("a panel without an id")
if dup:
    problems.append("duplicate panel ids: %s" % dup)

def uses_ds_var(ds, where):
    uid = ds.get("uid", "") if isinstance(ds, dict) else str(ds or "")
    m = re.fullmatch(r"\$\{?(\w+)\}?", uid)
    if not m or m.group(1) not in ds_vars:
        problems.append("%s: data source %r is not the Prometheus variable" % (where, ds))

queries = []  # (where, expr)
for p in panels:
    where = "panel %s (%s)" % (p.get("id"), p.get("title"))
    targets = p.get("targets", [])
    if p.get("type") == "row":
        continue
    if not targets:
        problems.append(where + ": no queries")
    uses_ds_var(p.get("datasource"), where)
    for t in targets:
        uses_ds_var(t.get("datasource", p.get("datasource")), where + " " + t.get("refId", "?"))
        if not t.get("expr", "").strip():
            problems.append(where + ": a query without expr")
        queries.append((where + " " + t.get("refId", "?"), t.get("expr", "")))
for n, v in variables.items():
    if v.get("type") == "query":
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else (q or "")
        uses_ds_var(v.get("datasource"), "variable " + n)
        queries.append(("variable " + n, q))

named = set()
for where, expr in queries:
    for name in series_re.findall(expr):
        named.add(name)
        if name not in known:
            problems.append("%s: unknown series %s" % (where, name))

# Grafana's variables replaced so that promtool can parse each query.
def plain(expr):
    expr = re.sub(r"\$\{?__(rate_interval|interval|range)\w*\}?", "5m", expr)
    expr = re.sub(r"\[\[\w+\]\]", ".+", expr)
    return re.sub(r"\$\{?\w+(?::\w+)?\}?", ".+", expr)

with open(queries_path, "w") as f:
    f.write("groups:\n  - name: dashboard\n    rules:\n")
    for i, (where, expr) in enumerate(queries):
        if where.startswith("variable"):
            m = re.fullmatch(r"\s*label_values\((.*),\s*\w+\s*\)\s*", expr, re.S)
            if not m:
                continue  # a Grafana function other than label_values: not PromQL
            expr = m.group(1)
        f.write("      - record: dashboard_query_%d  # %s\n        expr: %s\n"
                % (i, where.replace("\n", " "), json.dumps(plain(expr))))

if problems:
    print("\n".join(problems))
    sys.exit(1)
print("%d panels, %d queries, series named: %s" % (len(ids), len(queries), " ".join(sorted(named))))
PY
}
check "$dashboard: parses, unique panel ids, the Prometheus data source variable, known series only" \
  dashboard_check

# The rules' expressions (one line each) name known series only.
rules_series_check() {
  KNOWN_SERIES=$KNOWN_SERIES python3 - "$rules" <<'PY'
import os, re, sys
known = set(os.environ["KNOWN_SERIES"].split())
named = set()
with open(sys.argv[1]) as f:
    for line in f:
        if re.match(r"\s*expr:", line):
            named.update(re.findall(r"\b((?:fabricctl|process)_[A-Za-z0-9_:]+)", line))
unknown = sorted(named - known)
if unknown or not named:
    print("unknown series: %s" % " ".join(unknown) if unknown else "no expr names a series")
    sys.exit(1)
PY
}
check "$rules: known series only" rules_series_check

# prometheus.yml names its rule file relative to itself: checked in a copy, the rules beside it.
config_check() {
  cp "$config" "$tmp/prometheus.yml" && cp "$rules" "$tmp/fabricctl-rules.yml" &&
    promtool check config "$tmp/prometheus.yml"
}

if command -v promtool > /dev/null; then
  check "promtool check rules $rules" promtool check rules "$rules"
  check "promtool test rules $rules_test" promtool test rules "$rules_test"
  check "promtool check config $config" config_check
  if [[ -s $tmp/dashboard-queries.yml ]]; then
    check "every dashboard query parses as PromQL (promtool)" \
      promtool check rules "$tmp/dashboard-queries.yml"
  else
    check "every dashboard query parses as PromQL (promtool)" false
  fi
else
  skipped "promtool check rules"
  skipped "promtool test rules"
  skipped "promtool check config"
  skipped "the dashboard queries parse as PromQL"
fi

echo "$pass passed, $fail failed, $skip skipped"
[[ $fail -eq 0 ]]
