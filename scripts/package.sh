#!/usr/bin/env bash
# Builds fabricctl's Debian package and leaves it in dist/ (printing its path):
#   bash scripts/package.sh && sudo apt install ./dist/fabricctl_*_amd64.deb
# Sets up the build machine first (scripts/setup.sh) when anything is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh > /dev/null
bazel build //deploy/debian:deb 2>&1 | grep -vE '^(INFO|Loading|Analyzing|Target|  bazel-bin|\[)' >&2 || true
deb=$(ls bazel-bin/deploy/debian/fabricctl_*_amd64.deb 2>/dev/null | head -1)
[[ -n $deb ]] || { echo "package: bazel build //deploy/debian:deb produced no package" >&2; exit 1; }
mkdir -p dist
rm -f dist/fabricctl_*_amd64.deb
install -m 0644 "$deb" dist/
echo "dist/$(basename "$deb")"
