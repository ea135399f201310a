#!/usr/bin/env bash
# A local practice cluster: one fabric-controller and N fabric-agents on loopback, with mutual
# TLS from a private CA. State (certificates, database, logs, pids) lives in .lab/.
#
#   scripts/lab.sh up [N]    start a controller and N agents (default 3), wait until registered
#   scripts/lab.sh nodes     fabricctl nodes against the lab's controller
#   scripts/lab.sh down      stop every lab process (the database is kept)
#
# Binaries come from bazel-bin/ (scripts/quickstart.sh builds them).
set -euo pipefail
cd "$(dirname "$0")/.."
LAB=.lab
BIN=bazel-bin
CERTS=$LAB/certs

die() { echo "lab: $*" >&2; exit 3; }

tls_flags() {  # tls_flags NAME
  echo "--tls-cert $CERTS/$1.pem --tls-key $CERTS/$1.key --tls-ca $CERTS/ca.pem"
}

# Waits until FILE has a line containing TEXT; prints that line.
wait_for_line() {  # wait_for_line FILE TEXT SECONDS
  local deadline=$((SECONDS + $3))
  while ((SECONDS < deadline)); do
    if grep -q "$2" "$1" 2>/dev/null; then grep -m1 "$2" "$1"; return 0; fi
    sleep 0.1
  done
  return 1
}

start() {  # start NAME COMMAND...
  local name=$1; shift
  : > "$LAB/$name.out"
  setsid "$@" > "$LAB/$name.out" 2> "$LAB/$name.log" < /dev/null &
  echo $! > "$LAB/$name.pid"
}

up() {
  local n=${1:-3}
  [[ $n =~ ^[0-9]+$ ]] && ((n >= 2 && n <= 64)) || die "up: N must be 2-64, got '$n'"
  for b in controller/fabric-controller agent/fabric-agent cli/fabricctl; do
    [[ -x $BIN/$b ]] || die "missing $BIN/$b: build first (bazel build //...)"
  done
  down quiet
  mkdir -p "$LAB"
  local names=(fabric-controller fabricctl)
  for i in $(seq 1 "$n"); do names+=("node-$i"); done
  bash scripts/make-certs.sh "$CERTS" "${names[@]}" > /dev/null
  # fabricctl reads its TLS material from this file: `fabricctl --config .lab/fabricctl.yaml`.
  printf 'tls:\n  cert: %s\n  key: %s\n  ca: %s\n' \
    "$PWD/$CERTS/fabricctl.pem" "$PWD/$CERTS/fabricctl.key" "$PWD/$CERTS/ca.pem" \
    > "$LAB/fabricctl.yaml"

  # shellcheck disable=SC2046
  start controller "$BIN/controller/fabric-controller" --listen 127.0.0.1:0 \
    --db "$LAB/fabric.db" --heartbeat-interval 2s --stale-after 6s $(tls_flags fabric-controller)
  local line
  line=$(wait_for_line "$LAB/controller.out" "listening on" 20) ||
    die "controller did not start; see $LAB/controller.log"
  local controller=${line##* }
  echo "$controller" > "$LAB/controller.address"
  for i in $(seq 1 "$n"); do
    # shellcheck disable=SC2046
    start "node-$i" "$BIN/agent/fabric-agent" --controller "$controller" --listen 127.0.0.1:0 \
      --node-name "node-$i" --label "rack=r$(( (i - 1) / 4 + 1 ))" $(tls_flags "node-$i")
  done
  for i in $(seq 1 "$n"); do
    wait_for_line "$LAB/node-$i.out" "registered with" 20 > /dev/null ||
      die "node-$i did not register; see $LAB/node-$i.log"
  done
  echo "lab: controller on $controller and $n agents, mutual TLS (certificates in $CERTS)"
}

nodes() {
  [[ -f $LAB/controller.address ]] || die "no lab running (scripts/lab.sh up)"
  "$BIN/cli/fabricctl" --config "$LAB/fabricctl.yaml" \
    --controller "$(cat "$LAB/controller.address")" nodes "$@"
}

down() {
  local stopped=0
  for pidfile in "$LAB"/*.pid; do
    [[ -f $pidfile ]] || continue
    kill "$(cat "$pidfile")" 2>/dev/null && stopped=$((stopped + 1)) || true
    rm -f "$pidfile"
  done
  rm -f "$LAB/controller.address"
  [[ ${1:-} == quiet ]] || echo "lab: stopped $stopped processes"
}

case ${1:-} in
  up) shift; up "$@" ;;
  nodes) shift; nodes "$@" ;;
  down) down ;;
  *) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 3 ;;
esac
