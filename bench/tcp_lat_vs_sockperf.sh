#!/usr/bin/env bash
# tcp_lat against sockperf ping-pong over TCP on loopback: 64-byte messages, same duration.
# Both report one-way latency (RTT/2). Goal: p50 within 10 %.
#
#   bench/tcp_lat_vs_sockperf.sh [ROUNDS] [SECONDS]
source "$(dirname "$0")/lib.sh"
ROUNDS=${1:-5} SECONDS_PER=${2:-5} SIZE=64
need_build; need_tool sockperf sockperf

p50_ours=() p99_ours=() p50_theirs=() p99_theirs=()
for r in $(seq 1 "$ROUNDS"); do
  port=$(free_port)
  sockperf sr --tcp -i 127.0.0.1 -p "$port" >/dev/null 2>&1 &
  server=$!
  wait_listen "$port"
  out=$(sockperf pp --tcp -i 127.0.0.1 -p "$port" -t "$SECONDS_PER" -m "$SIZE" 2>&1)
  kill "$server"; wait "$server" 2>/dev/null || true
  p50_theirs+=("$(awk '/percentile 50.000/ {print $NF}' <<<"$out")")
  p99_theirs+=("$(awk '/percentile 99.000/ {print $NF}' <<<"$out")")

  port=$(free_port)
  "$FABRICCTL" probe tcp_lat --server --listen 127.0.0.1 --port "$port" --one-off >/dev/null &
  wait_listen "$port"
  json=$("$FABRICCTL" probe tcp_lat "127.0.0.1:$port" --sizes "$SIZE" --duration "${SECONDS_PER}s" --format json)
  wait
  p50_ours+=("$(python3 -c 'import json,sys; print(round(json.load(sys.stdin)["lat"][0]["t_typical_us"], 2))' <<<"$json")")
  p99_ours+=("$(python3 -c 'import json,sys; print(round(json.load(sys.stdin)["lat"][0]["t_p99_us"], 2))' <<<"$json")")
done

{
  machine
  echo "command: bench/tcp_lat_vs_sockperf.sh $ROUNDS $SECONDS_PER  ($SIZE-byte ping-pong over TCP on loopback, medians of $ROUNDS alternating rounds)"
  for q in p50 p99; do
    declare -n o="${q}_ours" t="${q}_theirs"
    mo=$(printf '%s\n' "${o[@]}" | median); mt=$(printf '%s\n' "${t[@]}" | median)
    printf '%s  tcp_lat %7.2f us   sockperf %7.2f us   ratio %s   (rounds: ours %s; sockperf %s)\n' \
      "$q" "$mo" "$mt" "$(ratio "$mo" "$mt")" "${o[*]}" "${t[*]}"
  done
} | tee "$RESULTS/tcp_lat_vs_sockperf.txt"
