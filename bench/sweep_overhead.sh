#!/usr/bin/env bash
# Sweep overhead: the wall time of a full sweep in the network-namespace lab against the sum,
# over rounds, of the longest pair's probe time in that round (what the measurements alone
# need, the pairs of a round running at once). Goal: overhead under 10 %. Needs root.
#
#   bench/sweep_overhead.sh [HOSTS] [SWEEPS]
source "$(dirname "$0")/lib.sh"
HOSTS=${1:-6} SWEEPS=${2:-3}
lab_up "$HOSTS"
lines=()
for s in $(seq 1 "$SWEEPS"); do
  bash "$ROOT/scripts/lab.sh" sweep --format json --output "$FABRIC_LAB_DIR/s$s.json" >/dev/null 2>&1 || true
  lines+=("$(python3 - "$FABRIC_LAB_DIR/s$s.json" <<'PY'
import json, sys
def seconds(d):
    return float(d.rstrip("s")) if d else 0.0
r = json.load(open(sys.argv[1]))
per_round = {}
for pair in r["health"]["pairs"]:
    by_round = {}
    for res in pair["results"]:
        rnd = res.get("round", 0)
        by_round[rnd] = by_round.get(rnd, 0.0) + seconds(res.get("elapsed"))
    for rnd, t in by_round.items():
        per_round[rnd] = max(per_round.get(rnd, 0.0), t)
ideal = sum(per_round.values())
wall = seconds(r["summary"]["elapsed"])
print(f"{wall:.3f} {ideal:.3f} {len(per_round)}")
PY
)")
done
{
  machine
  echo "command: bench/sweep_overhead.sh $HOSTS $SWEEPS  ($HOSTS hosts in network namespaces, links 1gbit, full pairing, tcp_bw 1M for 1s + tcp_lat 2B for 1s per pair)"
  for l in "${lines[@]}"; do
    read -r wall ideal rounds <<<"$l"
    printf 'sweep wall %6.2f s   probes %6.2f s over %s rounds   overhead %5.1f %%\n' "$wall" "$ideal" "$rounds" \
      "$(awk -v w="$wall" -v i="$ideal" 'BEGIN {print (w / i - 1) * 100}')"
  done
} | tee "$RESULTS/sweep_overhead.txt"
