#!/usr/bin/env bash
# Planning and analysis of simulated full sweeps (results generated in process) at 1,024,
# 2,048 and 4,096 nodes: time and peak memory. Goal: 4,096 nodes (8.4 M pairs) in under 10 s
# and 2 GiB. Then --pairing topology's plan at 16,384 nodes (leaves of 32 under spines of 16
# leaves) with a slow uplink and a straggler planted, and the same plan on 8 rails with one
# node's NIC slow on one rail (each rail analysed, the verdicts combined): goal under 10 s and
# 2 GiB each. Then the flows of a routed fabric (every leaf under 4 spines, 16 traced flows a
# pair both ways, one leaf-spine link slow) at 1,024 and 4,096 nodes: goal under 10 s and 2 GiB
# (the sweep keeps at most 2 million flows, kMaxFlowInputs).
#
#   bench/sweep_scale.sh [NODES...]
source "$(dirname "$0")/lib.sh"
(cd "$ROOT" && bazel build //bench:sweep_scale >/dev/null 2>&1) || { echo "bench: build failed" >&2; exit 3; }
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(1024 2048 4096)
{
  machine
  echo "command: bench/sweep_scale.sh ${sizes[*]}  (one process per size; peak RSS of the whole process)"
  for n in "${sizes[@]}"; do "$ROOT/bazel-bin/bench/sweep_scale" "$n"; done
  "$ROOT/bazel-bin/bench/sweep_scale" topology 16384
  "$ROOT/bazel-bin/bench/sweep_scale" rails=8 16384
  "$ROOT/bazel-bin/bench/sweep_scale" ecmp=4 1024 4096
} | tee "$RESULTS/sweep_scale.txt"
