#!/usr/bin/env bash
# The README's install section, run as written on this machine, then checked: the package's
# metadata and contents (dpkg-deb), the installed units (systemd-analyze verify), both daemons
# started from the installed files with the installed configuration and defaults (as the
# package's user, the state directory as systemd would give it), a sweep between two installed
# agents in network namespaces (the practice lab with FABRIC_BIN=/usr/bin), and a purge that
# leaves nothing behind (no unit enabled either). Installs into this machine: needs root and apt; run by scripts/test.sh
# after the Bazel tests (it cannot run inside Bazel's sandbox). Ends "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

pass=0 fail=0
ok() { echo "PASS: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

if [[ $(id -u) -ne 0 ]] || ! command -v apt-get > /dev/null; then
  echo "SKIPPED: installing the package needs root and apt"
  exit 0
fi
T=$(mktemp -d /tmp/fabricctl-install.XXXXXX)
chmod 0755 "$T"  # the daemons run as the package's user below
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null; done
  FABRIC_BIN=/usr/bin FABRIC_LAB_DIR=$T/lab FABRIC_LAB_PREFIX=fabinst bash scripts/lab.sh down quiet > /dev/null 2>&1
  rm -rf "$T"
}
trap cleanup EXIT
wait_for_line() {  # FILE TEXT SECONDS
  local deadline=$((SECONDS + $3))
  while ((SECONDS < deadline)); do grep -q "$2" "$1" 2> /dev/null && return 0; sleep 0.1; done
  return 1
}
version=$(sed -nE 's/^VERSION = "(.*)"/\1/p' version.bzl)

# --- The README's two lines ------------------------------------------------------------------------
deb=$(bash scripts/package.sh)
check "scripts/package.sh builds dist/fabricctl_${version}_amd64.deb" test "$deb" = "dist/fabricctl_${version}_amd64.deb" -a -f "$deb"
info=$(dpkg-deb --info "$deb")
check "dpkg-deb --info: package and version" grep -q "^ Version: $version$" <<< "$info"
check "dpkg-deb --info: Depends on the libraries it links" grep -qE "^ Depends: .*libgrpc\+\+.*libsqlite3.*libsystemd0" <<< "$info"
contents=$(dpkg-deb --contents "$deb" | awk '{print $NF}')
for f in usr/bin/fabricctl usr/bin/fabric-agent usr/bin/fabric-controller \
  lib/systemd/system/fabric-agent.service lib/systemd/system/fabric-controller.service \
  etc/default/fabric-agent etc/default/fabric-controller etc/fabricctl/fabricctl.yaml \
  usr/lib/sysusers.d/fabricctl.conf usr/share/man/man1/fabricctl.1.gz \
  usr/share/man/man8/fabric-agent.8.gz usr/share/man/man8/fabric-controller.8.gz \
  etc/default/fabric-slurm usr/lib/fabricctl/slurm/fabric-prolog usr/lib/fabricctl/slurm/fabric-health \
  usr/share/fabricctl/prometheus/fabricctl-rules.yml usr/share/fabricctl/grafana/fabricctl.json; do
  check "dpkg-deb --contents: /$f" grep -qx "./$f" <<< "$contents"
done
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$deb" > "$T/apt.log" 2>&1; then
  bad "apt-get install ./$deb: $(tail -3 "$T/apt.log")"
  echo "$pass passed, $fail failed"
  exit 1
fi
ok "apt-get install ./$deb"

# --- What the package installed ---------------------------------------------------------------------
check "dpkg: fabricctl $version installed" test "$(dpkg-query -W -f='${Status} ${Version}' fabricctl)" = "install ok installed $version"
conffiles=$(dpkg-query -W -f='${Conffiles}' fabricctl)
for f in /etc/fabricctl/fabricctl.yaml /etc/default/fabric-agent /etc/default/fabric-controller \
  /etc/default/fabric-slurm; do
  check "conffile $f" grep -q " $f " <<< "$conffiles"
done
check "the Slurm scripts are executable" test -x /usr/lib/fabricctl/slurm/fabric-prolog -a -x /usr/lib/fabricctl/slurm/fabric-health
for f in /etc/fabricctl/fabricctl.yaml /etc/default/fabric-agent /etc/default/fabric-controller \
  /etc/default/fabric-slurm; do
  check "$f is readable by root and group fabricctl only ($(stat -c '%a %U:%G' "$f"))" \
    test "$(stat -c '%a %U:%G' "$f")" = "640 root:fabricctl"
done
# The installed prolog with the installed settings, as slurmctld would start it (minimal PATH, no
# job's node list): an error of its own, logged, and by the default FABRIC_ON_ERROR the job is
# held: no verdict is no pass.
rc=0
env -i PATH=/usr/bin:/bin SLURM_JOB_ID=7 FABRIC_GATE_METRICS= /usr/lib/fabricctl/slurm/fabric-prolog 2> "$T/prolog.err" || rc=$?
check "the installed prolog without a node list: exit 1 (FABRIC_ON_ERROR=hold), saying why ($rc)" \
  bash -c "[[ $rc == 1 ]] && grep -q 'job 7: neither SLURM_JOB_NODELIST nor SLURM_NODELIST is set; not sweeping; no fabric verdict (prolog): job held (FABRIC_ON_ERROR=hold)' '$T/prolog.err'"
