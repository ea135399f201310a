#!/usr/bin/env bash
# scripts/lint.py, the habits' check that CI runs over the repository, on planted offences in a
# tree of its own: a function of 81 lines, one of 7 parameters, a file of 601 lines, a finding
# kind named in the sweep and in the client, a statistical constant outside robust_stats.h and
# a test reading TEST_TMPDIR itself each fail it, naming the file and line; their allowed
# neighbours (80 lines, 6 parameters, 600 lines, the trust boundary, the verdict package) pass.
set -uo pipefail
# shellcheck source=tests/testlib.sh
source tests/testlib.sh

LINT=$PWD/scripts/lint.py
TREE=${TEST_TMPDIR:-/tmp}/lint-tree
rm -rf "$TREE"
mkdir -p "$TREE"/{controller/sweep,controller/verdict,cli,base,probes,report,agent,tests}

function_of() {  # NAME BODY_LINES PARAMS: a function defined at column 0
  local name=$1 lines=$2 params=$3 args="" i
  for ((i = 0; i < params; ++i)); do args+="${args:+, }int a$i"; done
  echo "int $name($args) {"
  for ((i = 0; i < lines - 1; ++i)); do echo "  int x$i = $i;"; done
  echo "  return 0;"
  echo "}"
}

lint_of() {  # the problems lint finds in the tree, one per line
  python3 "$LINT" "$TREE" | grep -v '^lint: '
}

# Allowed: 80 lines, 6 parameters, 600 lines, kinds where rules live.
{ function_of Long 80 6; } > "$TREE/base/fine.cc"
{ for i in $(seq 1 600); do echo "// $i"; done; } > "$TREE/report/six_hundred.h"
echo 'auto k = report::kind::kSlowLink;' > "$TREE/controller/verdict/rule.cc"
echo 'auto k = report::kind::kSlowLink;' > "$TREE/controller/sweep/trust.cc"
echo 'inline constexpr double kMinLogSpread = 0.01;' > "$TREE/controller/verdict/robust_stats.h"
echo 'const char* tmp = getenv("TEST_TMPDIR");' > "$TREE/tests/testing_fixture_test.cc"
mkdir -p "$TREE/tests/testing" && echo 'const char* t = getenv("TEST_TMPDIR");' > "$TREE/tests/testing/testing.cc"
python3 "$LINT" "$TREE" > "$TREE.out" 2>&1
code=$?
check "what the habits allow passes (exit $code)" grep -q '^lint: 1 problem' "$TREE.out"
check "a test reading TEST_TMPDIR itself is named" \
  grep -q '^tests/testing_fixture_test.cc: reads TEST_TMPDIR itself' "$TREE.out"
rm "$TREE/tests/testing_fixture_test.cc"
python3 "$LINT" "$TREE" > "$TREE.out" 2>&1
check "the allowed tree exits 0" test $? -eq 0

# Each offence, alone, fails it and is named.
offence() {  # DESCRIPTION FILE EXPECTED_LINE_REGEX, the file's content on stdin
  local what=$1 file=$2 want=$3
  cat > "$TREE/$file"
  local got
  got=$(lint_of)
  python3 "$LINT" "$TREE" > /dev/null 2>&1
  local code=$?
  if [[ $code -eq 1 ]] && grep -qE "$want" <<<"$got"; then
    ok "$what: exit 1, [$got]"
  else
    bad "$what: exit $code, [$got] (want a line matching '$want')"
  fi
  rm "$TREE/$file"
}
offence "a function of 81 lines" probes/long.cc \
  '^probes/long.cc:1: TooLong is 81 lines long, more than 80$' < <(function_of TooLong 81 1)
offence "a function of 7 parameters" agent/many.cc \
  '^agent/many.cc:1: TooMany takes 7 parameters, more than 6' < <(function_of TooMany 3 7)
offence "a file of 601 lines" report/big.h '^report/big.h: 601 lines, more than 600' \
  < <(for i in $(seq 1 601); do echo "// $i"; done)
offence "a kind named in the sweep" controller/sweep/stage.cc \
  '^controller/sweep/stage.cc:1: names a finding kind' <<<'auto k = report::kind::kSlowLink;'
offence "a kind named in the client" cli/decide.cc '^cli/decide.cc:1: names a finding kind' \
  <<<'auto k = report::kind::kSlowLink;'
offence "a statistical constant outside robust_stats.h" controller/verdict/pass.cc \
  '^controller/verdict/pass.cc:1: a statistical constant' <<<'constexpr double kNoiseFloor = 0.01;'
offence "a test reading TEST_TMPDIR" base/thing_test.cc '^base/thing_test.cc: reads TEST_TMPDIR itself' \
  <<<'std::string p = std::getenv("TEST_TMPDIR");'
finish
