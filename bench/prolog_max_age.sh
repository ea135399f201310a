#!/usr/bin/env bash
# The prolog's wall time with --max-age: a sweep of every host of a lab when none, two and all
# of them are stale, against a full sweep and a quick one (pairing quick) of the same hosts, in
# one run on one machine, alternating, repeated ROUNDS times. Two hosts are made stale by age:
# the other hosts pass a sweep of their own (three rounds: three peers each) 20 s after the last
# sweep of all, then the
# prolog's sweep asks for 15 s; all of them by a --max-age shorter than the time since the last
# sweep. (A flap would not do: a link that went down is link_flapping, a warning, in every sweep
# within the link watch's recovery window, so its host is not known-good again until then.)
# Needs root.
#
#   bench/prolog_max_age.sh [HOSTS] [ROUNDS]
source "$(dirname "$0")/lib.sh"
HOSTS=${1:-16} ROUNDS=${2:-2}
lab_up "$HOSTS"
lab() { bash "$ROOT/scripts/lab.sh" "$@"; }
ALL="node-[1-$HOSTS]"

# timed NAME ARGS...: one sweep of every host; its wall time (s) and what it measured.
declare -A times=()
timed() {
  local name=$1 start end pairs; shift
  start=$(date +%s.%N)
  lab sweep --nodes "$ALL" --format json --output "$FABRIC_LAB_DIR/$name.json" "$@" \
    2> "$FABRIC_LAB_DIR/$name.err" >/dev/null || true
  end=$(date +%s.%N)
  pairs=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(len(r.get("health",{}).get("pairs",[])))' \
    "$FABRIC_LAB_DIR/$name.json" 2>/dev/null || echo "?")
  times[$name]+="$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}') "
  echo "$name: $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}') s, $pairs pairs measured; $(grep -m1 -E 'stale node|known-good within' "$FABRIC_LAB_DIR/$name.err" | cut -c1-140)" >&2
}

for round in $(seq 1 "$ROUNDS"); do
  timed full
  timed quick --pairing quick
  timed fresh-0 --max-age 1h
  sleep 20
  # Three peers each (three rounds of the circle method): a pass needs known_good.min_peers (2).
  lab sweep --nodes "node-[3-$HOSTS]" --pairing sample --sample-rounds 3 >/dev/null 2>&1 || true
  timed stale-2 --max-age 15s
  sleep 2
  timed stale-all --max-age 1s
done

summary() {  # NAME: median wall time, and as a share of the full sweep's
  local m full
  m=$(tr ' ' '\n' <<<"${times[$1]}" | grep . | median)
  full=$(tr ' ' '\n' <<<"${times[full]}" | grep . | median)
  printf '%-10s median %7.2f s   %5.2f x full sweep   (runs: %s)\n' "$1" "$m" "$(ratio "$m" "$full")" "${times[$1]% }"
}
{
  machine
  echo "command: bench/prolog_max_age.sh $HOSTS $ROUNDS  ($HOSTS hosts in network namespaces, links 1gbit, tcp_bw 1M for 1s + tcp_lat for 1s per pair; each round: full, quick, --max-age 1h with 0 stale, --max-age 15s with 2 stale (measured beside max(3, 2) = 3 references), --max-age 1s with all stale)"
  for name in full quick fresh-0 stale-2 stale-all; do summary "$name"; done
} | tee "$RESULTS/prolog_max_age.txt"
