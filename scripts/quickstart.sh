#!/usr/bin/env bash
# The README's first command: sets up a fresh Debian 12 machine, builds fabricctl, starts a
# practice cluster of 5 hosts on this machine (scripts/lab.sh) with one host's link throttled,
# and runs a sweep that finds it. Exits 0 when the sweep completed (its own exit code, 2 for
# the critical finding, is printed), non-zero when something could not run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bazel build //controller:fabric-controller //agent:fabric-agent //cli:fabricctl
F=bazel-bin/cli/fabricctl
"$F" lab up 5 --throttle node-3=300mbit
echo
"$F" lab nodes
echo
status=0
"$F" lab sweep || status=$?
echo
echo "The sweep exited $status: 2 is CRITICAL, the verdict expected with node-3 throttled."
echo
echo "The lab is still running: $F lab sweep --format html --output map.html;"
echo "$F lab history; stop it with $F lab down."
# The lab ran and the sweep completed: success, whatever its verdict (3: it could not run).
[[ $status -le 2 ]]
