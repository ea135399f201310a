#!/usr/bin/env bash
# The Slurm scripts' drain filter, without Slurm: deploy/slurm/fabric-prolog and fabric-health
# run with a fake scontrol and a fake fabricctl first on PATH. The drain list names a node of
# the job, a node outside it, a hostlist, shell metacharacters, two names in one, a line
# without a tab and an empty line: only the job's node (the prolog) or the node itself (the
# health check) reaches `scontrol update`, its reason stripped to plain characters. A prolog or
# health check stopped by SIGTERM stops fabricctl at once. Needs no root, Slurm or build.
set -uo pipefail
# From the checkout (or the runfiles tree Bazel starts it in), wherever it was started from.
[[ -f tests/testlib.sh && -d deploy/slurm ]] || cd "$(dirname "$0")/.." || exit 1

# shellcheck source=tests/testlib.sh
source tests/testlib.sh

T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/drain-filter.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir "$T/bin"
# scontrol: `show hostnames` expands any list to the job's three nodes (or fails, with
# $SCONTROL_FAILS), `show node` says idle, and anything else (an update) is recorded: one call
# a line, each argument followed by '|'.
cat > "$T/bin/scontrol" <<'SH'
#!/bin/sh
case "$1 $2" in
  "show hostnames")
    if [ -n "${SCONTROL_FAILS:-}" ]; then echo "scontrol: error: Invalid hostlist: $3" >&2; exit 1; fi
    printf '%s\n' gpu001 gpu002 gpu003 ;;
  "show node") echo "NodeName=$3 State=IDLE" ;;
  *) printf '%s|' "$@" >> "$FAKE_LOG"; echo >> "$FAKE_LOG"
     # slurmctld busy or refusing: the update fails.
     if [ -n "${SCONTROL_UPDATE_FAILS:-}" ]; then echo "slurm_update error: Socket timed out" >&2; exit 1; fi ;;
