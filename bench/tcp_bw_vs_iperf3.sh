#!/usr/bin/env bash
# tcp_bw against iperf3: same stream count, message size and duration, on loopback and across
# a veth pair between two network namespaces (root only). Goal: ratio >= 1.0 (0.95 to land).
#
#   bench/tcp_bw_vs_iperf3.sh [ROUNDS] [SECONDS] [STREAMS]
source "$(dirname "$0")/lib.sh"
ROUNDS=${1:-5} SECONDS_PER=${2:-5} STREAMS=${3:-1} SIZE=128K
need_build; need_tool iperf3 iperf3

run_pair() {  # run_pair LABEL SERVER_NS CLIENT_NS ADDRESS
  local label=$1 sns=$2 cns=$3 addr=$4 ours=() theirs=() r port
  for r in $(seq 1 "$ROUNDS"); do
    port=$(free_port)
    ${sns:+ip netns exec "$sns"} iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
    wait_listen "$port" "$sns"
    theirs+=("$(${cns:+ip netns exec "$cns"} iperf3 -c "$addr" -p "$port" -t "$SECONDS_PER" \
      -P "$STREAMS" -l "$SIZE" -f g | awk '/receiver/ && ($0 ~ /SUM/ || '"$STREAMS"' == 1) {v=$(NF-2)} END {print v}')")
    wait
    port=$(free_port)
    ${sns:+ip netns exec "$sns"} "$FABRICCTL" probe tcp_bw --server --port "$port" --one-off >/dev/null &
    wait_listen "$port" "$sns"
    ours+=("$(${cns:+ip netns exec "$cns"} "$FABRICCTL" probe tcp_bw "$addr:$port" --sizes "$SIZE" \
      --duration "${SECONDS_PER}s" --streams "$STREAMS" --format json |
      python3 -c 'import json,sys; print(round(json.load(sys.stdin)["bw"][0]["bw_avg_gbps"], 2))')")
    wait
  done
  local m_ours m_theirs
  m_ours=$(printf '%s\n' "${ours[@]}" | median)
  m_theirs=$(printf '%s\n' "${theirs[@]}" | median)
  printf '%-9s tcp_bw %6.2f Gb/s   iperf3 %6.2f Gb/s   ratio %s   (rounds: ours %s; iperf3 %s)\n' \
    "$label" "$m_ours" "$m_theirs" "$(ratio "$m_ours" "$m_theirs")" "${ours[*]}" "${theirs[*]}"
}

{
  machine
  echo "command: bench/tcp_bw_vs_iperf3.sh $ROUNDS $SECONDS_PER $STREAMS  (message $SIZE, medians of $ROUNDS alternating rounds)"
  run_pair loopback "" "" 127.0.0.1
  if [[ $(id -u) -eq 0 ]] && command -v ip >/dev/null; then
    A=fab-bench-a B=fab-bench-b
    cleanup() { ip netns del "$A" 2>/dev/null || true; ip netns del "$B" 2>/dev/null || true; }
    trap cleanup EXIT
    cleanup
    ip netns add "$A"; ip netns add "$B"
    ip link add fbench0 netns "$A" type veth peer name fbench1 netns "$B"
    ip -n "$A" addr add 198.18.0.1/24 dev fbench0; ip -n "$A" link set fbench0 up; ip -n "$A" link set lo up
    ip -n "$B" addr add 198.18.0.2/24 dev fbench1; ip -n "$B" link set fbench1 up; ip -n "$B" link set lo up
    run_pair veth "$B" "$A" 198.18.0.2
  else
    echo "veth      skipped: needs root and iproute2 for network namespaces"
  fi
} | tee "$RESULTS/tcp_bw_vs_iperf3$( ((STREAMS == 1)) || echo "-P$STREAMS").txt"
