#ifndef FABRICCTL_PROBES_RDMA_GPU_MEMORY_H_
#define FABRICCTL_PROBES_RDMA_GPU_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "probes/rdma/endpoint.h"

namespace fabricctl::probes {

// GPU memory as an RDMA probe buffer (GPUDirect RDMA, perftest's --use_cuda): allocated on
// CUDA device `gpu` with the driver loaded at run time, zeroed, and registered through dma-buf
// (cuMemGetHandleForAddressRange, then ibv_reg_dmabuf_mr) or, where that is not to be had,
// through peer memory (ibv_reg_mr on the device address, which nvidia-peermem serves). The
// label says which ("gpu 0 (dma-buf)"). NotFound without a driver or GPU; FailedPrecondition
// when neither registration works (GPUDirect RDMA is off), with both reasons.
//
// It loads CUDA into the calling process: callers that must survive a hung driver run it in
// a child (RunInChild).
absl::StatusOr<std::unique_ptr<ProbeMemory>> AllocateGpuMemory(uint32_t gpu, size_t bytes);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_RDMA_GPU_MEMORY_H_
