#!/usr/bin/env bash
# A burst of job starts is gated, not refused: 80 Slurm prologs (deploy/slurm/fabric-prolog with
# a fake scontrol and the real fabricctl) start at once for jobs on the same two healthy nodes
# of a real controller and two real agents on loopback. Each waits for or shares one sweep (5 s long, so that all arrive while it runs);
# every one ends with the verdict (exit 0), none refused by the per-identity bound (64). No root.
set -uo pipefail
[[ -f tests/testlib.sh && -d deploy/slurm ]] || cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/testlib.sh
source tests/testlib.sh

T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/burst.XXXXXX")
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$T"' EXIT
printf 'thresholds:\n  relative_lat: 1000\n' > "$T/fabricctl.yaml"

controller/fabric-controller --listen 127.0.0.1:0 --db "$T/fabric.db" --config "$T/fabricctl.yaml" \
  > "$T/controller.out" 2> "$T/controller.log" &
pids+=($!)
for _ in $(seq 1 100); do grep -q "listening on" "$T/controller.out" && break; sleep 0.1; done
address=$(sed -n 's/.*listening on //p' "$T/controller.out" | head -n1)
for node in gpu001 gpu002; do
  agent/fabric-agent --controller "$address" --listen 127.0.0.1:0 --node-name "$node" \
    > "$T/$node.out" 2> "$T/$node.log" &
  pids+=($!)
done
registered() { grep -q "registered with" "$T/gpu001.log" "$T/gpu001.out" 2>/dev/null &&
  grep -q "registered with" "$T/gpu002.log" "$T/gpu002.out" 2>/dev/null; }
for _ in $(seq 1 100); do registered && break; sleep 0.1; done
check "two agents registered" registered

fake_scontrol "$T/bin" gpu001 gpu002

start=$SECONDS
jobs=()
for job in $(seq 1 80); do
  env -i PATH="$T/bin:/usr/bin:/bin" TMPDIR="$T" FABRIC_SLURM_DEFAULTS="$T/no-defaults" \
    FABRICCTL="$PWD/cli/fabricctl" FAKE_LOG="$T/scontrol.log" FABRIC_GATE_METRICS="" \
    FABRIC_SWEEP_WAIT=5m \
    FABRIC_SWEEP_ARGS="--config $T/fabricctl.yaml --controller $address --probes tcp_lat --duration 5" \
    SLURM_JOB_ID="$job" SLURM_JOB_NODELIST='gpu[001-002]' \
    sh deploy/slurm/fabric-prolog > /dev/null 2> "$T/prolog-$job.err" &
  jobs+=($!)
done
failed=0
for i in "${!jobs[@]}"; do
  wait "${jobs[$i]}" || { failed=$((failed + 1)); echo "job $((i + 1)): $(tail -n2 "$T/prolog-$((i + 1)).err")"; }
done
took=$((SECONDS - start))
check "80 prologs at once for jobs on the same nodes: every one exits 0 ($failed did not)" \
  test "$failed" -eq 0
check "within a few minutes ($took s)" test "$took" -lt 300
check "none was refused" bash -c "! grep -l 'already has' '$T'/prolog-*.err"
check "nothing was drained" test ! -s "$T/scontrol.log"
finish
