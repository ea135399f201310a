#!/usr/bin/env bash
# The house layout (.clang-format: Google style, 100 columns), kept by the tool rather than by
# hand: `scripts/format.sh` lists every tracked C++ file clang-format would change and exits 1
# when there is one; `scripts/format.sh --fix` formats them in place. scripts/test.sh runs the
# check, so an unformatted file fails CI. clang-format from Debian 12 (14), as setup.sh installs it.
set -uo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format: clang-format is not installed (scripts/setup.sh installs it)"; exit 2; }
mapfile -t files < <(git ls-files '*.cc' '*.h' | grep -v '^third_party/')
if [[ ${1:-} == --fix ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "unformatted: $f (scripts/format.sh --fix)"
    bad=$((bad + 1))
  fi
done
echo "format: ${#files[@]} files, $bad unformatted"
((bad == 0))
