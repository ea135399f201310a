#include "probes/common/params.h"

#include <catch2/catch.hpp>

namespace fabricctl::probes {
namespace {

ProbeParams Valid() {
  ProbeParams p;
  p.kind = v1::TCP_BW;
  p.sizes_bytes = {65536, 1 << 20};
  p.iterations = 1000;
  return p;
}

std::string ErrorOf(const ProbeParams& p, const ProbeLimits& limits = {}) {
  auto status = ValidateParams(p, limits);
  REQUIRE_FALSE(status.ok());
  return std::string(status.message());
}

}  // namespace

TEST_CASE("A valid request passes, and survives the wire form") {
  ProbeParams p = Valid();
  p.tcp_streams = 4;
  p.warmup_iterations = 10;
  REQUIRE(ValidateParams(p, {}).ok());
  ProbeParams back = FromSpec(ToSpec(p));
  CHECK(back.kind == v1::TCP_BW);
  CHECK(back.sizes_bytes == p.sizes_bytes);
  CHECK(back.iterations == 1000);
  CHECK(back.warmup_iterations == 10);
  CHECK(back.tcp_streams == 4);

  ProbeParams rdma = Valid();
  rdma.kind = v1::RDMA_WRITE_BW;
  rdma.iterations = 0;
  rdma.duration = absl::Milliseconds(1500);
  rdma.rdma.device = "rxe0";
  rdma.rdma.gid_index = 1;
  rdma.rdma.bidirectional = true;
  ProbeParams rdma_back = FromSpec(ToSpec(rdma));
  CHECK(rdma_back.duration == absl::Milliseconds(1500));
  CHECK(rdma_back.rdma.device == "rxe0");
  CHECK(rdma_back.rdma.gid_index == 1);
  CHECK(rdma_back.rdma.bidirectional);
  // An unset GID index on the wire means automatic.
  v1::ProbeSpec spec = ToSpec(rdma);
  spec.mutable_rdma()->clear_gid_index();
  CHECK(FromSpec(spec).rdma.gid_index == -1);
}

TEST_CASE("Caps and inconsistencies are refused with the field named") {
  ProbeLimits limits;
  limits.max_message_bytes = 1 << 20;
  ProbeParams big = Valid();
  big.sizes_bytes = {2 << 20};
  CHECK(ErrorOf(big, limits) == "--sizes: size 2M is above the cap of 1M bytes");

  ProbeParams both = Valid();
  both.duration = absl::Seconds(1);
  CHECK(ErrorOf(both) == "--iters and --duration: give exactly one of them");
  ProbeParams neither = Valid();
  neither.iterations = 0;
  CHECK(ErrorOf(neither) == "--iters and --duration: give exactly one of them");

  ProbeParams long_run = Valid();
  long_run.iterations = 0;
  long_run.duration = absl::Minutes(6);
  CHECK(ErrorOf(long_run).find("exceeds the cap of 10m") != std::string::npos);

  ProbeParams heavy = Valid();
  heavy.iterations = 10'000'000;
  heavy.tcp_streams = 64;
  CHECK(ErrorOf(heavy).find("--iters: the probe would move") == 0);

  // A warm-up is traffic too: by time it is bounded on its own, by count with the iterations.
  ProbeParams warm = Valid();
  warm.iterations = 0;
  warm.duration = absl::Seconds(1);
  warm.sizes_bytes = {64ull << 20};
  warm.warmup_iterations = 5000;  // 320 GiB before the timed part
  CHECK(ErrorOf(warm).find("--warmup: the probe would move") == 0);
  warm.warmup_iterations = 100;
  CHECK(ValidateParams(warm, {}).ok());

  ProbeParams streams = Valid();
  streams.tcp_streams = 0;
  CHECK(ErrorOf(streams) == "--streams: must be 1 to 64");
  ProbeParams empty = Valid();
  empty.sizes_bytes.clear();
  CHECK(ErrorOf(empty) == "--sizes: no message size");
  ProbeParams kindless = Valid();
  kindless.kind = v1::PROBE_KIND_UNSPECIFIED;
  CHECK(ErrorOf(kindless) == "probe kind unspecified");
}

}  // namespace fabricctl::probes

namespace fabricctl::probes {

TEST_CASE("Configured caps replace the defaults they name") {
  v1::ProbeLimits config;
  config.set_max_message_bytes(1 << 20);
  config.mutable_max_duration()->set_seconds(30);
  ProbeLimits limits = LimitsFromConfig(config);
  CHECK(limits.max_message_bytes == (1u << 20));
  CHECK(limits.max_duration == absl::Seconds(30));
  CHECK(limits.max_total_bytes == ProbeLimits().max_total_bytes);
}

}  // namespace fabricctl::probes

namespace fabricctl::probes {

TEST_CASE("SameMeasurement: field by field after defaults") {
  ProbeParams p;
  p.kind = v1::RDMA_WRITE_BW;
  p.sizes_bytes = {65536};
  p.iterations = 1000;
  const v1::ProbeSpec spec = ToSpec(p);
  CHECK(SameMeasurement(spec, ToSpec(FromSpec(spec))));
  v1::ProbeSpec deeper = spec;
  deeper.mutable_rdma()->set_tx_depth(8192);
  CHECK_FALSE(SameMeasurement(spec, deeper));
  v1::ProbeSpec longer = spec;
  longer.mutable_timeout()->set_seconds(3600);
  CHECK_FALSE(SameMeasurement(spec, longer));
}

}  // namespace fabricctl::probes
