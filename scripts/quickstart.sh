#!/usr/bin/env bash
# The README's first command: sets up a fresh Debian 12 machine, builds fabricctl, starts a
# practice cluster on this machine (scripts/lab.sh) and shows what it found.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bazel build //controller:fabric-controller //agent:fabric-agent //cli:fabricctl
bash scripts/lab.sh up "${1:-3}"
bash scripts/lab.sh nodes
echo
echo "Next: scripts/lab.sh nodes --format json; stop the lab with scripts/lab.sh down"
