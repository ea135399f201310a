#!/usr/bin/env bash
# Sets up the machine (scripts/setup.sh), builds everything and runs every test with Bazel,
# then prints one line "N passed, N failed, N skipped" counting test cases across all targets.
# Extra arguments go to `bazel test` (e.g. scripts/test.sh --test_output=all).
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

# The RDMA probes run for real inside a soft-RoCE VM when the rdma-vm tool is beside the repo.
vm=$(realpath ../shared/tools/rdma-vm/run-in-rdma-vm.sh 2>/dev/null || true)
vm_env=()
[[ -n $vm && -x $vm ]] && vm_env=(--test_env=FABRIC_RDMA_VM="$vm")

bazel test //... "${vm_env[@]}" "$@"
rc=$?

# A skipped test is listed with its reason. Under CI (CI=true, as root with every package of
# scripts/setup.sh) a skip is a failure unless its reason names hardware this machine lacks:
# a GPU, an RDMA device, CUDA or NCCL. Anything else (a missing program, no namespaces)
# means the test did not run where it must.
skip_list=()
check_skips() {
  local target=$1 log=$2 reason
  while IFS= read -r reason; do
    skip_list+=("$target: ${reason#SKIPPED: }")
    if [[ ${CI:-} == true ]] && ! grep -qiE 'GPU|RDMA device|CUDA|NCCL|rdma-vm' <<<"$reason"; then
      echo "skipped where it must run: $target: ${reason#SKIPPED: }"
      failed=$((failed + 1))
    fi
  done < <(grep '^SKIPPED: ' "$log" || true)
}

# Count test cases from each target's log (Catch2's closing lines); a target whose log has no
# closing line (it crashed, timed out or did not build) counts as one failed test.
passed=0 failed=0 skipped=0
if ! targets=$(bazel query 'tests(//...)' 2>/dev/null) || [[ -z $targets ]]; then
  echo "bazel query found no test targets"
  failed=1
fi
for target in $targets; do
  path=${target#//}; path=${path/://}
  log="bazel-testlogs/$path/test.log"
  if [[ ! -f $log ]]; then failed=$((failed + 1)); echo "no log: $target"; continue; fi
  if line=$(grep -E '^All tests passed \(' "$log" | tail -1) && [[ -n $line ]]; then
    cases=$(sed -E 's/.* in ([0-9]+) test case.*/\1/' <<<"$line")
    p=$cases f=0
  elif line=$(grep -E '^test cases: ' "$log" | tail -1) && [[ -n $line ]]; then
    p=$(sed -nE 's/.*\| *([0-9]+) passed.*/\1/p' <<<"$line"); p=${p:-0}
    f=$(sed -nE 's/.*\| *([0-9]+) failed.*/\1/p' <<<"$line"); f=${f:-0}
  elif line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1) && [[ -n $line ]]; then
    # Shell tests close with the plain "N passed, N failed" line.
    p=$(sed -E 's/^([0-9]+) passed.*/\1/' <<<"$line")
    f=$(sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")
  elif grep -q '^SKIPPED: ' "$log"; then
    p=1 f=0  # a shell test that skipped whole: counted once, as skipped below
  else
    p=0 f=1; echo "no test summary: $target"
  fi
  # Test cases that skipped for want of hardware say so with a SKIPPED: line (tests/skip.h).
  s=$(grep -c '^SKIPPED: ' "$log" || true)
  passed=$((passed + p - s)) failed=$((failed + f)) skipped=$((skipped + s))
  check_skips "$target" "$log"
done
# The README's install section, run as written (it installs the package into this machine and
# purges it again, so it runs here, outside Bazel's sandbox, as root only).
install_log=bazel-testlogs/install_test.log
bash tests/install_test.sh > "$install_log" 2>&1
install_rc=$?
if grep -q '^SKIPPED: ' "$install_log"; then
  skipped=$((skipped + 1))
  check_skips tests/install_test.sh "$install_log"
elif line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$install_log" | tail -1) && [[ -n $line ]]; then
  passed=$((passed + $(sed -E 's/^([0-9]+) passed.*/\1/' <<<"$line")))
  failed=$((failed + $(sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")))
else
  failed=$((failed + 1))
fi
if ((install_rc != 0)); then
  echo "tests/install_test.sh failed (log: $install_log):"
  grep -E '^FAIL' "$install_log" || tail -5 "$install_log"
  rc=1
fi

# The unit and stage tests again under AddressSanitizer with UBSan, and ThreadSanitizer: one
# case each (FABRIC_SANITIZERS=0 leaves them out of a quick local run).
if [[ ${FABRIC_SANITIZERS:-1} != 0 ]]; then
  while IFS= read -r line; do
    echo "$line"
    case $line in
      "sanitizer "*": passed") passed=$((passed + 1)) ;;
      "sanitizer "*": failed"*) failed=$((failed + 1)) rc=1 ;;
    esac
  done < <(bash scripts/sanitizers.sh 2>&1)
fi

# Clang's thread-safety analysis of the project's sources (scripts/thread_safety.sh): one case.
ts_log=$(mktemp)
if bash scripts/thread_safety.sh >"$ts_log" 2>&1; then
  passed=$((passed + 1))
  tail -1 "$ts_log"
else
  failed=$((failed + 1)) rc=1
  tail -40 "$ts_log"
fi
rm -f "$ts_log"

# The habits (scripts/lint.py: file and function lengths, parameters, finding kinds decided
# outside controller/verdict/, statistical constants, test helpers): one case.
lint_log=$(mktemp)
if python3 scripts/lint.py >"$lint_log" 2>&1; then
  passed=$((passed + 1))
else
  failed=$((failed + 1)) rc=1
fi
tail -21 "$lint_log"
rm -f "$lint_log"

# The house layout (scripts/format.sh: clang-format over every tracked C++ file): one case.
fmt_log=$(mktemp)
if bash scripts/format.sh >"$fmt_log" 2>&1; then
  passed=$((passed + 1))
else
  failed=$((failed + 1)) rc=1
fi
tail -21 "$fmt_log"
rm -f "$fmt_log"

if ((${#skip_list[@]})); then
  echo "skipped:"
  printf '  %s\n' "${skip_list[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
if ((rc == 0 && failed > 0)); then rc=1; fi
exit $rc
