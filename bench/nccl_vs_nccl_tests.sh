#!/usr/bin/env bash
# NCCL all-reduce over this node's GPUs: fabricctl (check --probes allreduce: one rank per GPU,
# each its own process, 64 MiB, 20 iterations after 5 warm-ups, float sum, out of place)
# against nccl-tests' all_reduce_perf run the same way (-b 64M -e 64M -n 20 -w 5 -g 1 per
# process would match best; a single process over every GPU, -g N, is what is commonly run).
# Alternates the two three times and reports the ratio of the median busbw. Needs NVIDIA GPUs,
# NCCL and all_reduce_perf (on PATH or $NCCL_TESTS_BIN).
#
#   bench/nccl_vs_nccl_tests.sh
source "$(dirname "$0")/lib.sh"
need_build
PERF=${NCCL_TESTS_BIN:-$(command -v all_reduce_perf || true)}
[[ -x $PERF ]] || { echo "bench: all_reduce_perf not found (build nccl-tests; set NCCL_TESTS_BIN)" >&2; exit 3; }
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
((gpus > 0)) || { echo "bench: no GPU (nvidia-smi -L lists none)" >&2; exit 3; }
ours=() theirs=()
for _ in 1 2 3; do
  json=$("$FABRICCTL" check --probes allreduce --format json) || true
  ours+=("$(python3 -c '
import json, re, sys
a = json.loads(sys.argv[1])["health"]["nodes"][0]["audits"][0]
if a.get("outcome") != "AUDIT_RAN": sys.exit("bench: " + a.get("reason", "?"))
print(re.search(r"busbw ([\d.]+) GB/s", a["observed"]["67108864 B"]).group(1))' "$json")")
  # Out-of-place busbw: the 8th field of the 64 MiB row.
  theirs+=("$("$PERF" -b 64M -e 64M -n 20 -w 5 -g "$gpus" | awk '$1 == 67108864 {print $8}')")
done
a=$(printf '%s\n' "${ours[@]}" | median) b=$(printf '%s\n' "${theirs[@]}" | median)
{
  machine
  echo "command: bench/nccl_vs_nccl_tests.sh  ($gpus GPUs, 64 MiB float sum, 20 iterations, 5 warm-ups; 3 alternating runs)"
  echo "fabricctl busbw ${ours[*]} GB/s   all_reduce_perf busbw ${theirs[*]} GB/s   ratio of medians $(ratio "$a" "$b")"
} | tee "$RESULTS/nccl_vs_nccl_tests.txt"
