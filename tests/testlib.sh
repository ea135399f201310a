# Shared by the shell tests (sourced): PASS/FAIL lines, the closing "N passed, N failed" line
# that scripts/test.sh counts, and the skip for machines that cannot run a practice lab.
pass=0 fail=0
ok() { echo "PASS: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
check() {  # check DESCRIPTION COMMAND...: PASS when COMMAND succeeds
  local what=$1; shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
finish() {  # the closing line; exits 0 only when nothing failed
  echo "$pass passed, $fail failed"
  [[ $fail -eq 0 ]]
  exit $?
}
# require_programs PROGRAM...: exits 0 with a SKIPPED: line naming the first one not installed
# (on PATH or in /usr/sbin, where Debian puts daemons).
require_programs() {
  local program
  for program in "$@"; do
    if ! command -v "$program" >/dev/null && [[ ! -x /usr/sbin/$program ]]; then
      echo "SKIPPED: $program is not installed (scripts/setup.sh installs it)"
      exit 0
    fi
  done
}
# require_lab WHAT: exits 0 with a SKIPPED: line unless this is root with iproute2 and the
# machine allows network namespaces (the practice lab's hosts).
require_lab() {
  if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
    echo "SKIPPED: $1 needs root and iproute2 (network namespaces, tc)"
    exit 0
  fi
  if ! ip netns add "fabtest-probe-$$" 2>/dev/null; then
    echo "SKIPPED: this machine does not allow network namespaces"
    exit 0
  fi
  ip netns del "fabtest-probe-$$"
}
# fake_scontrol DIR NODE...: DIR/scontrol, a stand-in for Slurm's: `show hostnames` expands any
# list to NODE..., anything else (an update: a drain) is recorded in $FAKE_LOG, one call a line.
fake_scontrol() {
  local dir=$1; shift
  mkdir -p "$dir"
  {
    echo '#!/bin/sh'
    echo 'case "$1 $2" in'
    printf '  "show hostnames") printf '"'"'%%s\\n'"'"' %s ;;\n' "$*"
    echo '  *) printf '"'"'%s|'"'"' "$@" >> "$FAKE_LOG"; echo >> "$FAKE_LOG" ;;'
    echo 'esac'
  } > "$dir/scontrol"
  chmod +x "$dir/scontrol"
}
