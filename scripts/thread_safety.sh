#!/usr/bin/env bash
# Clang's thread-safety analysis over the project's own sources: every shared member is
# annotated (ABSL_GUARDED_BY, ABSL_EXCLUSIVE_LOCKS_REQUIRED, on absl::Mutex) and a use without
# its lock is an error (-Werror=thread-safety). A syntax-only pass with clang beside the GCC
# build: it needs the generated headers (the protos' .pb.h, base/version.h) that a build of
# //... leaves in bazel-bin, and costs a fraction of a second compile. Prints
# "thread-safety: clean (N files)" or the diagnostics, and exits non-zero on any.
#   scripts/thread_safety.sh [FILE.cc...]   (default: every .cc of the project that names a lock)
set -uo pipefail
cd "$(dirname "$0")/.."
CLANG=${CLANG:-clang++}
command -v "$CLANG" >/dev/null || { echo "thread-safety: $CLANG not found (apt-get install clang)" >&2; exit 2; }
[[ -f bazel-bin/proto/config.pb.h && -f bazel-bin/base/version.h ]] ||
  { echo "thread-safety: build first (bazel build //...): the generated headers are missing" >&2; exit 2; }
files=("$@")
if ((${#files[@]} == 0)); then
  # The analysis can only speak of a file whose code names a capability: a lock annotation or
  # an absl::Mutex in the file itself or in a project header it includes, directly or through
  # other project headers (a guarded member, an annotated function, a lock to take). The other
  # files are left out: they cost the pass most of its time and cannot fail it.
  mapfile -t files < <(python3 - <<'PY'
import os, re, subprocess
listed = subprocess.run(
    ["git", "ls-files", "agent/*.cc", "base/*.cc", "cli/*.cc", "controller/*.cc", "probes/*.cc",
     "report/*.cc", "bench/*.cc", "tests/*.cc", "*.h"], capture_output=True, text=True,
    check=True).stdout.split()
capability = re.compile(r"ABSL_[A-Z_]*(GUARDED_BY|LOCKS?_|LOCKABLE|LOCK_FUNCTION|ACQUIRED_|"
                        r"THREAD_SAFETY)|absl::Mutex|MutexLock|absl::CondVar")
include = re.compile(r'#include "([^"]+)"')
text = {f: open(f, errors="ignore").read() for f in listed if os.path.isfile(f)}
names = {f: bool(capability.search(t)) for f, t in text.items()}
includes = {f: [i for i in include.findall(t) if i in text] for f, t in text.items()}
def names_capability(root):  # the file and every project header it reaches
    seen, pending = {root}, [root]
    while pending:
        f = pending.pop()
        if names[f]:
            return True
        for i in includes[f]:
            if i not in seen:
                seen.add(i)
                pending.append(i)
    return False
for f in listed:
    if f.endswith(".cc") and names_capability(f):
        print(f)
PY
  )
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
