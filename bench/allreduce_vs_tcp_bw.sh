#!/usr/bin/env bash
# Ring all-reduce busbw against tcp_bw on the same links, in the network-namespace lab: a
# bandwidth-optimal ring reaches close to the pairwise rate. Goal: busbw >= 85 % of the
# median pairwise tcp_bw at 64 MiB. Needs root.
#
#   bench/allreduce_vs_tcp_bw.sh [HOSTS] [SIZE]
source "$(dirname "$0")/lib.sh"
HOSTS=${1:-4} SIZE=${2:-64M}
lab_up "$HOSTS"
bash "$ROOT/scripts/lab.sh" sweep --probes tcp_bw,allreduce --sizes "$SIZE" --duration 2s \
  --format json --output "$FABRIC_LAB_DIR/r.json" >/dev/null 2>&1 || true
read -r pairwise busbw < <(python3 - "$FABRIC_LAB_DIR/r.json" <<'PY'
import json, sys, statistics
r = json.load(open(sys.argv[1]))
pairs = [p["bw_gbps"] for p in r["health"]["pairs"] if "bw_gbps" in p]
c = r["health"]["collectives"][0]["collective"][-1]
print(statistics.median(pairs) / 8, c["busbw_gbytes"])
PY
)
{
  machine
  echo "command: bench/allreduce_vs_tcp_bw.sh $HOSTS $SIZE  ($HOSTS hosts in network namespaces, links 1gbit; full tcp_bw pairs for 2s, then a ring all-reduce, 10 iterations)"
  printf 'allreduce busbw %.4f GB/s   median pairwise tcp_bw %.4f GB/s   ratio %s\n' "$busbw" "$pairwise" "$(ratio "$busbw" "$pairwise")"
} | tee "$RESULTS/allreduce_vs_tcp_bw.txt"
