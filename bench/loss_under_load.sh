#!/usr/bin/env bash
# Loss on a busy host: repeated sweeps of a healthy, unshaped practice lab (network namespaces on
# a bridge, no tc) while busy loops keep the machine's CPUs loaded, the conditions in which a
# kernel drops segments before they reach a socket, or acknowledges them late, and senders
# retransmit with nothing lost on the wire. Counts the sweeps that raised any loss finding
# (lossy_link: the false alarm this guards against), those that named a busy receiver
# (host_dropping, its own counters accounting for the retransmissions), any other finding, and
# the retransmitted share of every direction (the sender's TCP_INFO less what the receiver
# already had, D-SACK), with the receivers' drops.
#
#   bench/loss_under_load.sh [SWEEPS [HOSTS [HOGS]]]   (defaults 30, 5, 2; needs root)
#   FABRIC_BIN=DIR bench/loss_under_load.sh ...        (binaries from DIR, laid out as bazel-bin)
#
# Writes bench/results/loss_under_load.txt.
source "$(dirname "$0")/lib.sh"
SWEEPS=${1:-30}
HOSTS=${2:-5}
HOGS=${3:-2}
[[ $(id -u) -eq 0 ]] || { echo "bench: needs root (network namespaces)" >&2; exit 3; }
if [[ -z ${FABRIC_BIN:-} ]]; then
  (cd "$ROOT" && bazel build //cli:fabricctl //agent:fabric-agent //controller:fabric-controller >/dev/null 2>&1) ||
    { echo "bench: cannot build" >&2; exit 3; }
fi
export FABRIC_BIN=${FABRIC_BIN:-$ROOT/bazel-bin} FABRIC_LAB_DIR=$ROOT/.lab/loss-bench FABRIC_LAB_PREFIX=fabloss
LAB="bash $ROOT/scripts/lab.sh"
WORK=$(mktemp -d)
trap '$LAB down >/dev/null 2>&1; rm -rf "$WORK"' EXIT
OUT=$RESULTS/loss_under_load.txt

# One sweep's report: "lossy N", "host N", "other KIND..." and the directions' shares.
summary() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
kinds = [f["kind"] for f in r.get("findings", [])
         if f.get("severity") in ("SEVERITY_WARNING", "SEVERITY_CRITICAL")]
print("lossy", sum(k == "lossy_link" for k in kinds))
print("host", sum(k == "host_dropping" for k in kinds))
print("other", " ".join(k for k in kinds if k not in ("lossy_link", "host_dropping")) or "-")
for p in r.get("health", {}).get("pairs", []):
    for res in p.get("results", []):
        if res.get("kind") != "TCP_BW":
            continue
        seg = sum(int(b.get("segments", 0)) for b in res.get("bw", []))
        ret = sum(int(b.get("retransmits", 0)) for b in res.get("bw", []))
        dup = sum(int(b.get("spurious_retransmits", 0)) for b in res.get("bw", []))
        drops = int(res.get("receiver_drops", 0))
        if seg:
            print("dir", ret / seg, (ret - dup) / seg, drops)
PY
}

$LAB up "$HOSTS" --rate none --cpu-hog "node-2=$HOGS" > "$WORK/up.log" 2>&1 ||
  { cat "$WORK/up.log"; echo "bench: lab up failed" >&2; exit 3; }
lossy=0 host=0 other=0
: > "$WORK/dirs"
for s in $(seq 1 "$SWEEPS"); do
  $LAB sweep --probes tcp_bw --duration 1s --format json --output "$WORK/$s.json" > /dev/null 2>&1
  summary "$WORK/$s.json" > "$WORK/$s.sum"
  [[ $(sed -n 's/^lossy //p' "$WORK/$s.sum") -gt 0 ]] && lossy=$((lossy + 1))
  [[ $(sed -n 's/^host //p' "$WORK/$s.sum") -gt 0 ]] && host=$((host + 1))
  [[ $(sed -n 's/^other //p' "$WORK/$s.sum") != - ]] && other=$((other + 1))
  grep '^dir ' "$WORK/$s.sum" >> "$WORK/dirs" || true
  echo "sweep $s: $(grep -v '^dir ' "$WORK/$s.sum" | paste -sd' ')" >&2
done
stats() {  # COLUMN: median and worst over the directions
  awk -v c="$1" '{print $c}' "$WORK/dirs" | median
}
{
  echo "# bench/loss_under_load.sh $SWEEPS $HOSTS $HOGS: $SWEEPS sweeps (tcp_bw, 1 s a direction, full pairing, re-tests) of"
  echo "# a healthy unshaped lab of $HOSTS hosts, $HOGS busy loops in node-2's namespace (the machine's CPUs, which every host shares)"
  machine
  echo "sweeps raising lossy_link: $lossy of $SWEEPS"
  echo "sweeps naming a busy receiver (host_dropping): $host of $SWEEPS"
  echo "sweeps raising anything else: $other of $SWEEPS"
  echo "directions: $(wc -l < "$WORK/dirs")"
  echo "retransmitted share, median: $(stats 2), worst: $(awk '{print $2}' "$WORK/dirs" | sort -g | tail -n 1)"
  echo "less D-SACK duplicates, median: $(stats 3), worst: $(awk '{print $3}' "$WORK/dirs" | sort -g | tail -n 1)"
  echo "directions whose receiver counted drops of its own: $(awk '$4 > 0' "$WORK/dirs" | wc -l)"
  for floor in 0.001 0.005; do
    echo "directions at or above $floor (the $( [[ $floor == 0.001 ]] && echo "default thresholds.min_loss_rate" || echo "lab's min_loss_rate")): $(awk -v f="$floor" '$2 >= f' "$WORK/dirs" | wc -l) counting every retransmission, $(awk -v f="$floor" '$3 >= f' "$WORK/dirs" | wc -l) less D-SACK duplicates"
  done
} | tee "$OUT"
