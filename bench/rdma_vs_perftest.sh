#!/usr/bin/env bash
# rdma_write_bw and rdma_write_lat against perftest's ib_write_bw and ib_write_lat on the same
# soft-RoCE device, in one run inside the rdma-vm (a QEMU VM with rdma_rxe; see
# ../shared/tools/rdma-vm/README.md); and with flows: --qps 4 against ib_write_bw -q 4,
# rdma_send_bw --bidirectional against ib_send_bw -b, rdma_write_lat --duration 2s against
# ib_write_lat -D 2. Goal: within 5 % (flows: 0.75-1.33). Soft-RoCE under emulation is slow and
# noisy, so rounds alternate and medians are compared.
#
#   bench/rdma_vs_perftest.sh [ROUNDS] [ITERS]
source "$(dirname "$0")/lib.sh"
ROUNDS=${1:-5} ITERS=${2:-2000}
VM=${RDMA_VM:-$ROOT/../shared/tools/rdma-vm/run-in-rdma-vm.sh}
[[ -x $VM ]] || { echo "bench: rdma-vm script not found at $VM (set RDMA_VM)" >&2; exit 3; }
need_build

inner=$(mktemp -p "$ROOT" .bench-rdma-XXXX.sh)
trap 'rm -f "$inner"' EXIT
cat > "$inner" <<INNER
set -u
F=bazel-bin/cli/fabricctl
P="-d \$RXE_DEV -x \$RXE_GID_INDEX"
for r in \$(seq 1 $ROUNDS); do
  ib_write_bw \$P -s 65536 -n $ITERS --report_gbits -F >/dev/null 2>&1 & sleep 0.5
  echo "perftest_bw \$(ib_write_bw \$P -s 65536 -n $ITERS --report_gbits -F \$RXE_IP 2>/dev/null | awk '\$1 == 65536 {print \$4}')"
  wait
  \$F probe rdma_write_bw --server --port 7420 --one-off >/dev/null & sleep 0.5
  echo "ours_bw \$(\$F probe rdma_write_bw \$RXE_IP:7420 --sizes 64K --iters $ITERS | awk '\$1 == 65536 {print \$4}')"
  wait
  ib_write_lat \$P -s 2 -n $ITERS -F >/dev/null 2>&1 & sleep 0.5
  echo "perftest_lat \$(ib_write_lat \$P -s 2 -n $ITERS -F \$RXE_IP 2>/dev/null | awk '\$1 == 2 {print \$5, \$3}')"
  wait
  \$F probe rdma_write_lat --server --port 7421 --one-off >/dev/null & sleep 0.5
  echo "ours_lat \$(\$F probe rdma_write_lat \$RXE_IP:7421 --sizes 2 --iters $ITERS | awk '\$1 == 2 {print \$5, \$3}')"
  wait
  ib_write_bw \$P -s 65536 -n $ITERS -q 4 --report_gbits -F >/dev/null 2>&1 & sleep 0.5
  echo "perftest_qps \$(ib_write_bw \$P -s 65536 -n $ITERS -q 4 --report_gbits -F \$RXE_IP 2>/dev/null | awk '\$1 == 65536 {print \$4}')"
  wait
  \$F probe rdma_write_bw --server --port 7422 --one-off >/dev/null & sleep 0.5
  echo "ours_qps \$(\$F probe rdma_write_bw \$RXE_IP:7422 --sizes 64K --iters $ITERS --qps 4 | awk '\$1 == 65536 {print \$4}')"
  wait
  ib_send_bw \$P -s 65536 -n $ITERS -b --report_gbits -F >/dev/null 2>&1 & sleep 0.5
  echo "perftest_bisend \$(ib_send_bw \$P -s 65536 -n $ITERS -b --report_gbits -F \$RXE_IP 2>/dev/null | awk '\$1 == 65536 {print \$4}')"
  wait
  \$F probe rdma_send_bw --server --port 7423 --one-off >/dev/null & sleep 0.5
  echo "ours_bisend \$(\$F probe rdma_send_bw \$RXE_IP:7423 --sizes 64K --iters $ITERS --bidirectional | awk '\$1 == 65536 {print \$4}')"
  wait
  ib_write_lat \$P -s 2 -D 2 -F >/dev/null 2>&1 & sleep 0.5
  echo "perftest_latd \$(ib_write_lat \$P -s 2 -D 2 -F \$RXE_IP 2>/dev/null | awk '\$1 == 2 {print \$3}')"
  wait
  \$F probe rdma_write_lat --server --port 7424 --one-off >/dev/null & sleep 0.5
  echo "ours_latd \$(\$F probe rdma_write_lat \$RXE_IP:7424 --sizes 2 --duration 2s | awk '\$1 == 2 {print \$6}')"
  wait
done
INNER
out=$("$VM" -C "$ROOT" -t 900 -- sh "$(basename "$inner")")
pick() { awk -v k="$1" -v c="${2:-2}" '$1 == k && $c != "" {print $c}' <<<"$out"; }
line() {  # line LABEL KEY COLUMN UNIT
  local o t
  o=$(pick "ours_$2" "$3" | median); t=$(pick "perftest_$2" "$3" | median)
  printf '%-22s ours %8.3f %-4s perftest %8.3f %-4s ratio %s   (rounds: ours %s; perftest %s)\n' \
    "$1" "$o" "$4" "$t" "$4" "$(ratio "$o" "$t")" "$(pick "ours_$2" "$3" | tr '\n' ' ')" \
    "$(pick "perftest_$2" "$3" | tr '\n' ' ')"
}
{
  machine
  echo "command: bench/rdma_vs_perftest.sh $ROUNDS $ITERS  (soft-RoCE rxe0 in the rdma-vm, 2 vCPUs under TCG; medians of $ROUNDS alternating rounds)"
  line "write BW 64 KiB avg" bw 2 Gb/s
  line "write lat 2 B typical" lat 2 us
  line "write lat 2 B min" lat 3 us
  line "write BW 64 KiB -q 4" qps 2 Gb/s
  line "send BW 64 KiB -b" bisend 2 Gb/s
  line "write lat 2 B -D 2 avg" latd 2 us
} | tee "$RESULTS/rdma_vs_perftest.txt"
