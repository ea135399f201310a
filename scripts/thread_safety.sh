#!/usr/bin/env bash
# Clang's thread-safety analysis over the project's own sources: every shared member is
# annotated (ABSL_GUARDED_BY, ABSL_EXCLUSIVE_LOCKS_REQUIRED, on absl::Mutex) and a use without
# its lock is an error (-Werror=thread-safety). A syntax-only pass with clang beside the GCC
# build: it needs the generated headers (the protos' .pb.h, base/version.h) that a build of
# //... leaves in bazel-bin, and costs a fraction of a second compile. Prints
# "thread-safety: clean (N files)" or the diagnostics, and exits non-zero on any.
#   scripts/thread_safety.sh [FILE.cc...]   (default: every .cc under the project's packages)
set -uo pipefail
cd "$(dirname "$0")/.."
CLANG=${CLANG:-clang++}
command -v "$CLANG" >/dev/null || { echo "thread-safety: $CLANG not found (apt-get install clang)" >&2; exit 2; }
[[ -f bazel-bin/proto/config.pb.h && -f bazel-bin/base/version.h ]] ||
  { echo "thread-safety: build first (bazel build //...): the generated headers are missing" >&2; exit 2; }
files=("$@")
if ((${#files[@]} == 0)); then
  mapfile -t files < <(git ls-files 'agent/*.cc' 'base/*.cc' 'cli/*.cc' 'controller/*.cc' \
    'probes/*.cc' 'report/*.cc' 'bench/*.cc' 'tests/*.cc')
fi
flags=(-std=c++17 -fsyntax-only -I. -Ibazel-bin
  -DSPDLOG_SHARED_LIB -DSPDLOG_COMPILED_LIB -DSPDLOG_FMT_EXTERNAL
  -Wno-everything -Wthread-safety -Werror=thread-safety)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Two at a time (the CI machine's cores); each file's diagnostics are written whole.
printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc)" -I{} sh -c 'out=$("$0" "$@" {} 2>&1) || printf "%s\n" "$out"' "$CLANG" "${flags[@]}" >"$log"
if [[ -s $log ]]; then
  cat "$log"
  echo "thread-safety: $(grep -c 'error:' "$log") errors"
  exit 1
fi
echo "thread-safety: clean (${#files[@]} files)"
