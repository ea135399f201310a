#!/usr/bin/env bash
# The shipped alert rules: promtool's syntax check and its unit tests (fabricctl-rules_test.yml).
set -uo pipefail
cd deploy/prometheus
if ! command -v promtool >/dev/null; then
  echo "SKIPPED: promtool is not installed (apt install prometheus; scripts/setup.sh does)"
  exit 0
fi
pass=0 fail=0
check() {
  local what=$1; shift
  if "$@"; then echo "PASS: $what"; pass=$((pass + 1)); else echo "FAIL: $what"; fail=$((fail + 1)); fi
}
check "promtool check rules" promtool check rules fabricctl-rules.yml
check "promtool test rules" promtool test rules fabricctl-rules_test.yml
check "the example prometheus.yml" promtool check config prometheus.yml
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