check "the daemons' user exists" bash -c 'getent passwd fabricctl > /dev/null'
check "fabricctl --version on the PATH says $version" test "$(fabricctl --version)" = "fabricctl $version"
if systemd-analyze verify --man=no /lib/systemd/system/fabric-agent.service \
  /lib/systemd/system/fabric-controller.service > "$T/verify.log" 2>&1 && [[ ! -s $T/verify.log ]]; then
  ok "systemd-analyze verify: both units"
else
  bad "systemd-analyze verify: $(cat "$T/verify.log")"
fi

# --- Both daemons from the installed files, with the installed configuration and defaults -----------
# As systemd would run them: the package's user, $STATE_DIRECTORY for the controller's state.
# Run in the background only: exec makes $! the daemon itself.
as_user() { exec setpriv --reuid=fabricctl --regid=fabricctl --init-groups -- "$@"; }
state=$T/state
mkdir -p "$state" && chown fabricctl: "$state"
# shellcheck disable=SC1091
. /etc/default/fabric-controller
# shellcheck disable=SC1091
. /etc/default/fabric-agent
# shellcheck disable=SC2086
as_user env STATE_DIRECTORY="$state" /usr/bin/fabric-controller $FABRIC_CONTROLLER_ARGS \
  > "$T/controller.out" 2> "$T/controller.log" &
pids+=($!) controller=$!
wait_for_line "$T/controller.out" "listening on" 10
# shellcheck disable=SC2086
as_user /usr/bin/fabric-agent ${FABRIC_AGENT_ARGS//\/var\/lib\/fabricctl/$state} \
  > "$T/agent.out" 2> "$T/agent.log" &
pids+=($!) agent=$!
check "the installed agent registers with the controller the installed configuration names" \
  wait_for_line "$T/agent.out" "registered with 127.0.0.1:7400" 15
check "the controller keeps its database in \$STATE_DIRECTORY" test -f "$state/controller.db"
check "fabricctl (installed configuration) lists the node online" \
  bash -c 'fabricctl nodes | grep -q " online "'
check "the controller's /metrics answers on the installed address" \
  python3 -c 'import urllib.request; assert b"fabricctl_nodes" in urllib.request.urlopen("http://127.0.0.1:9400/metrics", timeout=5).read()'
kill -TERM "$agent" "$controller"
wait "$controller"; rc_c=$?
wait "$agent"; rc_a=$?
check "SIGTERM: both daemons exit 0 ($rc_c, $rc_a)" test "$rc_c$rc_a" = 00
[[ $fail -gt 0 ]] && { echo "--- controller log"; tail -5 "$T/controller.log"; echo "--- agent log"; tail -5 "$T/agent.log"; }

# --- A sweep between two installed agents in network namespaces -------------------------------------
lab() { FABRIC_BIN=/usr/bin FABRIC_LAB_DIR=$T/lab FABRIC_LAB_PREFIX=fabinst bash scripts/lab.sh "$@"; }
if lab up 2 --rate none > "$T/lab.log" 2>&1; then
  lab sweep --probes tcp_bw,tcp_lat --duration 300ms --format json --output "$T/sweep.json" 2>> "$T/lab.log"
  rc=$?
  # Two unshaped hosts: a direction of the pair may differ from the other by more than
  # min_effect (a warning: one peer cannot tell node from link); the subject is that the
  # installed binaries sweep and give a verdict, not "could not run" (3).
  check "a sweep between two installed agents gives a verdict (exit $rc)" test "$rc" -le 2
  check "...and measured the pair" python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(not r.get("health", {}).get("pairs"))' "$T/sweep.json"
  lab down quiet
else
  bad "lab up 2 with the installed binaries: $(tail -3 "$T/lab.log")"
fi

# --- Purge ----------------------------------------------------------------------------------------
# Both units enabled first, as the README's install section has an administrator do, so that the
# purge has something to disable (by hand where systemctl cannot without a running systemd).
units=(fabric-agent.service fabric-controller.service)
systemctl enable "${units[@]}" > /dev/null 2>&1
for unit in "${units[@]}"; do
  link=/etc/systemd/system/multi-user.target.wants/$unit
  [[ -L $link ]] || { mkdir -p "${link%/*}" && ln -s "/lib/systemd/system/$unit" "$link"; }
done
wanted() {  # the units' links in /etc/systemd/system/*.wants: enabled, whether systemd runs or not
  find /etc/systemd/system -path '*.wants/fabric-agent.service' -o -path '*.wants/fabric-controller.service' 2> /dev/null
}
check "both units enabled before the purge ($(wanted | paste -sd' '))" test "$(wanted | wc -l)" = 2
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq fabricctl > "$T/purge.log" 2>&1
check "apt-get purge removes the binaries, units and configuration" \
  test ! -e /usr/bin/fabricctl -a ! -e /lib/systemd/system/fabric-agent.service -a ! -e /etc/fabricctl/fabricctl.yaml
left=$(wanted | paste -sd' ')
check "apt-get purge leaves neither unit enabled ($left)" test -z "$left"
echo "$pass passed, $fail failed"
((fail == 0))
