#!/usr/bin/env bash
# Installs every Debian 12 package that fabricctl's build, tests and benchmarks need.
# Idempotent: when everything is present it changes nothing and runs no apt-get at all.
set -euo pipefail

PACKAGES=(
  # build
  bazel-bootstrap bazel-rules-java bazel-platforms g++ git ca-certificates
  protobuf-compiler protobuf-compiler-grpc libprotobuf-dev libgrpc++-dev libgrpc-dev
  libabsl-dev libspdlog-dev libfmt-dev libcli11-dev catch2 libyaml-cpp-dev
  libsqlite3-dev libssl-dev libibverbs-dev librdmacm-dev rdma-core ibverbs-providers
  libsystemd-dev libcivetweb-dev liblldpctl-dev libpq-dev
  # the Debian package (scripts/package.sh): dependencies, man pages; its units' checks
  dpkg-dev help2man systemd
  # tests: network-namespace lab, TLS material, report validators
  iproute2 openssl libxml2-utils python3 python3-yaml prometheus chromium lldpd
  # tests: the integrations for real (Slurm with munge, node_exporter's textfile collector)
  slurm-wlm munge prometheus-node-exporter
  # tests: the store and a standby controller on a real PostgreSQL, started by the test
  postgresql
  # scripts/fuzz.sh: libFuzzer; scripts/format.sh: the house layout
  clang clang-format
  # benchmarks: reference tools
  iperf3 sockperf perftest
  # the soft-RoCE VM of ../shared/tools/rdma-vm (RDMA probes for real without RDMA hardware)
  qemu-system-x86 busybox-static cpio kmod ibverbs-utils rdmacm-utils
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "setup: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
