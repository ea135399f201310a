#ifndef FABRICCTL_PROBES_GPU_CUDA_H_
#define FABRICCTL_PROBES_GPU_CUDA_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "probes/common/params.h"
#include "probes/common/result.h"
#include "proto/inventory.pb.h"

namespace fabricctl::probes {

// The CUDA driver API, loaded at run time from libcuda.so.1 (the driver's library, present on
// GPU nodes only): the build needs no CUDA toolkit and one binary runs with or without GPUs.
// Only the calls fabricctl uses are resolved. Not thread-safe; used inside RunInChild.
// $FABRIC_CUDA_LIBRARY names another library to load (a path), for drivers installed outside
// the loader's path.
class CudaDriver {
 public:
  using Result = int;                    // CUresult; 0 is CUDA_SUCCESS
  using Device = int;                    // CUdevice
  using DevicePtr = unsigned long long;  // CUdeviceptr
  using Context = void*;                 // CUcontext
  using Stream = void*;                  // CUstream (the same handle as cudaStream_t)

  // NotFound when libcuda.so.1 is absent (no NVIDIA driver), or cuInit fails (no device).
  static absl::StatusOr<std::unique_ptr<CudaDriver>> Load();
  ~CudaDriver();
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  // "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2)"-style error for a failed call.
  absl::Status Check(Result result, const char* call) const;

  Result (*Init)(unsigned) = nullptr;
  Result (*DeviceGetCount)(int*) = nullptr;
  Result (*DeviceGet)(Device*, int) = nullptr;
  Result (*DeviceGetName)(char*, int, Device) = nullptr;
  Result (*DeviceTotalMem)(size_t*, Device) = nullptr;
  Result (*DeviceGetPCIBusId)(char*, int, Device) = nullptr;
  Result (*DeviceGetAttribute)(int*, int, Device) = nullptr;
  Result (*PrimaryCtxRetain)(Context*, Device) = nullptr;
  Result (*PrimaryCtxRelease)(Device) = nullptr;
  Result (*CtxSetCurrent)(Context) = nullptr;
  Result (*CtxSynchronize)() = nullptr;
  Result (*MemAlloc)(DevicePtr*, size_t) = nullptr;
  Result (*MemFree)(DevicePtr) = nullptr;
  Result (*MemAllocHost)(void**, size_t) = nullptr;
  Result (*MemFreeHost)(void*) = nullptr;
  Result (*MemcpyHtoD)(DevicePtr, const void*, size_t) = nullptr;
  Result (*MemcpyDtoH)(void*, DevicePtr, size_t) = nullptr;
  Result (*MemsetD8)(DevicePtr, unsigned char, size_t) = nullptr;
  // CUDA 11.7 and later; null on older drivers (then there is no dma-buf export).
  Result (*MemGetHandleForAddressRange)(void*, DevicePtr, size_t, int,
                                        unsigned long long) = nullptr;
  Result (*StreamCreate)(Stream*, unsigned) = nullptr;
  Result (*StreamSynchronize)(Stream) = nullptr;
  Result (*StreamDestroy)(Stream) = nullptr;
  Result (*GetErrorName)(Result, const char**) = nullptr;

 private:
  CudaDriver() = default;
  void* library_ = nullptr;  // dlopen handle, owned
};

// Owns a device's primary context, made current on this thread, and releases it.
class ScopedContext {
 public:
  ScopedContext(const CudaDriver& cuda, CudaDriver::Device device) : cuda_(cuda), device_(device) {}
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
  absl::Status Enter();

 private:
  const CudaDriver& cuda_;
  CudaDriver::Device device_;
  CudaDriver::Context context_ = nullptr;
};

// cuDeviceGetAttribute codes used here (cuda.h).
inline constexpr int kAttrGpuDirectRdmaSupported = 116;
inline constexpr int kAttrDmaBufSupported = 124;
// CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD.
inline constexpr int kRangeHandleDmaBufFd = 1;

// The GPUs of this node, asked of the driver in a child process (bounded by `timeout`), as the
// inventory lists them. NotFound with the reason where there is no driver or no GPU.
absl::StatusOr<std::vector<v1::Gpu>> ListGpus(absl::Duration timeout);

// `gpu_copy`: host-to-device and device-to-host bandwidth with pinned host memory, per GPU and
// message size, in a child process under a watchdog. Skipped (with the reason) without a GPU;
// kTimeout when the watchdog fired. `cancel` kills the child at once (the run fails, cancelled).
ProbeRun RunGpuCopy(const ProbeParams& params, absl::Duration timeout,
                    const Cancellation* cancel = nullptr);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_GPU_CUDA_H_