esac
SH
# fabricctl: copies $FAKE_DRAIN to its --output and exits 2 (critical); with $FAKE_SLEEP, writes
# its pid to $FAKE_PID and sleeps instead (a sweep that would run for long); with $FAKE_STATUS,
# gives no verdict (exit 3) and writes that word to its --status-file.
cat > "$T/bin/fabricctl" <<'SH'
#!/bin/sh
out="" status=""
while [ $# -gt 0 ]; do
  [ "$1" = --output ] && out=$2
  [ "$1" = --status-file ] && status=$2
  shift
done
if [ -n "${FAKE_STATUS:-}" ]; then
  echo "$FAKE_STATUS" > "$status"
  echo "fabricctl: sweep: it failed" >&2
  exit 3
fi
if [ -n "${FAKE_SLEEP:-}" ]; then
  echo $$ > "$FAKE_PID"
  exec sleep "$FAKE_SLEEP"
fi
cat "$FAKE_DRAIN" > "$out"
exit 2
SH
chmod +x "$T/bin/scontrol" "$T/bin/fabricctl"

# A script's environment, as bare as Slurm's: the fakes first on PATH, no settings file (nor
# this machine's /etc/default/fabric-slurm), FABRICCTL naming the fake.
ENV=(env -i PATH="$T/bin:/usr/bin:/bin" TMPDIR="$T" FABRIC_SLURM_DEFAULTS="$T/no-defaults"
  FABRICCTL="$T/bin/fabricctl" FAKE_LOG="$T/scontrol.log" FAKE_DRAIN="$T/drain"
  FAKE_PID="$T/fabricctl.pid" FABRIC_GATE_METRICS="$T/gate.prom")
# run NAME VAR=VALUE...: runs deploy/slurm/NAME in that environment plus VAR=VALUE...; its
# stderr to $T/NAME.err, the scontrol calls to $T/scontrol.log (emptied first).
run() {
  local script=$1; shift
  : > "$T/scontrol.log"
  "${ENV[@]}" "$@" sh "deploy/slurm/$script" 2> "$T/$script.err"
}
# alive PID: the process runs (a zombie nobody reaped yet does not count).
alive() { [[ -r /proc/$1/stat ]] && [[ $(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1) != Z ]]; }

# --- fabric-prolog: job 42 on gpu[001-003] -------------------------------------------------------
# shellcheck disable=SC2016  # the command substitution and backquotes are the payload
printf '%s\n' \
  "$(printf 'gpu002\tstraggler_node,link_down;$(reboot)`id`|x')" \
  "$(printf 'gpu999\tlink_down')" \
  "$(printf 'gpu[001-512]\tlink_down')" \
  "$(printf 'gpu001;rm -rf /\tlink_down')" \
  "" \
  "$(printf 'gpu003 gpu001\tlink_down')" \
  "gpu001" > "$T/drain"
rc=0
run fabric-prolog SLURM_JOB_ID=42 SLURM_JOB_NODELIST='gpu[001-003]' || rc=$?
check "the prolog drains and holds the job back (exit $rc, want 1)" test "$rc" = 1
drains=$(cat "$T/scontrol.log")
check "only the job's node gpu002 is drained, the reason stripped ('$drains')" \
  test "$drains" = "update|nodename=gpu002|state=drain|reason=fabricctl: straggler_node,link_down(reboot)idx (job 42)|"
check "a node outside the job is logged, not drained" \
  grep -q "job 42: not draining gpu999: not one of the job's nodes" "$T/fabric-prolog.err"
for line in 'gpu\[001-512\]?link_down' 'gpu001;rm -rf /?link_down' '' 'gpu003 gpu001?link_down' 'gpu001'; do
  check "the drain line '$line' is logged and ignored" \
    grep -q "job 42: ignoring drain line '$line': not HOSTNAME<tab>KINDS" "$T/fabric-prolog.err"
done
check "the prolog says it held the job back for one node" \
  grep -q "job 42: critical fabric findings on gpu\[001-003\]; 1 node(s) drained; job held back" "$T/fabric-prolog.err"

# Only names it may not drain: nothing drained, and the job runs (FABRIC_ON_UNDRAINED=allow).
printf 'gpu999\tlink_down\ngpu[001-512]\tlink_down\n' > "$T/drain"
rc=0
run fabric-prolog SLURM_JOB_ID=43 SLURM_NODELIST='gpu[001-003]' || rc=$?
check "a drain list of other nodes drains nothing and the job runs (exit $rc, want 0)" \
  test "$rc" = 0 -a ! -s "$T/scontrol.log"
check "and says so" \
  grep -q "job 43: critical fabric findings on gpu\[001-003\] drained no node; FABRIC_ON_UNDRAINED=allow" "$T/fabric-prolog.err"

# A node list scontrol cannot expand: nothing to drain safely, an error (FABRIC_ON_ERROR, hold
# by default).
rc=0
run fabric-prolog SLURM_JOB_ID=44 SLURM_JOB_NODELIST='gpu[001-003]' SCONTROL_FAILS=1 || rc=$?
check "a node list scontrol cannot expand is an error: held by FABRIC_ON_ERROR's default (exit $rc)" \
  test "$rc" = 1 -a ! -s "$T/scontrol.log"
check "and says why" grep -q "job 44: scontrol show hostnames gpu\[001-003\] failed (scontrol: error: Invalid hostlist: gpu\[001-003\]); no fabric verdict (prolog): job held (FABRIC_ON_ERROR=hold)" "$T/fabric-prolog.err"

# A drain that slurmctld refuses: the job would start on the node it should not. Held, and the
# node named, whatever FABRIC_ON_UNDRAINED says.
printf 'gpu002\tstraggler_node\n' > "$T/drain"
rc=0
run fabric-prolog SLURM_JOB_ID=47 SLURM_JOB_NODELIST='gpu[001-003]' SCONTROL_UPDATE_FAILS=1 || rc=$?
check "a failed drain holds the job (exit $rc, want 1)" test "$rc" = 1
check "and names the node it could not drain" grep -q "job 47: scontrol could not drain gpu002" "$T/fabric-prolog.err"

# The controller's breaker held every drain (too many nodes at once): nothing is drained, and
# still the job is held, and counted.
printf '# drain_breaker_open\tgpu001,gpu002,gpu003\n' > "$T/drain"
rc=0
run fabric-prolog SLURM_JOB_ID=49 SLURM_JOB_NODELIST='gpu[001-003]' || rc=$?
check "a breaker that held every drain holds the job, draining nothing (exit $rc, want 1)" \
  test "$rc" = 1 -a ! -s "$T/scontrol.log"
check "and names the nodes it held" \
  grep -q "job 49: the controller's drain breaker held the drains of gpu001,gpu002,gpu003" "$T/fabric-prolog.err"
check "and counts it in the textfile" \
  grep -qx 'fabricctl_gate_errors_total{reason="breaker",action="hold"} 1' "$T/gate.prom"
# Its names all dropped as no plain host name: still held.
printf '# drain_breaker_open\t\n' > "$T/drain"
rc=0
run fabric-prolog SLURM_JOB_ID=52 SLURM_JOB_NODELIST='gpu[001-003]' || rc=$?
check "a breaker line with no plain name still holds the job (exit $rc, want 1)" test "$rc" = 1

# No verdict: who could have caused it decides. A refused sweep (a queue a member filled, a
# certificate without the operator's role, a report cut short) holds the job by default; every
# controller down is the site's choice, the job runs by default. Each is counted for
# node_exporter and logged with the job.
rm -f "$T/gate.prom"
for reason in refused permission incomplete; do
  rc=0
  run fabric-prolog SLURM_JOB_ID=48 SLURM_JOB_NODELIST='gpu[001-003]' FAKE_STATUS=$reason || rc=$?
  check "a sweep without a verdict ($reason) holds the job by default (exit $rc)" test "$rc" = 1
done
check "and says why" grep -q "job 48: the sweep gave no verdict (exit 3); no fabric verdict (incomplete): job held (FABRIC_ON_ERROR=hold)" "$T/fabric-prolog.err"
rc=0
run fabric-prolog SLURM_JOB_ID=49 SLURM_JOB_NODELIST='gpu[001-003]' FAKE_STATUS=unreachable || rc=$?
check "no controller reachable: the job runs by FABRIC_ON_UNREACHABLE's default (exit $rc)" test "$rc" = 0
check "and it says the job runs unchecked" \
  grep -q "job 49: .*no fabric verdict (unreachable): the job runs unchecked (FABRIC_ON_UNREACHABLE=allow)" "$T/fabric-prolog.err"
rc=0
run fabric-prolog SLURM_JOB_ID=50 SLURM_JOB_NODELIST='gpu[001-003]' FAKE_STATUS=unreachable FABRIC_ON_UNREACHABLE=hold || rc=$?
check "FABRIC_ON_UNREACHABLE=hold holds it (exit $rc)" test "$rc" = 1
rc=0
run fabric-prolog SLURM_JOB_ID=51 SLURM_JOB_NODELIST='gpu[001-003]' FAKE_STATUS=refused FABRIC_ON_ERROR=allow || rc=$?
check "FABRIC_ON_ERROR=allow lets a refused one run (exit $rc)" test "$rc" = 0
gate=$(grep -v '^#' "$T/gate.prom" 2>/dev/null | sort | tr '\n' ';')
check "each is counted by reason and action in the textfile ($gate)" test "$gate" = \
  'fabricctl_gate_errors_total{reason="incomplete",action="hold"} 1;fabricctl_gate_errors_total{reason="permission",action="hold"} 1;fabricctl_gate_errors_total{reason="refused",action="allow"} 1;fabricctl_gate_errors_total{reason="refused",action="hold"} 1;fabricctl_gate_errors_total{reason="unreachable",action="allow"} 1;fabricctl_gate_errors_total{reason="unreachable",action="hold"} 1;'

# --- fabric-health on gpu002 ---------------------------------------------------------------------
printf '%s\n' \
  "$(printf 'gpu002\tlink_down;reboot')" \
  "$(printf 'gpu001\tlink_down')" \
  "$(printf 'gpu[001-512]\tlink_down')" \
  "$(printf 'gpu002;rm -rf /\tlink_down')" \
  "$(printf 'gpu002 gpu001\tlink_down')" > "$T/drain"
rc=0
run fabric-health SLURMD_NODENAME=gpu002 || rc=$?
drains=$(cat "$T/scontrol.log")
check "the health check drains gpu002 only, the reason stripped (exit $rc; '$drains')" \
  test "$rc" = 0 -a "$drains" = "update|nodename=gpu002|state=drain|reason=fabricctl check: link_downreboot|"
check "and logs the lines naming anything else" \
  test "$(grep -c "fabric-health: gpu002: ignoring drain line" "$T/fabric-health.err")" = 4
rc=0
run fabric-health SLURMD_NODENAME='gpu[001-512]' || rc=$?
check "a node name that is not a host name drains nothing (exit $rc)" test "$rc" = 0 -a ! -s "$T/scontrol.log"

# --- SIGTERM: the scripts stop fabricctl at once, not when it returns ------------------------------
# stop SCRIPT VAR=VALUE...: starts it with a fabricctl that would sleep 30 s, sends SIGTERM once
# fabricctl runs; sets rc (the script's exit code), took (seconds) and orphan (whether fabricctl
# still runs a second after the script is gone: no, yes, or never started).
stop() {
  local name=$1; shift
  rm -f "$T/fabricctl.pid"
  "${ENV[@]}" "$@" FAKE_SLEEP=30 sh "deploy/slurm/$name" 2> "$T/$name.err" &
  local script=$! started=$SECONDS pid
  for _ in $(seq 1 50); do [[ -s $T/fabricctl.pid ]] && break; sleep 0.1; done
  pid=$(cat "$T/fabricctl.pid" 2> /dev/null)
  kill -TERM "$script"
  rc=0
  wait "$script" || rc=$?
  took=$((SECONDS - started))
  orphan="never started"
  [[ -n $pid ]] || return 0
  orphan=yes
  for _ in $(seq 1 10); do alive "$pid" || { orphan=no; break; }; sleep 0.1; done
}
stop fabric-prolog SLURM_JOB_ID=45 SLURM_JOB_NODELIST='gpu[001-003]'
check "SIGTERM: the prolog exits at once (${took}s), the job held by FABRIC_ON_ERROR's default (exit $rc, want 1)" \
  test "$took" -lt 10 -a "$rc" = 1
check "and its fabricctl is stopped (still running: $orphan)" test "$orphan" = no
check "and it says why" grep -q "job 45: stopped by a signal; the sweep was stopped; no fabric verdict (cancelled): job held (FABRIC_ON_ERROR=hold)" "$T/fabric-prolog.err"
stop fabric-prolog SLURM_JOB_ID=46 SLURM_JOB_NODELIST='gpu[001-003]' FABRIC_ON_ERROR=allow
check "SIGTERM with FABRIC_ON_ERROR=allow: the job runs (exit $rc, want 0; ${took}s)" \
  test "$took" -lt 10 -a "$rc" = 0
stop fabric-health SLURMD_NODENAME=gpu002
check "SIGTERM: the health check exits 0 at once (${took}s, exit $rc) and stops its check (still running: $orphan)" \
  test "$took" -lt 10 -a "$rc" = 0 -a "$orphan" = no

finish
