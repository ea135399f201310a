// GPU memory as a probe buffer, against the CUDA driver's test stand-in (tests/fake_gpu): no
// GPU here, so what runs is fabricctl's side of it (device choice, sizes, errors). Without the
// stand-in, as on any machine without a driver, the allocation is NotFound with the reason.
#include "probes/rdma/gpu_memory.h"

#include <catch2/catch.hpp>
#include <climits>
#include <cstdlib>

namespace fabricctl::probes {

TEST_CASE(
    "GPU buffers: whole 2 MiB pages on the GPU asked for; a missing GPU or driver is NotFound") {
  ::setenv("FABRIC_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  auto none = AllocateGpuMemory(0, 4096);
  CHECK(absl::IsNotFound(none.status()));
  CHECK(std::string(none.status().message()).find("no GPU driver") == 0);

  char path[PATH_MAX];
  REQUIRE(::realpath("tests/fake_gpu/libfake_cuda.so", path) != nullptr);
  ::setenv("FABRIC_CUDA_LIBRARY", path, 1);
  ::setenv("FABRIC_FAKE_GPUS", "2", 1);
  auto memory = AllocateGpuMemory(1, 3 << 20);
  REQUIRE(memory.ok());
  CHECK((*memory)->size() == 4u << 20);
  CHECK((*memory)->data() != nullptr);
  CHECK((*memory)->label() == "gpu 1 (unregistered)");
  auto missing = AllocateGpuMemory(2, 4096);
  CHECK(absl::IsNotFound(missing.status()));
  CHECK(std::string(missing.status().message()) == "--gpu: no GPU 2 (the driver sees 2)");
}

}  // namespace fabricctl::probes
