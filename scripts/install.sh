#!/usr/bin/env bash
# Installs fabricctl from this checkout without the Debian package: the same files in the same
# places (binaries in $PREFIX/bin, units, defaults, the example configuration and the daemons'
# user), leaving an existing configuration alone. Run as root:
#   sudo bash scripts/install.sh            (PREFIX=/usr/local by default)
# Remove with: sudo bash scripts/install.sh --uninstall
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX=${PREFIX:-/usr/local}
UNITS=/etc/systemd/system
[[ $(id -u) -eq 0 ]] || { echo "install: run as root (sudo bash scripts/install.sh)" >&2; exit 1; }

if [[ ${1:-} == --uninstall ]]; then
  if [[ -d /run/systemd/system ]]; then
    systemctl disable --now fabric-agent.service fabric-controller.service 2>/dev/null || true
  fi
  rm -f "$PREFIX"/bin/{fabricctl,fabric-agent,fabric-controller} \
    "$UNITS"/fabric-agent.service "$UNITS"/fabric-controller.service
  [[ -d /run/systemd/system ]] && systemctl daemon-reload
  echo "install: removed the binaries and units; /etc/fabricctl, /etc/default/fabric-* and /var/lib/fabricctl are kept"
  exit 0
fi

bash scripts/setup.sh > /dev/null
bazel build //cli:fabricctl //agent:fabric-agent //controller:fabric-controller 2>&1 |
  grep -vE '^(INFO|Loading|Analyzing|Target|  bazel-bin|\[)' >&2 || true
install -D -m 0755 bazel-bin/cli/fabricctl "$PREFIX/bin/fabricctl"
install -D -m 0755 bazel-bin/agent/fabric-agent "$PREFIX/bin/fabric-agent"
install -D -m 0755 bazel-bin/controller/fabric-controller "$PREFIX/bin/fabric-controller"
for unit in fabric-agent fabric-controller; do
  sed "s|/usr/bin/|$PREFIX/bin/|" "deploy/systemd/$unit.service" > "$UNITS/$unit.service"
  chmod 0644 "$UNITS/$unit.service"
  # A configuration file is never overwritten: the operator's edits win.
  [[ -e /etc/default/$unit ]] || install -D -m 0644 "deploy/default/$unit" "/etc/default/$unit"
done
[[ -e /etc/fabricctl/fabricctl.yaml ]] || install -D -m 0644 deploy/fabricctl.yaml /etc/fabricctl/fabricctl.yaml
install -D -m 0644 deploy/debian/sysusers.conf /usr/lib/sysusers.d/fabricctl.conf
if ! getent passwd fabricctl > /dev/null; then
  if command -v systemd-sysusers > /dev/null; then
    systemd-sysusers /usr/lib/sysusers.d/fabricctl.conf
  else
    useradd --system --home-dir /var/lib/fabricctl --no-create-home --shell /usr/sbin/nologin fabricctl
  fi
fi
[[ -d /run/systemd/system ]] && systemctl daemon-reload
echo "install: $PREFIX/bin/{fabricctl,fabric-agent,fabric-controller}, units in $UNITS;" \
  "next: edit /etc/fabricctl/fabricctl.yaml, then systemctl enable --now fabric-controller (one node)" \
  "and fabric-agent (every node)"
