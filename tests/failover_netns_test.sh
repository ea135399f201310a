#!/usr/bin/env bash
# A host that vanishes: PostgreSQL, controller a and controller b each in a network namespace
# of its own, and three agents in a fourth, all on one bridge. a is active and sweeping when its
# link is cut (ip link set down): PostgreSQL keeps a's session (nothing told it), so only the
# lease can move. b must serve within 30 s, record a's sweep interrupted and sweep through the
# agents; a must stop acting on its own (no renewal, no writes) and, when its link comes back,
# wait as the standby instead of serving beside b.
set -uo pipefail
source tests/testlib.sh
source tests/postgres.sh
require_lab "the failover test across network namespaces"

BIN=$PWD
WORK=$(mktemp -d /tmp/fabricctl-failover-ns.XXXXXX)
P=fo$$
NET=198.18.77
PIDS=()
cleanup() {
  ((${#PIDS[@]})) && kill -9 "${PIDS[@]}" 2>/dev/null
  wait 2>/dev/null
  stop_postgres
  for ns in sw pg a b n; do ip netns del "$P-$ns" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# The switch: a bridge in a namespace of its own; each host's eth0 hangs off it.
ip netns add "$P-sw"
ip -n "$P-sw" link add br0 type bridge
ip -n "$P-sw" link set br0 up
host() {  # NAME LAST-OCTET
  ip netns add "$P-$1"
  ip link add "$P-$1" type veth peer name eth0 netns "$P-$1"
  ip link set "$P-$1" netns "$P-sw"
  ip -n "$P-sw" link set "$P-$1" master br0 up
  ip -n "$P-$1" addr add "$NET.$2/24" dev eth0
  ip -n "$P-$1" link set eth0 up
  ip -n "$P-$1" link set lo up
}
host pg 1
host a 2
host b 3
host n 4
in_ns() { local ns=$1; shift; ip netns exec "$P-$ns" "$@"; }

PG_NETNS=$P-pg PG_LISTEN=$NET.1 start_postgres
trap cleanup EXIT  # start_postgres set its own
BOTH=$NET.2:7400,$NET.3:7400
cat > "$WORK/fabricctl.yaml" <<YAML
probes:
  sizes: "64K"
  duration: 3s
sweep:
  probes: [tcp_bw]
  retests: 0
YAML
controller() {  # NAME OCTET: in its namespace, in the background
  in_ns "$1" "$BIN/controller/fabric-controller" --config "$WORK/fabricctl.yaml" --insecure \
    --listen "$NET.$2:7400" --db "$POSTGRES_URL" --heartbeat-interval 1s --stale-after 5s \
    >"$WORK/$1.log" 2>&1 &
  PIDS+=($!)
}
fabricctl() { in_ns n "$BIN/cli/fabricctl" --config "$WORK/fabricctl.yaml" --insecure --controller "$BOTH" "$@"; }
online() {
  fabricctl nodes --format json 2>/dev/null |
    python3 -c 'import json, sys; print(sum(n.get("state") == "NODE_ONLINE" for n in json.load(sys.stdin).get("nodes", [])))' 2>/dev/null || echo 0
}
all_online() { test "$(online)" = "$1"; }
wait_for() {  # SECONDS COMMAND...
  local until=$((SECONDS + $1)); shift
  until "$@"; do ((SECONDS < until)) || return 1; sleep 0.2; done
}
serving() { test "$(grep -c "listening on" "$WORK/$1.log")" -ge "${2:-1}"; }
newest_state() {
  fabricctl history --format json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["sweeps"][0]["state"])' 2>/dev/null
}

controller a 2
check "controller a becomes active and serves" wait_for 30 serving a
controller b 3
check "controller b waits as the standby" wait_for 30 grep -q "standby: another controller is active" "$WORK/b.log"
for i in 1 2 3; do
  in_ns n "$BIN/agent/fabric-agent" --config "$WORK/fabricctl.yaml" --insecure --controller "$BOTH" \
    --listen "$NET.4:0" --node-name "node-$i" --nccl-log-dir "$WORK/nccl" >"$WORK/agent-$i.log" 2>&1 &
  PIDS+=($!)
done
check "three agents register with a" wait_for 60 all_online 3

# A full sweep (three rounds of 3 s) through a; a's host is cut off in its first round.
fabricctl sweep --format json --output "$WORK/cut.json" >"$WORK/cut.out" 2>&1 &
sweeper=$!
running() { [[ $(newest_state) == SWEEP_RUNNING ]]; }
check "the sweep runs on a" wait_for 20 running
sleep 1
cut=$SECONDS
ip -n "$P-a" link set eth0 down
check "b serves within 30 s of a's link going down" wait_for 30 serving b
echo "takeover: b serving $((SECONDS - cut)) s after a's link went down"
check "a stops acting on its own: its lease not renewed, it goes back to waiting" \
  wait_for 30 grep -q "standby again" "$WORK/a.log"
wait "$sweeper"
check "the cut sweep's fabricctl fails (exit 3), with no report" test $? -eq 3
check "the agents register with b" wait_for 60 all_online 3
state=$(newest_state)
check "a's cut sweep is recorded interrupted ($state)" test "$state" = SWEEP_INTERRUPTED
fabricctl sweep --format json --output "$WORK/again.json" >/dev/null 2>&1
code=$?
pairs=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["summary"]["pairs"])' "$WORK/again.json" 2>/dev/null)
check "a new sweep runs through b and measures the three pairs (exit $code, $pairs pairs)" \
  test "$code" -le 2 -a "$pairs" = 3

ip -n "$P-a" link set eth0 up
back_as_standby() { sed -n '/standby again/,$p' "$WORK/a.log" | grep -q "standby: another controller is active"; }
check "a, its link back, sees the database again and waits as the standby" wait_for 40 back_as_standby
check "a does not serve beside b" test "$(grep -c "listening on" "$WORK/a.log")" -eq 1
check "b still serves: the registry through either address" all_online 3
if ((fail > 0)); then
  for f in a b; do echo "--- $f.log"; tail -n 30 "$WORK/$f.log"; done
fi
finish
