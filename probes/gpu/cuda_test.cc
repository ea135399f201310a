// Without a GPU (this machine, CI) the CUDA paths must skip with the reason, never crash or
// report zeros; with one (a GPU machine), they must list and measure every GPU.
#include "probes/gpu/cuda.h"

#include <catch2/catch.hpp>

#include "tests/skip.h"

namespace fabricctl::probes {

TEST_CASE("GPU inventory lists every GPU, or says why there is none") {
  auto gpus = ListGpus(absl::Seconds(30));
  if (!gpus.ok()) {
    CHECK(absl::IsNotFound(gpus.status()));
    CHECK_FALSE(gpus.status().message().empty());
    FABRIC_SKIP("no GPU here: " << gpus.status().message());
  }
  REQUIRE_FALSE(gpus->empty());
  for (const auto& gpu : *gpus) {
    CHECK_FALSE(gpu.name().empty());
    CHECK(gpu.pci_bus_id().size() >= 12);
    CHECK(gpu.memory_bytes() > 0);
  }
}

TEST_CASE("gpu_copy measures every GPU in both directions, or skips with the reason") {
  ProbeParams params;
  params.kind = v1::GPU_COPY;
  params.sizes_bytes = {1 << 20, 64 << 20};
  params.iterations = 10;
  ProbeRun run = RunGpuCopy(params, absl::Seconds(120));
  if (run.outcome == Outcome::kSkipped) {
    CHECK(run.copy.empty());
    CHECK_FALSE(run.reason.empty());
    FABRIC_SKIP("gpu_copy: " << run.reason);
  }
  INFO(run.reason);
  REQUIRE(run.outcome == Outcome::kOk);
  REQUIRE_FALSE(run.copy.empty());
  for (const auto& p : run.copy) {
    CHECK(p.h2d_gbytes > 0);
    CHECK(p.d2h_gbytes > 0);
  }
}

}  // namespace fabricctl::probes
