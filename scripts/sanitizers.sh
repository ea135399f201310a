#!/usr/bin/env bash
# Runs the unit and stage tests under the sanitizers: AddressSanitizer with UndefinedBehavior-
# Sanitizer in one build (--config=asan --config=ubsan), or ThreadSanitizer (--config=tsan).
# Each build keeps its own outputs (.bazelrc), so the normal build is not redone afterwards.
#   scripts/sanitizers.sh [asan|tsan]...   (default: both)
# Prints one line per sanitizer, "sanitizer NAME: passed" or "... failed (targets)", and exits
# non-zero when any failed. The integration tests (tests/) start the daemons as separate
# processes and are left to the normal build.
set -uo pipefail
cd "$(dirname "$0")/.."

targets=(//base/... //probes/... //report/... //controller/... //agent/... //cli/...)
which=("$@")
((${#which[@]})) || which=(asan tsan)
rc=0
for name in "${which[@]}"; do
  case $name in
    asan) configs=(--config=asan --config=ubsan) ;;
    # Debian's gRPC and abseil are not built with TSan: they hand their state between their own
    # threads through abseil's futex-based locks, which TSan cannot see, so what they allocate
    # and copy on two threads would look like races (a status allocated on the caller's thread,
    # freed on gRPC's event-engine thread). ignore_noninstrumented_modules has TSan ignore the
    # calls uninstrumented libraries make into its runtime (malloc, memcpy, epoll); the
    # project's own code, its locks and its threads stay checked. Nothing is suppressed.
    tsan) configs=(--config=tsan "--test_env=TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1") ;;
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
