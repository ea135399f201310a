#include "probes/rdma/gpu_memory.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "probes/common/cause.h"
#include "probes/gpu/cuda.h"

namespace fabricctl::probes {
namespace {

class GpuMemory final : public ProbeMemory {
 public:
  GpuMemory(std::unique_ptr<CudaDriver> cuda, CudaDriver::Device device, uint32_t gpu)
      : cuda_(std::move(cuda)), device_(device), gpu_(gpu) {}
  ~GpuMemory() override {
    if (pointer_ != 0) cuda_->MemFree(pointer_);
    if (context_ != nullptr) cuda_->PrimaryCtxRelease(device_);
  }

  absl::Status Allocate(size_t bytes) {
    if (auto s =
            cuda_->Check(cuda_->PrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
        !s.ok()) {
      context_ = nullptr;
      return s;
    }
    RETURN_IF_ERROR(cuda_->Check(cuda_->CtxSetCurrent(context_), "cuCtxSetCurrent"));
    // Whole 2 MiB pages: a dma-buf export covers whole pages of the allocation.
    size_ = (bytes + (2u << 20) - 1) & ~size_t{(2u << 20) - 1};
    if (auto s = cuda_->Check(cuda_->MemAlloc(&pointer_, size_), "cuMemAlloc"); !s.ok()) {
      pointer_ = 0;
      return s;
    }
    return cuda_->Check(cuda_->MemsetD8(pointer_, 0, size_), "cuMemsetD8");
  }

  char* data() override { return reinterpret_cast<char*>(pointer_); }
  size_t size() const override { return size_; }
  std::string label() const override { return absl::StrCat("gpu ", gpu_, " (", path_, ")"); }
  bool cpu_accessible() const override { return false; }

  absl::StatusOr<MrPtr> Register(ibv_pd* pd, int access) override {
    std::string dmabuf_why = "the driver has no cuMemGetHandleForAddressRange (CUDA < 11.7)";
    if (cuda_->MemGetHandleForAddressRange != nullptr) {
      int fd = -1;
      absl::Status exported = cuda_->Check(
          cuda_->MemGetHandleForAddressRange(&fd, pointer_, size_, kRangeHandleDmaBufFd, 0),
          "cuMemGetHandleForAddressRange");
      if (exported.ok()) {
        MrPtr mr(ibv_reg_dmabuf_mr(pd, 0, size_, pointer_, fd, access));
        const int error = errno;
        ::close(fd);  // the registration holds its own reference
        if (mr) {
          path_ = "dma-buf";
          return mr;
        }
        dmabuf_why = absl::StrCat("ibv_reg_dmabuf_mr: ", std::strerror(error));
      } else {
        dmabuf_why = std::string(exported.message());
      }
    }
    MrPtr mr(ibv_reg_mr(pd, data(), size_, access));
    if (mr) {
      path_ = "peer memory";
      return mr;
    }
    return WithCause(
        absl::FailedPreconditionError(absl::StrCat(
            "GPUDirect RDMA unavailable on GPU ", gpu_, ": dma-buf: ", dmabuf_why,
            "; peer memory: ibv_reg_mr: ", std::strerror(errno), " (is nvidia-peermem loaded?)")),
        v1::CAUSE_GPUDIRECT_UNAVAILABLE);
  }

 private:
  std::unique_ptr<CudaDriver> cuda_;
  CudaDriver::Device device_;
  uint32_t gpu_;
  CudaDriver::Context context_ = nullptr;
  CudaDriver::DevicePtr pointer_ = 0;
  size_t size_ = 0;
  std::string path_ = "unregistered";
};

}  // namespace

absl::StatusOr<std::unique_ptr<ProbeMemory>> AllocateGpuMemory(uint32_t gpu, size_t bytes) {
  auto cuda = CudaDriver::Load();
  if (!cuda.ok()) return cuda.status();
  int count = 0;
  RETURN_IF_ERROR((*cuda)->Check((*cuda)->DeviceGetCount(&count), "cuDeviceGetCount"));
  if (gpu >= static_cast<uint32_t>(count)) {
    return absl::NotFoundError(
        absl::StrCat("--gpu: no GPU ", gpu, " (the driver sees ", count, ")"));
  }
  CudaDriver::Device device;
  if (auto s = (*cuda)->Check((*cuda)->DeviceGet(&device, static_cast<int>(gpu)), "cuDeviceGet");
      !s.ok()) {
    return s;
  }
  auto memory = std::make_unique<GpuMemory>(*std::move(cuda), device, gpu);
  RETURN_IF_ERROR(memory->Allocate(bytes));
  return std::unique_ptr<ProbeMemory>(std::move(memory));
}

}  // namespace fabricctl::probes
