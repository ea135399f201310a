# Shared helpers of the benchmark scripts: sourced, not run.
# Each benchmark runs fabricctl and the reference tool side by side in one run, alternating
# A, B, A, B... so that machine noise hits both, and reports the ratio of medians.

set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FABRICCTL=$ROOT/bazel-bin/cli/fabricctl
RESULTS=$ROOT/bench/results

need_build() {
  [[ -x $FABRICCTL ]] || (cd "$ROOT" && bazel build //cli:fabricctl >/dev/null 2>&1) ||
    { echo "bench: cannot build fabricctl" >&2; exit 3; }
}

need_tool() {  # need_tool BINARY PACKAGE
  command -v "$1" >/dev/null || { echo "bench: $1 not found (apt-get install $2, or scripts/setup.sh)" >&2; exit 3; }
}

# median of the numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) exit 1; print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }

machine() {
  echo "machine: $(uname -srm), $(nproc) cores, $(awk '/model name/ {$1=$2=$3=""; print; exit}' /proc/cpuinfo | sed 's/^ *//')"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "fabricctl: $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo unknown)"
}

# Free TCP port on loopback.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Waits until something listens on TCP port $1 (in network namespace $2 when given).
wait_listen() {
  local port=$1 ns=${2:-} i
  for i in $(seq 1 100); do
    if ${ns:+ip netns exec "$ns"} ss -ltn "sport = :$port" | grep -q LISTEN; then return 0; fi
    sleep 0.05
  done
  echo "bench: nothing listens on port $port" >&2; return 1
}

# Starts a practice lab of $1 hosts in network namespaces (extra arguments go to `lab.sh up`),
# torn down when the benchmark exits. Needs root.
lab_up() {
  [[ $(id -u) -eq 0 ]] || { echo "bench: needs root (network namespaces)" >&2; exit 3; }
  (cd "$ROOT" && bazel build //controller:fabric-controller //agent:fabric-agent //cli:fabricctl >/dev/null 2>&1) ||
    { echo "bench: build failed" >&2; exit 3; }
  export FABRIC_LAB_DIR FABRIC_LAB_PREFIX=fabbench
  FABRIC_LAB_DIR=$(mktemp -d)
  trap 'bash "$ROOT/scripts/lab.sh" down >/dev/null 2>&1; rm -rf "$FABRIC_LAB_DIR"' EXIT
  bash "$ROOT/scripts/lab.sh" up "$@" >/dev/null
}
