#!/usr/bin/env bash
# Runs the unit and stage tests under the sanitizers: AddressSanitizer with UndefinedBehavior-
# Sanitizer in one build (--config=asan --config=ubsan), or ThreadSanitizer (--config=tsan).
# Each build keeps its own outputs (.bazelrc), so the normal build is not redone afterwards.
#   scripts/sanitizers.sh [asan|tsan]...   (default: asan; tsan is not yet clean: see README)
# Prints one line per sanitizer, "sanitizer NAME: passed" or "... failed (targets)", and exits
# non-zero when any failed. The integration tests (tests/) start the daemons as separate
# processes and are left to the normal build.
set -uo pipefail
cd "$(dirname "$0")/.."

targets=(//base/... //probes/... //report/... //controller/... //agent/... //cli/...)
which=("$@")
((${#which[@]})) || which=(asan)
rc=0
for name in "${which[@]}"; do
  case $name in
    asan) configs=(--config=asan --config=ubsan) ;;
    tsan) configs=(--config=tsan) ;;
    *) echo "sanitizers: unknown sanitizer '$name' (asan or tsan)" >&2; exit 2 ;;
  esac
  log=$(mktemp)
  bazel test "${configs[@]}" "${targets[@]}" >"$log" 2>&1
  status=$?
  failed=$(grep -E '^//.* (FAILED|TIMEOUT|NO STATUS)' "$log" | awk '{print $1}' | tr '\n' ' ')
  if ((status == 0)); then
    echo "sanitizer $name: passed"
  else
    echo "sanitizer $name: failed (${failed:-the build failed; see below})"
    grep -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|WARNING: ThreadSanitizer|^ERROR:' "$log" | head -20
    rc=1
  fi
  rm -f "$log"
done
exit $rc
