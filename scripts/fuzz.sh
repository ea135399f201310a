#!/usr/bin/env bash
# Builds the audit parsers' fuzz target with clang's libFuzzer and AddressSanitizer and runs it
# for RUNS inputs (default 1,000,000), starting from the seeds of fuzz_driver.cc and the module
# EEPROM dumps of tests/fixtures/make_eeprom.py. Writes the outcome to bench/results/fuzz.txt.
#
#   scripts/fuzz.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-1000000}
command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (apt-get install clang)" >&2; exit 3; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The NCCL log parser reports findings as protos: generate the two it needs.
protoc -I. --cpp_out="$out" proto/finding.proto proto/probe.proto
clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -I. -I"$out" \
  probes/audit/parsers_fuzz.cc probes/audit/parsers.cc probes/audit/dcb.cc \
  probes/audit/module_eeprom.cc probes/audit/ethtool_netlink.cc probes/audit/fec_stats.cc \
  probes/gpu/nccl_log.cc probes/tcp/host_drops.cc probes/sysfs/sysfs_root.cc \
  "$out/proto/finding.pb.cc" "$out/proto/probe.pb.cc" -o "$out/parsers_fuzz" -lprotobuf \
  $(pkg-config --libs absl_statusor absl_strings)
mkdir -p "$out/corpus"
i=0
for seed in "4: ACTIVE" "400 Gb/sec (4X NDR)" "fe80:0000:0000:0000:ba59:9fff:fe3e:1a2b" \
            "Max locked memory         unlimited            unlimited            bytes" "9000" "^mlx5_0:1,mlx5_1" \
            "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA" \
            "h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.4.7<0>"; do
  printf '%s\n' "$seed" > "$out/corpus/seed$i"; i=$((i + 1))
done
python3 tests/fixtures/make_eeprom.py --raw "$out/corpus" >/dev/null
# Long enough for a CMIS dump up to page 11h (768 bytes).
log=$("$out/parsers_fuzz" -runs="$RUNS" -max_len=1024 "$out/corpus" 2>&1) || { echo "$log" | tail -30; exit 1; }
summary=$(grep -E "^(#[0-9]+\s+DONE|Done)" <<<"$log" | tail -2)
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "command: scripts/fuzz.sh $RUNS  (clang libFuzzer + ASan + UBSan)"
  echo "parsers_fuzz: $summary"
} | tee bench/results/fuzz.txt
