#!/usr/bin/env bash
# Verdict quality on planted faults: repeated sweeps of practice labs (network namespaces, tc)
# with one fault each, and of labs with no faulty host (shaped, unshaped, and every host lossy
# alike). Reports, per scenario, the
# precision and recall of what the sweeps named (finding kind and host, or the two ends of a
# link) against what was planted, the false alarms per healthy sweep (any warning or critical
# finding), and the wall time of a sweep with one host 50x slower than its peers against a
# healthy sweep of the same size.
#
#   bench/verdicts.sh [REPEATS [HEALTHY_SWEEPS [SET]]]   (defaults 3, 20, all; needs root)
#   FABRIC_BIN=DIR bench/verdicts.sh ...                  (binaries from DIR, laid out as bazel-bin)
#   ONLY='flapping|unshaped' bench/verdicts.sh 6 25 second   (only those; writes verdicts-second-only.txt)
#
# SET: hosts (faults of hosts and links, and the wall-time comparison), switches (faults of
# what hosts share: hosts over leaf bridges joined by a spine bridge, an uplink shaped; the
# leaves given as labels, learned over LLDP, or not given at all), rails (hosts with two or
# three NICs, each rail its own bridge, one NIC shaped), second (moderate deficits in small
# labs, half the fleet slow with and without an expectation, lossy hosts and links, latency
# hosts, a jittery link, a flapping link, an agent killed mid-sweep on an unshaped lab),
# variants (the same classes of fault on other hosts, rates, counts and shapes than the sets
# above: a check that no rule holds only for the labs it was first judged on), paths (a routed
# fabric's bad ECMP member, found from each pair's flows and their traces, sweeps with the flows
# the lab's topology.ecmp_paths sets; a node whose NICs share one budget, with --node-bandwidth),
# or all. Writes
# bench/results/verdicts.txt (all) or verdicts-SET.txt.
source "$(dirname "$0")/lib.sh"
REPEATS=${1:-3}
HEALTHY=${2:-20}
SET=${3:-all}
[[ $SET =~ ^(all|hosts|switches|rails|second|variants|paths)$ ]] ||
  { echo "bench: SET is hosts, switches, rails, second, variants, paths or all, not '$SET'" >&2; exit 3; }
want_set() { [[ $SET == all || $SET == "$1" ]]; }
[[ $(id -u) -eq 0 ]] || { echo "bench: needs root (network namespaces)" >&2; exit 3; }
# FABRIC_BIN set: the binaries there (a copy, so that a build meanwhile does not change them).
if [[ -z ${FABRIC_BIN:-} ]]; then
  (cd "$ROOT" && bazel build //cli:fabricctl //agent:fabric-agent //controller:fabric-controller >/dev/null 2>&1) ||
    { echo "bench: cannot build" >&2; exit 3; }
fi
export FABRIC_BIN=${FABRIC_BIN:-$ROOT/bazel-bin} FABRIC_LAB_DIR=$ROOT/.lab/bench FABRIC_LAB_PREFIX=fabbench
LAB="bash $ROOT/scripts/lab.sh"
WORK=$(mktemp -d)
trap '$LAB down >/dev/null 2>&1; rm -rf "$WORK"' EXIT
OUT=$RESULTS/verdicts.txt
[[ $SET == all ]] || OUT=$RESULTS/verdicts-$SET.txt
# ONLY=REGEX: only the scenarios and healthy labs whose names match (a rerun of a few, written
# beside the set's results as -only.txt).
ONLY=${ONLY:-}
[[ -z $ONLY ]] || OUT=${OUT%.txt}-only.txt
selected() { [[ -z $ONLY || $1 =~ $ONLY ]]; }

# What a JSON report names: "kind subject", one per line (a pair's two ends in name order).
named() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for f in r.get("findings", []):
    if f.get("severity") not in ("SEVERITY_WARNING", "SEVERITY_CRITICAL"):
        continue
    ends = sorted(x for x in (f.get("node", ""), f.get("peer", "")) if x)
    # A finding of the fabric names its device (a path's groups, a split's slow nodes).
    print(f["kind"], "~".join(ends) or f.get("device", ""))
PY
}

