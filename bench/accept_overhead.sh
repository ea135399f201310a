#!/usr/bin/env bash
# The acceptance of new hosts against reference hosts: `fabricctl accept` of HOSTS new hosts
# against HOSTS references (one pass, and a burn-in of PASSES passes), against a full sweep of
# all of them, in one run on one machine, alternating, repeated ROUNDS times. The burn-in's
# overhead is its wall time over PASSES single passes. Needs root.
#
#   bench/accept_overhead.sh [HOSTS] [PASSES] [ROUNDS]
source "$(dirname "$0")/lib.sh"
HOSTS=${1:-8} PASSES=${2:-3} ROUNDS=${3:-2}
lab_up $((2 * HOSTS))
lab() { bash "$ROOT/scripts/lab.sh" "$@"; }
REFS="node-[1-$HOSTS]" NEW="node-[$((HOSTS + 1))-$((2 * HOSTS))]"
lab sweep --nodes "$REFS" --audits >/dev/null 2>&1 || true  # the references become known-good

declare -A times=()
timed() {  # NAME COMMAND...: its wall time (s), and its exit code on stderr
  local name=$1 start end rc; shift
  start=$(date +%s.%N)
  "$@" >/dev/null 2> "$FABRIC_LAB_DIR/$name.err"
  rc=$?
  end=$(date +%s.%N)
  local t
  t=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}')
  times[$name]+="$t "
  echo "$name: $t s, exit $rc" >&2
}

for _ in $(seq 1 "$ROUNDS"); do
  timed full lab sweep --nodes "node-[1-$((2 * HOSTS))]"
  timed accept-1 lab accept --nodes "$NEW" --reference "$REFS"
  timed "accept-$PASSES" lab accept --nodes "$NEW" --reference "$REFS" --repeat "$PASSES"
done

med() { tr ' ' '\n' <<<"${times[$1]}" | grep . | median; }
{
  machine
  echo "command: bench/accept_overhead.sh $HOSTS $PASSES $ROUNDS  ($((2 * HOSTS)) hosts in network namespaces, links 1gbit, tcp_bw 1M for 1s + tcp_lat for 1s per pair, full pairing; accept with the audits)"
  full=$(med full) one=$(med accept-1) many=$(med "accept-$PASSES")
  printf 'full sweep of %d hosts     median %7.2f s   (runs: %s)\n' $((2 * HOSTS)) "$full" "${times[full]% }"
  printf 'accept %d against %d, 1 pass  median %7.2f s   %5.2f x the full sweep   (runs: %s)\n' \
    "$HOSTS" "$HOSTS" "$one" "$(ratio "$one" "$full")" "${times[accept-1]% }"
  printf 'accept %d against %d, %d passes median %7.2f s   %5.2f x one pass each, %.2f s a pass   (runs: %s)\n' \
    "$HOSTS" "$HOSTS" "$PASSES" "$many" "$(awk -v m="$many" -v o="$one" -v p="$PASSES" 'BEGIN {printf "%.3f", m / (o * p)}')" \
    "$(awk -v m="$many" -v p="$PASSES" 'BEGIN {print m / p}')" "${times[accept-$PASSES]% }"
} | tee "$RESULTS/accept_overhead.txt"
