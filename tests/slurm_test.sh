#!/usr/bin/env bash
# Slurm for real: Debian's slurm-wlm (slurmctld, one slurmd per practice-lab host, each in the
# host's network namespace) with munge, the shipped deploy/slurm/fabric-prolog as
# PrologSlurmctld and deploy/slurm/fabric-health as HealthCheckProgram, exactly as the recipe
# in docs/slurm.md sets them. Jobs go in through sbatch and srun. Checks that a healthy lab lets
# jobs run (two nodes, one node), that a planted fault (node-3's link throttled) holds a job back
# and drains node-3, and only node-3, with the finding kind in the reason, that the health
# check drains on a critical finding only, and that it gives back the nodes fabricctl drained
# once they check clean and a sweep has passed them (never an operator's drain), and that the
# controller lists the drains its verdicts made to give back (undrain.enabled). Needs root,
# iproute2, slurm-wlm and munge; skips (saying why) otherwise.
set -uo pipefail

# shellcheck source=tests/testlib.sh
source tests/testlib.sh
require_lab "the Slurm test"
require_programs slurmctld slurmd sbatch srun scontrol squeue munged munge

export FABRIC_BIN=$PWD
export FABRIC_LAB_DIR=${TEST_TMPDIR:-/tmp}/slurm-lab
export FABRIC_LAB_PREFIX=fabslurm
# Short: slurmd's spool holds Unix sockets, whose paths must fit in 108 bytes (TEST_TMPDIR's do not).
DIR=$(mktemp -d /tmp/fabslurm.XXXXXX)
mkdir -p "$DIR/state" "$DIR/spool"
# A munged started here writes its pid here (munge's own directory: $DIR is not the munge user's).
MUNGED_PIDFILE=/run/munge/fabslurm-test-$$.pid
lab() { bash scripts/lab.sh "$@"; }
cleanup() {
  # Only the daemons this test started, by their pid files: never another munged or slurmd.
  [[ -f $DIR/slurmctld.pid ]] && kill "$(cat "$DIR/slurmctld.pid")" 2>/dev/null
  for f in "$DIR"/slurmd-*.pid; do [[ -f $f ]] && kill "$(cat "$f")" 2>/dev/null; done
  if [[ -n ${MUNGED_STARTED:-} && -s $MUNGED_PIDFILE ]]; then
    kill "$(cat "$MUNGED_PIDFILE")" 2>/dev/null
    rm -f "$MUNGED_PIDFILE"
  fi
  lab down >/dev/null 2>&1
  sleep 1
  for f in "$DIR"/*.log "$DIR"/*.err; do [[ -f $f ]] && cp "$f" "${TEST_UNDECLARED_OUTPUTS_DIR:-/tmp}/" 2>/dev/null; done
  rm -rf "$DIR"
}
trap cleanup EXIT

# munge: the system's daemon when it runs, else started here with the package's key.
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  [[ -f /etc/munge/munge.key ]] || /usr/sbin/mungekey --create --keyfile /etc/munge/munge.key
  chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
  install -d -o munge -g munge -m 0755 /run/munge
  runuser -u munge -- /usr/sbin/munged --pid-file="$MUNGED_PIDFILE" ||
    { echo "FAIL: munged did not start"; exit 1; }
  MUNGED_STARTED=1
fi

# 4 hosts; node-3's link throttled to a fifth of the others': the fault jobs must not land on.
lab up 4 --throttle node-3=200mbit > "$DIR/lab.up" 2>&1 || { cat "$DIR/lab.up"; echo "FAIL: lab up"; exit 1; }
# The controller gives back what its verdicts drained once a sweep passes it (undrain.enabled),
# for the sweep of step 7 to list.
printf 'undrain:\n  enabled: true\n  after: 0s\n' >> "$FABRIC_LAB_DIR/lab.yaml"
kill -HUP "$(cat "$FABRIC_LAB_DIR/controller.pid")"
CTL_NS=$(cat "$FABRIC_LAB_DIR/controller.ns")
CONTROLLER=$(cat "$FABRIC_LAB_DIR/controller.address")
in_ctl() { nsenter --net="/run/netns/$CTL_NS" "$@"; }

# docs/slurm.md's recipe: the shipped scripts, their settings in a defaults file.
# (SLURM_CONF: this test's slurm.conf is not in /etc/slurm, where scontrol looks.)
cat > "$DIR/fabric-slurm" <<CONF
export SLURM_CONF=$DIR/slurm.conf
FABRICCTL=$PWD/cli/fabricctl
# The prolog's own operator certificate (fabric-prolog), not the administrator's.
export FABRICCTL_CONFIG=$FABRIC_LAB_DIR/prolog.yaml
FABRIC_SWEEP_ARGS="--controller $CONTROLLER --duration 500ms"
FABRIC_GATE_METRICS=$DIR/gate.prom
FABRIC_SWEEP_WAIT=2m
# An error of the script's own must show here as a held job, not pass as an allowed one.
FABRIC_ON_ERROR=hold
CONF
# The health check: this machine's live checks (no RDMA here: a warning, never a drain) with
# the node's agent's link watch, except on the nodes the test names in plant-port-down, which
# read a port-down fixture. Nodes it drained are given back after two clean checks over 5 s.
cat > "$DIR/fabric-slurm-health" <<CONF
export SLURM_CONF=$DIR/slurm.conf
FABRICCTL=$PWD/cli/fabricctl
FABRIC_CHECK_ARGS="--watch-file $FABRIC_LAB_DIR/watch-\$SLURMD_NODENAME"
if [ -f $DIR/plant-port-down ] && grep -qx "\$SLURMD_NODENAME" $DIR/plant-port-down; then
  FABRIC_CHECK_ARGS="--sysfs-root $DIR/sysfs/roce-h100-port-down"
fi
FABRIC_UNDRAIN=1
FABRIC_UNDRAIN_CHECKS=2
FABRIC_UNDRAIN_AFTER=5
FABRIC_UNDRAIN_STATE=$DIR/undrain
CONF
python3 tests/fixtures/make_sysfs.py "$DIR/sysfs" >/dev/null || { echo "FAIL: make_sysfs"; exit 1; }
cat > "$DIR/prolog" <<SH
#!/bin/sh
FABRIC_SLURM_DEFAULTS=$DIR/fabric-slurm exec $PWD/deploy/slurm/fabric-prolog 2>>$DIR/prolog.err
SH
cat > "$DIR/health" <<SH
#!/bin/sh
FABRIC_SLURM_DEFAULTS=$DIR/fabric-slurm-health exec $PWD/deploy/slurm/fabric-health 2>>$DIR/health.err
SH
chmod +x "$DIR/prolog" "$DIR/health"

export SLURM_CONF=$DIR/slurm.conf
{
  cat <<CONF
ClusterName=fabslurm
SlurmctldHost=$(hostname -s)(198.18.0.254)
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd-%n.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/linear
MpiDefault=none
ReturnToService=2
PrologSlurmctld=$DIR/prolog
HealthCheckProgram=$DIR/health
HealthCheckInterval=5
HealthCheckNodeState=ANY
SlurmctldTimeout=30
SlurmdTimeout=60
CONF
  for i in 1 2 3 4; do echo "NodeName=node-$i NodeAddr=198.18.0.$i CPUs=$(nproc) State=UNKNOWN"; done
  echo "PartitionName=lab Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
} > "$SLURM_CONF"

in_ctl /usr/sbin/slurmctld -i || { cat "$DIR/slurmctld.log"; echo "FAIL: slurmctld"; exit 1; }
for i in 1 2 3 4; do
  # nsenter, not `ip netns exec`: the host's network namespace only, with this machine's /sys
  # (and its cgroup mounts, which slurmd needs) rather than a fresh sysfs.
  mkdir -p "$DIR/spool/node-$i"
  nsenter --net="/run/netns/$FABRIC_LAB_PREFIX-node-$i" /usr/sbin/slurmd -N "node-$i" ||
    { cat "$DIR/slurmd-node-$i.log"; echo "FAIL: slurmd node-$i"; exit 1; }
done
idle=""
for _ in $(seq 1 60); do
  idle=$(in_ctl sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | paste -sd' ')
  [[ $idle == "node-1 node-2 node-3 node-4" ]] && break
  sleep 1
done
check "slurmctld and 4 slurmd up, every node idle ($idle)" test "$idle" = "node-1 node-2 node-3 node-4"
# After a first round of health checks: live warnings (no RDMA here) drain nothing.
sleep 6
drained=$(in_ctl sinfo -h -N -t drain,draining,drained -o %N | sort -u | paste -sd' ')
check "the health check's warnings drain no node ('$drained')" test -z "$drained"
check "and are logged per node" grep -q "fabric-health: node-1: warnings: WARNING: node-1: rdma_unavailable" "$DIR/health.err"

state() { in_ctl squeue -h -j "$1" -o %T 2>/dev/null || true; }
finished() { in_ctl scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
wait_state() {  # JOB STATE SECONDS
  local s
  for _ in $(seq 1 "$3"); do s=$(finished "$1"); [[ $s == "$2" ]] && return 0; sleep 1; done
  echo "job $1: $s, not $2" >&2
  return 1
}
reason() { in_ctl scontrol show node "$1" | sed -n 's/^ *Reason=\(.*\) \[.*/\1/p'; }

# 0. The prolog as slurmctld would run it, by hand: no node list is an error (held here, with
# FABRIC_ON_ERROR=hold), never "every node"; SLURM_NODELIST, the older name, is read too.
rc=0
in_ctl env -u SLURM_JOB_NODELIST -u SLURM_NODELIST SLURM_JOB_ID=by-hand-1 "$DIR/prolog" || rc=$?
check "the prolog without a node list holds the job (exit $rc, want 1)" test "$rc" = 1
check "and says why" grep -q "job by-hand-1: neither SLURM_JOB_NODELIST nor SLURM_NODELIST" "$DIR/prolog.err"
rc=0
in_ctl env -u SLURM_JOB_NODELIST SLURM_NODELIST='node-[1-2]' SLURM_JOB_ID=by-hand-2 "$DIR/prolog" || rc=$?
check "the prolog sweeps SLURM_NODELIST's healthy nodes and lets the job run (exit $rc)" test "$rc" = 0
check "that sweep covered node-[1-2] only" grep -q "sweep [0-9]*: 2 nodes" "$DIR/prolog.err"
# Inside a job, without --nodes, fabricctl sweep reads the job's list itself.
in_ctl env -u SLURM_NODELIST SLURM_JOB_NODELIST='node-[1-2]' FABRICCTL_CONFIG="$FABRIC_LAB_DIR/lab.yaml" \
  cli/fabricctl sweep --controller "$CONTROLLER" --duration 500ms > /dev/null 2> "$DIR/in-job.err"
check "fabricctl sweep in a job sweeps SLURM_JOB_NODELIST's nodes" grep -q "sweep [0-9]*: 2 nodes" "$DIR/in-job.err"
: > "$DIR/prolog.err"

# 1. Healthy nodes: sbatch on two of them runs after a clean sweep.
job=$(in_ctl sbatch --parsable -N2 -w node-1,node-2 -o "$DIR/job-healthy.out" --wrap "echo ran") ||
  bad "sbatch"
check "sbatch on node-[1-2]: the sweep passes and the job completes" wait_state "$job" COMPLETED 120
check "the job's output is there" grep -q ran "$DIR/job-healthy.out"
errors=$(grep -e "could not run" -e FABRIC_ON_ERROR "$DIR/prolog.err")
check "the prolog ran its sweep without an error ($errors)" test -z "$errors"
# ...and did sweep: fabricctl's progress in the prolog's log, the sweep in the controller's history.
swept=$(sed -n 's/^sweep \([0-9]*\): 2 nodes.*/\1/p' "$DIR/prolog.err" | tail -n 1)
check "the prolog swept the job's two nodes (sweep '$swept')" test -n "$swept"
check "the controller's history holds that sweep, completed" \
  grep -Eq "^${swept:-none} +completed " <<< "$(lab history --limit 10)"

# 2. A one-node interactive job: judged by that node's checks, then run.
out=$(in_ctl timeout 120 srun -N1 -w node-2 echo one-node 2>"$DIR/srun.err")
check "srun on one node runs after its one-node sweep ($out)" test "$out" = one-node

# 3. The planted fault: a job on all four is held back, node-3 drained with the reason.
job=$(in_ctl sbatch --parsable -N4 -o "$DIR/job-fault.out" --wrap "echo ran")
drained=""
for _ in $(seq 1 180); do
  drained=$(in_ctl sinfo -h -N -t drain,draining,drained -o %N | sort -u | paste -sd' ')
  [[ -n $drained ]] && break
  sleep 1
done
# The prolog's exit 1 requeues the batch job; it then waits, as no 4 nodes are in service.
restarts=0
for _ in $(seq 1 30); do
  restarts=$(in_ctl scontrol show job "$job" 2>/dev/null | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')
  [[ ${restarts:-0} -ge 1 && $(finished "$job") == PENDING ]] && break
  sleep 1
done
check "only node-3 is drained ('$drained')" test "$drained" = node-3
r=$(reason node-3)
check "node-3's reason names the finding and the job ('$r')" \
  test "$r" = "fabricctl: straggler_node (job $job)"
s=$(finished "$job")
check "the job on the faulty fabric was requeued and waits ($s, restarts $restarts)" \
  test "$s" = PENDING -a "${restarts:-0}" -ge 1
check "and produced no output" test ! -s "$DIR/job-fault.out"
check "the prolog says it held the job back" grep -q "job $job: .*1 node(s) drained; job held back" "$DIR/prolog.err"
tail -n 5 "$DIR/prolog.err"
in_ctl scancel "$job" 2>/dev/null

# 4. A critical finding that drains nothing (node-2's agent killed: node_unreachable, for a
#    person to look at) lets the job run rather than requeue it onto the same nodes forever.
lab kill node-2 >/dev/null
job=$(in_ctl sbatch --parsable -N2 -w node-1,node-2 -o "$DIR/job-unreachable.out" --wrap "echo ran")
check "a job whose sweep finds node-2 unreachable runs" wait_state "$job" COMPLETED 180
check "the prolog logged the undrained critical findings" \
  grep -q "job $job: critical fabric findings on .* drained no node; FABRIC_ON_UNDRAINED=allow" "$DIR/prolog.err"
# The job's sweep (the prolog's last) names the agent that was killed, and only that one.
swept=$(sed -n 's/^sweep \([0-9]*\): 2 nodes.*/\1/p' "$DIR/prolog.err" | tail -n 1)
unreachable=$(lab map "${swept:-0}" --format json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
print(" ".join(sorted(f["node"] for f in r.get("findings", []) if f.get("kind") == "node_unreachable")))')
check "that job's sweep ($swept) reports node-2, the agent killed, unreachable ('$unreachable')" \
  test "$unreachable" = node-2
drained=$(in_ctl sinfo -h -N -t drain,draining,drained -o %N | sort -u | paste -sd' ')
check "and drained nothing more ('$drained')" test "$drained" = node-3

# 5. The health check drains on a critical finding, with its kind in the reason.
echo node-4 > "$DIR/plant-port-down"
r=""
for _ in $(seq 1 30); do r=$(reason node-4); [[ -n $r ]] && break; sleep 1; done
check "fabric-health drains node-4 on its critical finding ('$r')" test "$r" = "fabricctl check: link_down"
drained=$(in_ctl sinfo -h -N -t drain,draining,drained -o %N | sort -u | paste -sd' ')
check "nodes 1 and 2 stay in service ('$drained')" test "$drained" = "node-3 node-4"

# 6. An operator's drain keeps its reason when the health check then finds a fault there too.
in_ctl scontrol update nodename=node-1 state=drain reason="operator: maintenance"
echo node-1 >> "$DIR/plant-port-down"
for _ in $(seq 1 30); do grep -q "node-1: critical: link_down; already drained" "$DIR/health.err" && break; sleep 1; done
check "fabric-health saw node-1's fault and left the operator's drain" \
  grep -q "node-1: critical: link_down; already drained by someone else" "$DIR/health.err"
r=$(reason node-1)
check "node-1's reason is still the operator's ('$r')" test "$r" = "operator: maintenance"

# 7. Drains given back: the faults gone, node-4's checks are clean and its agent's link watch
#    quiet, but no sweep has passed it since: it waits. node-3 (the prolog's drain, a sweep's
#    verdict) waits too, its fault still there. Then node-3's throttle is lifted and a sweep of
#    the two passes them: both are resumed, with the evidence logged. node-1 (an operator's
#    drain) stays drained.
sed -i '/^node-4$/d; /^node-1$/d' "$DIR/plant-port-down"
waiting="node-4: drained by fabricctl check; clean check [0-9]* of 2 since [0-9:]*; waiting for a sweep to pass it"
for _ in $(seq 1 60); do grep -q "$waiting" "$DIR/health.err" && break; sleep 1; done
check "fabric-health counted node-4's clean checks" \
  grep -q "node-4: drained by fabricctl check; clean check 1 of 2" "$DIR/health.err"
check "and waits for a sweep to pass node-4" grep -q "$waiting" "$DIR/health.err"
check "node-3's prolog drain waits for a sweep too (none has passed it)" grep -q \
  "node-3: drained by fabricctl's prolog; clean check [0-9]* of 2 since [0-9:]*; waiting for a sweep to pass it (no sweep has passed this node)" \
  "$DIR/health.err"
drained=$(in_ctl sinfo -h -N -t drain,draining,drained -o %N | sort -u | paste -sd' ')
check "no sweep, no resume ('$drained')" test "$drained" = "node-1 node-3 node-4"
# node-3's throttle lifted (the lab's shaping on its switch port and its own egress; no link
# goes down, which its link watch would count), then swept.
tc -n "$FABRIC_LAB_PREFIX-sw" qdisc del dev p3 root 2>/dev/null
tc -n "$FABRIC_LAB_PREFIX-node-3" qdisc del dev eth0 root 2>/dev/null
rc=0
# Beside a healthy node (node-1: drained by an operator, its agent up): a pass needs two
# peers (known_good.min_peers), which a sweep of the two alone cannot give.
lab sweep --nodes node-1,node-3,node-4 --duration 500ms --format resume > "$DIR/resume-sweep.out" \
  2> "$DIR/resume-sweep.err" || rc=$?
check "a sweep of node-3 and node-4 beside node-1 passes them (exit $rc)" test "$rc" = 0
# The controller's own list: node-3, which a verdict of its drained (the prolog's sweep); not
# node-4, which the health check drained.
back=$(paste -sd' ' "$DIR/resume-sweep.out")
check "and the controller lists node-3 to give back, not node-4 ('$back')" test "$back" = node-3
for _ in $(seq 1 60); do
  grep -q "node-4: resumed" "$DIR/health.err" && grep -q "node-3: resumed" "$DIR/health.err" && break
  sleep 1
done
check "node-4 resumed, saying why" grep -q \
  "node-4: resumed: [0-9]* clean checks since .*, the link watch quiet, sweep [0-9]* passed it at .* (was: fabricctl check: link_down" \
  "$DIR/health.err"
check "node-3 resumed, saying why" grep -q \
  "node-3: resumed: [0-9]* clean checks since .*, the link watch quiet, sweep [0-9]* passed it at .* (was: fabricctl: straggler_node (job" \
  "$DIR/health.err"
states=""
for _ in $(seq 1 10); do
  states=$(in_ctl sinfo -h -N -n node-3,node-4 -o %T | paste -sd' ')
  [[ $states == "idle idle" ]] && break
  sleep 1
done
check "node-3 and node-4 are back in service ($states)" test "$states" = "idle idle"
sleep 6  # more health checks: an operator's drain is not fabricctl's to give back
drained=$(in_ctl sinfo -h -N -t drain,draining,drained -o %N | sort -u | paste -sd' ')
check "node-1 (operator) stays drained ('$drained')" test "$drained" = "node-1"
r=$(reason node-1)
check "node-1's reason is still the operator's ('$r')" test "$r" = "operator: maintenance"

finish