# sweep NAME: one sweep of the running lab into $WORK/NAME.json; prints its wall seconds.
sweep() {
  local start end
  start=$(date +%s.%N)
  # shellcheck disable=SC2086  # $SWEEP_FLAGS: a scenario's own sweep flags, words
  $LAB sweep ${SWEEP_FLAGS:-} --format json --output "$WORK/$1.json" >/dev/null 2>&1 || true
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}'
}

{
  echo "# Verdicts on planted faults: ${ONLY:+ONLY='$ONLY' }bench/verdicts.sh $REPEATS $HEALTHY $SET"
  machine
  echo "lab: hosts in network namespaces on a bridge; links tc tbf 1gbit unless 'unshaped';"
  echo "faults by tc htb/tbf classes (loss: a BPF filter into a blackhole class); each sweep full pairing,"
  echo "tcp_bw both directions + tcp_lat, 1 s per probe"
  echo
  echo "| scenario | planted | sweeps | named (all sweeps) | precision | recall |"
  echo "|---|---|---|---|---|---|"
} > "$OUT.tmp"

# scenario NAME "PLANTED (kind subject; ...)" LAB_UP_ARGS...
# With DURING="SECONDS LAB_COMMAND" set, that lab command runs that long into each sweep
# (DURING="3 kill node-4": an agent killed mid-sweep).
tp_all=0 fp_all=0 fn_all=0
DURING=""
scenario() {
  local name=$1 planted=$2; shift 2
  selected "$name" || return 0
  local tp=0 fp=0 fn=0 seen=""
  for r in $(seq 1 "$REPEATS"); do
    $LAB up "$@" >/dev/null 2>&1 || { echo "bench: lab up $* failed" >&2; exit 3; }
    local during_pid=""
    if [[ -n $DURING ]]; then
      (sleep "${DURING%% *}"; $LAB ${DURING#* } >/dev/null 2>&1) &
      during_pid=$!
    fi
    sweep "$name-$r" >/dev/null
    [[ -z $during_pid ]] || wait "$during_pid" || true
    local got
    got=$(named "$WORK/$name-$r.json" | sort -u)
    seen+="$got"$'\n'
    local want
    want=$(tr ';' '\n' <<<"$planted" | sed 's/^ *//' | sed '/^$/d' | sort -u)
    local t f n
    t=$(comm -12 <(echo "$want") <(echo "$got") | sed '/^$/d' | wc -l)
    f=$(comm -13 <(echo "$want") <(echo "$got") | sed '/^$/d' | wc -l)
    n=$(comm -23 <(echo "$want") <(echo "$got") | sed '/^$/d' | wc -l)
    tp=$((tp + t)) fp=$((fp + f)) fn=$((fn + n))
  done
  tp_all=$((tp_all + tp)) fp_all=$((fp_all + fp)) fn_all=$((fn_all + fn))
  local summary
  summary=$(sed '/^$/d' <<<"$seen" | sort | uniq -c | awk '{c=$1; $1=""; printf "%s%s x%d", (NR>1?"; ":""), substr($0,2), c}')
  printf '| %s | %s | %d | %s | %s | %s |\n' "$name" "$planted" "$REPEATS" "${summary:-none}" \
    "$( ((tp + fp)) && ratio "$tp" "$((tp + fp))" || echo "n/a")" "$(ratio "$tp" "$((tp + fn))")" >> "$OUT.tmp"
}

if want_set hosts; then
scenario slow-host "straggler_node node-3" 6 --throttle node-3=200mbit
scenario slow-host-unshaped "straggler_node node-5" 6 --rate none --throttle node-5=300mbit
scenario two-slow-of-eight "straggler_node node-2; straggler_node node-6" 8 --throttle node-2=250mbit --throttle node-6=100mbit
scenario half-rate-host "straggler_node node-1" 7 --throttle node-1=500mbit
scenario slow-link "slow_link node-3~node-6" 7 --slow-link node-3-node-6=150mbit
scenario slow-link-unshaped "slow_link node-1~node-4" 6 --rate none --slow-link node-1-node-4=400mbit
scenario transmit-only "straggler_node node-2" 6 --slow-egress node-2=100mbit
scenario dropped-link "link_unreachable node-2~node-5" 6 --drop-link node-2-node-5
scenario mtu "mtu_mismatch node-4" 5 --mtu node-4=1400
scenario lossy-host "lossy_link node-4; straggler_node node-4" 7 --lossy node-4=2
fi
if want_set switches; then
scenario slow-path-two-leaves "slow_path leaf-1 <-> leaf-2" 6 --leaves 2 --slow-uplink leaf-1=200mbit
scenario half-rate-path "slow_path leaf-1 <-> leaf-2" 8 --leaves 2 --slow-uplink leaf-2=500mbit
scenario slow-uplink-of-three "slow_uplink leaf-2" 9 --leaves 3 --slow-uplink leaf-2=300mbit
scenario slow-path-lldp "slow_path leaf-1 <-> leaf-2" 6 --leaves 2 --topology lldp --slow-uplink leaf-2=200mbit
scenario split-no-topology "slow_path node-1,node-2,node-3,node-4 <-> node-5,node-6,node-7,node-8" \
  8 --leaves 2 --topology none --slow-uplink leaf-1=200mbit
scenario slow-host-under-leaves "straggler_node node-5" 9 --leaves 3 --throttle node-5=200mbit
fi
if want_set second; then
scenario moderate-of-three "straggler_node node-2" 3 --throttle node-2=750mbit
scenario moderate-of-five "straggler_node node-4" 5 --throttle node-4=750mbit
scenario two-moderate-of-seven "straggler_node node-2; straggler_node node-5" 7 \
  --throttle node-2=750mbit --throttle node-5=750mbit
scenario half-slow-no-expectation "fleet_split node-1,node-2,node-3,node-4" 8 \
  --throttle node-1=330mbit --throttle node-2=330mbit --throttle node-3=330mbit --throttle node-4=330mbit
scenario half-slow-expected "straggler_node node-1; straggler_node node-2; straggler_node node-3; straggler_node node-4" 8 \
  --expect-tcp 0.9 --throttle node-1=330mbit --throttle node-2=330mbit --throttle node-3=330mbit --throttle node-4=330mbit
scenario lossy-host-1pct "lossy_link node-3; straggler_node node-3" 6 --lossy node-3=1
scenario lossy-host-3pct "lossy_link node-5; straggler_node node-5" 6 --lossy node-5=3
scenario latency-host-of-three "straggler_node node-2" 3 --latency-host node-2
scenario latency-host-of-five "straggler_node node-4" 5 --latency-host node-4
scenario lossy-link-1pct "lossy_link node-1~node-4" 6 --lossy-link node-1-node-4=1
scenario lossy-link-3pct "lossy_link node-2~node-3" 6 --lossy-link node-2-node-3=3
scenario jittery-link "high_latency_link node-3~node-5" 6 --jitter node-3-node-5=5
scenario flapping-link "unstable node-2~node-5" 6 --flap node-2-node-5=100mbit/4
DURING="4 kill node-4" scenario killed-agent-unshaped "node_unreachable node-4" 6 --rate none
fi
if want_set rails; then
scenario slow-nic-rail1 "slow_nic node-3" 5 --rails 2 --slow-nic node-3:1=200mbit
scenario half-rate-nic-rail0 "slow_nic node-2" 6 --rails 2 --slow-nic node-2:0=500mbit
scenario slow-nic-of-three-rails "slow_nic node-4" 6 --rails 3 --slow-nic node-4:2=300mbit
scenario slow-host-every-rail "straggler_node node-1" 5 --rails 2 --slow-nic node-1:0=200mbit --slow-nic node-1:1=200mbit
scenario slow-path-rail0 "slow_path leaf-1 <-> leaf-2" 6 --rails 2 --leaves 2 --slow-uplink leaf-1=200mbit
fi
if want_set variants; then
scenario slow-host-of-four "straggler_node node-4" 4 --throttle node-4=400mbit
scenario two-slow-of-five "straggler_node node-1; straggler_node node-3" 5 \
  --throttle node-1=450mbit --throttle node-3=150mbit
scenario three-slow-of-nine "straggler_node node-2; straggler_node node-7; straggler_node node-9" 9 \
  --throttle node-2=300mbit --throttle node-7=500mbit --throttle node-9=200mbit
scenario unshaped-slow-of-four "straggler_node node-2" 4 --rate none --throttle node-2=600mbit
scenario slow-link-of-five "slow_link node-2~node-5" 5 --slow-link node-2-node-5=500mbit
scenario transmit-only-of-seven "straggler_node node-6" 7 --slow-egress node-6=400mbit
scenario half-slow-of-six "fleet_split node-2,node-4,node-6" 6 \
  --throttle node-2=400mbit --throttle node-4=400mbit --throttle node-6=400mbit
scenario slow-uplink-of-four-leaves "slow_uplink leaf-3" 8 --leaves 4 --slow-uplink leaf-3=300mbit
scenario slow-uplink-lldp "slow_uplink leaf-1" 9 --leaves 3 --topology lldp --slow-uplink leaf-1=400mbit
scenario latency-host-of-four "straggler_node node-3" 4 --latency-host node-3
scenario lossy-link-2pct-of-five "lossy_link node-1~node-5" 5 --lossy-link node-1-node-5=2
scenario flapping-link-of-seven "unstable node-3~node-7" 7 --flap node-3-node-7=200mbit/3
scenario slow-nic-of-four "slow_nic node-1" 4 --rails 2 --slow-nic node-1:0=300mbit
scenario half-rate-nic-of-three-rails "slow_nic node-5" 5 --rails 3 --slow-nic node-5:1=500mbit
# Two faults at once: each named on its own, neither folded into the other.
scenario two-slow-links-one-host "slow_link node-2~node-4; slow_link node-2~node-6" 6 \
  --slow-link node-2-node-4=300mbit --slow-link node-2-node-6=300mbit
scenario slow-host-and-slow-link "straggler_node node-1; slow_link node-3~node-5" 6 \
  --throttle node-1=300mbit --slow-link node-3-node-5=300mbit
scenario slow-host-and-slow-uplink "straggler_node node-2; slow_uplink leaf-3" 9 --leaves 3 \
  --throttle node-2=300mbit --slow-uplink leaf-3=300mbit
scenario slow-nic-and-slow-host "slow_nic node-2; straggler_node node-4" 5 --rails 2 \
  --slow-nic node-2:1=300mbit --slow-nic node-4:0=300mbit --slow-nic node-4:1=300mbit
scenario lossy-host-of-four "lossy_link node-2; straggler_node node-2" 4 --lossy node-2=2
fi
if want_set paths; then
# On two leaves every flow through a spine crosses its links to both: the two are named together.
scenario ecmp-member-two-leaves "slow_ecmp_link leaf-1 - spine-2, leaf-2 - spine-2" 6 --leaves 2 \
  --ecmp --slow-spine-link leaf-1:spine-2=200mbit
scenario ecmp-member-three-leaves "slow_ecmp_link leaf-2 - spine-1" 9 --leaves 3 --ecmp \
  --slow-spine-link leaf-2:spine-1=300mbit
scenario ecmp-member-of-four-spines "slow_ecmp_link leaf-1 - spine-3, leaf-2 - spine-3" 6 --leaves 2 \
  --spines 4 --ecmp --slow-spine-link leaf-2:spine-3=250mbit
SWEEP_FLAGS=--node-bandwidth scenario shared-nics-two-rails "node_bandwidth_limited node-2" 5 \
  --rails 2 --shared-nics node-2=1200mbit
SWEEP_FLAGS=--node-bandwidth scenario shared-nics-three-rails "node_bandwidth_limited node-5" 6 \
  --rails 3 --shared-nics node-5=1500mbit
fi

{
  echo
  echo "All scenarios: precision $(ratio "$tp_all" "$((tp_all + fp_all))"), recall $(ratio "$tp_all" "$((tp_all + fn_all))")"
  echo
  echo "| healthy lab | sweeps | sweeps with a warning or critical finding | what was raised |"
  echo "|---|---|---|---|"
} >> "$OUT.tmp"

healthy() {  # NAME LAB_UP_ARGS...
  local name=$1; shift
  selected "$name" || return 0
  $LAB up "$@" >/dev/null 2>&1 || { echo "bench: lab up $* failed" >&2; exit 3; }
  local alarms=0 raised=""
  for r in $(seq 1 "$HEALTHY"); do
    sweep "$name-$r" >/dev/null
    local got
    got=$(named "$WORK/$name-$r.json")
    if [[ -n $got ]]; then alarms=$((alarms + 1)); raised+="$got"$'\n'; fi
  done
  local summary
  summary=$(sed '/^$/d' <<<"$raised" | sort | uniq -c | awk '{c=$1; $1=""; printf "%s%s x%d", (NR>1?"; ":""), substr($0,2), c}')
  printf '| %s | %d | %d | %s |\n' "$name" "$HEALTHY" "$alarms" "${summary:-none}" >> "$OUT.tmp"
}
if want_set hosts; then
healthy "6 hosts, shaped 1gbit" 6
healthy "6 hosts, unshaped" 6 --rate none
healthy "6 hosts, every host losing 1 % of what it sends" 6 --lossy all=1
fi
if want_set switches; then
healthy "8 hosts on 2 leaves" 8 --leaves 2
healthy "9 hosts on 3 leaves, unshaped" 9 --leaves 3 --rate none
healthy "8 hosts on 2 leaves, no topology given" 8 --leaves 2 --topology none
fi
if want_set second; then
healthy "5 hosts, shaped 1gbit" 5
healthy "5 hosts, unshaped" 5 --rate none
healthy "4 hosts, shaped, expectation met" 4 --expect-tcp 0.9
fi
if want_set paths; then
healthy "6 hosts on 2 leaves, ECMP over 2 spines" 6 --leaves 2 --ecmp
healthy "9 hosts on 3 leaves, ECMP over 3 spines" 9 --leaves 3 --spines 3 --ecmp
SWEEP_FLAGS=--node-bandwidth healthy "5 hosts, two rails, every rail at once" 5 --rails 2
fi
if want_set rails; then
healthy "5 hosts, two rails" 5 --rails 2
healthy "6 hosts on 2 leaves, three rails" 6 --leaves 2 --rails 3
fi
if want_set variants; then
healthy "4 hosts, unshaped" 4 --rate none
healthy "7 hosts on 3 leaves, two rails" 7 --leaves 3 --rails 2
fi

# Wall time: 8 hosts healthy, then one host at 20 Mbit/s (50x slower than 1 Gbit/s).
if ! want_set hosts; then mv "$OUT.tmp" "$OUT"; cat "$OUT"; exit 0; fi
healthy_t=() slow_t=()
for r in $(seq 1 "$REPEATS"); do
  $LAB up 8 >/dev/null 2>&1 || exit 3
  healthy_t+=("$(sweep wall-healthy-$r)")
  $LAB up 8 --throttle node-4=20mbit >/dev/null 2>&1 || exit 3
  slow_t+=("$(sweep wall-slow-$r)")
done
h=$(printf '%s\n' "${healthy_t[@]}" | median)
s=$(printf '%s\n' "${slow_t[@]}" | median)
{
  echo
  echo "| sweep of 8 hosts | wall time (median of $REPEATS) | each |"
  echo "|---|---|---|"
  echo "| healthy | ${h} s | ${healthy_t[*]} |"
  echo "| one host 50x slower (20 Mbit/s) | ${s} s | ${slow_t[*]} |"
  echo
  echo "Ratio slow/healthy: $(ratio "$s" "$h") (goal <= 1.2)"
} >> "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
cat "$OUT"
