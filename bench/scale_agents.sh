#!/usr/bin/env bash
# fabricctl at size on one machine: N real fabric-agent processes on loopback (plain text, as
# loopback allows) registered with one fabric-controller, then a quick, a sampled (3 rounds) and
# a topology-aware sweep (leaves of 32 agents) of tcp_bw (64 KiB messages) and tcp_lat, 200 ms
# each. For each N: how long the agents took to register (from the first start to the last
# registration the controller lists), each sweep's wall time and its overhead over the probes'
# own time (per round, the longest pair's probe time; rounds added up), the sweep's re-tests,
# the controller's peak RSS and CPU seconds, and the agents' memory (RSS, and PSS: what each
# adds once the shared libraries are counted once).
#
#   bench/scale_agents.sh [N...]          (default 100 300 1000; writes bench/results/scale_agents.txt)
#   PAIRINGS=full bench/scale_agents.sh 160   (other sweeps; writes bench/results/scale_agents-full.txt)
#
# Goals on a 2-core machine: 1,000 agents registered within 10 s, a sampled sweep of 1,000 nodes
# within 5 minutes, the controller under 1 GiB.
source "$(dirname "$0")/lib.sh"
SIZES=("$@")
PAIRINGS=${PAIRINGS:-quick sample topology}
PAIRINGS_SUFFIX=""
[[ $PAIRINGS == "quick sample topology" ]] || PAIRINGS_SUFFIX=-${PAIRINGS// /-}
((${#SIZES[@]})) || SIZES=(100 300 1000)
(cd "$ROOT" && bazel build //cli:fabricctl //agent:fabric-agent //controller:fabric-controller >/dev/null 2>&1) ||
  { echo "bench: build failed" >&2; exit 3; }
AGENT=$ROOT/bazel-bin/agent/fabric-agent CONTROLLER=$ROOT/bazel-bin/controller/fabric-controller
ulimit -n 65536 2>/dev/null || true
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  ((${#PIDS[@]})) && kill "${PIDS[@]}" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

# Seconds since the epoch, with fractions.
now() { date +%s.%N; }

# The figures of one sweep's JSON report: wall seconds, the probes' own seconds, rounds,
# re-test rounds and pairs, pairs measured, findings.
sweep_figures() {
  python3 - "$1" <<'PY'
import json, sys
def seconds(d):
    return float(d.rstrip("s")) if d else 0.0
r = json.load(open(sys.argv[1]))
per_round = {}
for pair in r["health"].get("pairs", []):
    by_round = {}
    for res in pair.get("results", []):
        rnd = res.get("round", 0)
        by_round[rnd] = by_round.get(rnd, 0.0) + seconds(res.get("elapsed"))
    for rnd, t in by_round.items():
        per_round[rnd] = max(per_round.get(rnd, 0.0), t)
s = r["summary"]
print(f'{seconds(s.get("elapsed")):.1f} {sum(per_round.values()):.1f} {len(per_round)} '
      f'{s.get("retest_rounds", 0)} {s.get("retested_pairs", 0)} {s.get("retests_skipped", 0)} '
      f'{s.get("pairs", 0)} {len(r.get("findings", []))}')
PY
}

# Peak RSS (MiB) and CPU seconds of a process.
proc_figures() {
  local hwm ticks
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$1/status")
  ticks=$(awk '{print $14 + $15}' "/proc/$1/stat")
  awk -v h="$hwm" -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.0f %.1f", h / 1024, t / hz}'
}

run_size() {
  local n=$1 dir=$WORK/n$1 port
  mkdir -p "$dir"
  port=$(free_port)
  cat > "$dir/fabricctl.yaml" <<YAML
probes:
  sizes: "64K"
  duration: 200ms
sweep:
  probes: [tcp_bw, tcp_lat]
  pair_timeout: 30s
  sample_rounds: 3
topology:
  levels: [leaf]
YAML
  "$CONTROLLER" --config "$dir/fabricctl.yaml" --listen "127.0.0.1:$port" --db "$dir/c.db" \
    >"$dir/controller.log" 2>&1 &
  local controller=$!
  PIDS+=("$controller")
  wait_listen "$port"
  local start agents=() i
  start=$(now)
  for i in $(seq 1 "$n"); do
    "$AGENT" --config "$dir/fabricctl.yaml" --controller "127.0.0.1:$port" --listen 127.0.0.1:0 \
      --node-name "a-$i" --label "leaf=leaf-$(( (i - 1) / 32 + 1 ))" --nccl-log-dir "$dir/nccl" \
      >/dev/null 2>&1 &
    agents+=($!)
  done
  PIDS+=("${agents[@]}")
  local launched registered online=0
  launched=$(now)
  local ctl=("$FABRICCTL" --config "$dir/fabricctl.yaml" --controller "127.0.0.1:$port")
  while ((online < n)); do
    online=$("${ctl[@]}" --timeout 30s nodes --format json 2>/dev/null |
      python3 -c 'import json, sys; print(sum(x.get("state") == "NODE_ONLINE" for x in json.load(sys.stdin).get("nodes", [])))' 2>/dev/null || echo 0)
    if awk -v s="$start" -v t="$(now)" 'BEGIN {exit !(t - s > 120)}'; then break; fi
    ((online < n)) && sleep 0.2
  done
  registered=$(now)
  local reg launch
  reg=$(awk -v a="$start" -v b="$registered" 'BEGIN {printf "%.1f", b - a}')
  launch=$(awk -v a="$start" -v b="$launched" 'BEGIN {printf "%.1f", b - a}')
  echo "N=$n: $online of $n agents registered in $reg s (starting them took $launch s)"
  local pairing
  for pairing in $PAIRINGS; do
    "${ctl[@]}" --timeout 30m sweep --pairing "$pairing" --format json --output "$dir/$pairing.json" \
      >/dev/null 2>"$dir/$pairing.err" || true
    if [[ ! -s $dir/$pairing.json ]]; then
      echo "  $pairing: no report ($(tail -1 "$dir/$pairing.err"))"
      continue
    fi
    read -r wall probes rounds rr rp rs pairs findings < <(sweep_figures "$dir/$pairing.json")
    printf '  %-8s %6.1f s wall, probes %6.1f s over %s rounds (overhead %5.1f %%), %s pairs, re-tests %s pairs in %s rounds (%s skipped), %s findings\n' \
      "$pairing" "$wall" "$probes" "$rounds" "$(awk -v w="$wall" -v p="$probes" 'BEGIN {print (p > 0 ? (w / p - 1) * 100 : 0)}')" \
      "$pairs" "$rp" "$rr" "$rs" "$findings"
  done
  local rss cpu agent_rss agent_pss alive
  read -r rss cpu < <(proc_figures "$controller") || true
  alive=$(for p in "${agents[@]}"; do [[ -e /proc/$p ]] && echo "$p"; done | wc -l)
  agent_rss=$({ for p in "${agents[@]}"; do awk '/VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || true; done; } | median || echo 0)
  agent_pss=$({ for p in "${agents[@]}"; do awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || true; done; } | median || echo 0)
  echo "  controller: peak RSS $rss MiB, $cpu CPU seconds; agents ($alive of $n alive): median RSS $((agent_rss / 1024)) MiB, PSS $((agent_pss / 1024)) MiB"
  echo "  store: $(du -ck "$dir"/c.db* | tail -1 | cut -f1) KiB after these sweeps (SQLite, WAL included)"
  kill "${agents[@]}" "$controller" 2>/dev/null || true
  wait 2>/dev/null || true
  PIDS=()
}

{
  machine
  echo "command: PAIRINGS='$PAIRINGS' bench/scale_agents.sh ${SIZES[*]}  (agents on loopback; tcp_bw 64K + tcp_lat, 200 ms each, both directions)"
  for n in "${SIZES[@]}"; do run_size "$n"; done
} | tee "$RESULTS/scale_agents${PAIRINGS_SUFFIX:-}.txt"
