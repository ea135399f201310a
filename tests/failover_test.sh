#!/usr/bin/env bash
# Two controllers on one real PostgreSQL (started here): the first active, the second a
# standby that does not serve; three agents and fabricctl given both addresses. The active
# controller is killed (SIGKILL) in the middle of a sweep: the standby takes over within
# seconds, the agents register with it, the cut sweep is recorded interrupted, and the sweep
# run again completes. The first controller, started again, waits as the standby.
set -uo pipefail
source tests/testlib.sh
source tests/postgres.sh
start_postgres

BIN=$PWD
WORK=$(mktemp -d /tmp/fabricctl-failover.XXXXXX)
PIDS=()
cleanup() {
  ((${#PIDS[@]})) && kill -9 "${PIDS[@]}" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$WORK"
  stop_postgres
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT_A=$(free_port) PORT_B=$(free_port)
BOTH=127.0.0.1:$PORT_A,127.0.0.1:$PORT_B
cat > "$WORK/fabricctl.yaml" <<YAML
probes:
  sizes: "64K"
  duration: 1s
sweep:
  probes: [tcp_bw, tcp_lat]
  retests: 0
YAML
controller() {  # NAME PORT: started in the background, its pid in $WORK/NAME.pid
  "$BIN/controller/fabric-controller" --config "$WORK/fabricctl.yaml" --listen "127.0.0.1:$2" \
    --db "$POSTGRES_URL" --heartbeat-interval 1s --stale-after 5s >"$WORK/$1.log" 2>&1 &
  echo $! > "$WORK/$1.pid"
  PIDS+=($!)
}
fabricctl() { "$BIN/cli/fabricctl" --config "$WORK/fabricctl.yaml" --controller "$BOTH" "$@"; }
online() {  # how many nodes the active controller lists online
  fabricctl nodes --format json 2>/dev/null |
    python3 -c 'import json, sys; print(sum(n.get("state") == "NODE_ONLINE" for n in json.load(sys.stdin).get("nodes", [])))' 2>/dev/null || echo 0
}
all_online() { test "$(online)" = "$1"; }  # evaluated on every try, not once
wait_for() {  # SECONDS COMMAND...: until COMMAND succeeds; fails after SECONDS
  local until=$((SECONDS + $1)); shift
  until "$@"; do ((SECONDS < until)) || return 1; sleep 0.2; done
}
listening() { grep -q "listening on" "$WORK/$1.log"; }

controller a "$PORT_A"
check "controller a becomes active and serves" wait_for 20 listening a
controller b "$PORT_B"
check "controller b waits as the standby, not serving" \
  wait_for 20 grep -q "standby: another controller is active" "$WORK/b.log"
check "the standby does not listen" bash -c "! grep -q 'listening on' '$WORK/b.log'"
for i in 1 2 3; do
  "$BIN/agent/fabric-agent" --config "$WORK/fabricctl.yaml" --controller "$BOTH" --listen 127.0.0.1:0 \
    --node-name "node-$i" --nccl-log-dir "$WORK/nccl" >"$WORK/agent-$i.log" 2>&1 &
  PIDS+=($!)
done
check "three agents register with a" wait_for 60 all_online 3

# A full sweep of three nodes: three rounds of 3 s probes; a dies in the second.
fabricctl sweep --format json --output "$WORK/cut.json" >"$WORK/cut.out" 2>&1 &
sweeper=$!
running() { fabricctl history --format json 2>/dev/null | grep -q SWEEP_RUNNING; }
check "the sweep starts on a" wait_for 20 running
sleep 3
killed=$(date +%s.%N)
kill -9 "$(cat "$WORK/a.pid")"
check "controller b takes over within 10 s of a's death" wait_for 10 listening b
took=$(awk -v a="$killed" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
echo "takeover: b serving $took s after a was killed"
wait "$sweeper"
check "the cut sweep's fabricctl fails (exit 3), with no report" test $? -eq 3
check "the agents register with b" wait_for 60 all_online 3
state=$(fabricctl history --format json | python3 -c 'import json, sys; print(json.load(sys.stdin)["sweeps"][0]["state"])')
check "the cut sweep is recorded interrupted ($state)" test "$state" = SWEEP_INTERRUPTED
fabricctl sweep --format json --output "$WORK/again.json" >/dev/null 2>&1
code=$?
check "the sweep run again completes on b, a report whatever its verdict (exit $code)" test "$code" -le 2
pairs=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["summary"]["pairs"])' "$WORK/again.json" 2>/dev/null)
check "it measured the three pairs ($pairs)" test "$pairs" = 3
controller a "$PORT_A"
check "a, started again, waits as the standby" \
  wait_for 20 grep -q "standby: another controller is active" "$WORK/a.log"
finish
