#!/usr/bin/env bash
# Builds the audit parsers' fuzz target with clang's libFuzzer and AddressSanitizer and runs it
# for RUNS inputs (default 1,000,000), starting from the seeds of fuzz_driver.cc. Writes the
# outcome to bench/results/fuzz.txt.
#
#   scripts/fuzz.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-1000000}
command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (apt-get install clang)" >&2; exit 3; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -I. \
  probes/audit/parsers_fuzz.cc probes/audit/parsers.cc probes/audit/dcb.cc -o "$out/parsers_fuzz" \
  $(pkg-config --libs absl_statusor absl_strings)
mkdir -p "$out/corpus"
i=0
for seed in "4: ACTIVE" "400 Gb/sec (4X NDR)" "fe80:0000:0000:0000:ba59:9fff:fe3e:1a2b" \
            "Max locked memory         unlimited            unlimited            bytes" "9000" "^mlx5_0:1,mlx5_1"; do
  printf '%s\n' "$seed" > "$out/corpus/seed$i"; i=$((i + 1))
done
log=$("$out/parsers_fuzz" -runs="$RUNS" -max_len=256 "$out/corpus" 2>&1) || { echo "$log" | tail -30; exit 1; }
summary=$(grep -E "^(#[0-9]+\s+DONE|Done)" <<<"$log" | tail -2)
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "command: scripts/fuzz.sh $RUNS  (clang libFuzzer + ASan + UBSan)"
  echo "parsers_fuzz: $summary"
} | tee bench/results/fuzz.txt
