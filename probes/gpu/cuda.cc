#include "probes/gpu/cuda.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "probes/common/child.h"
#include "probes/gpu/runtime_library.h"
#include "proto/probe.pb.h"

namespace fabricctl::probes {
ScopedContext::~ScopedContext() {
  if (context_ != nullptr) cuda_.PrimaryCtxRelease(device_);
}

absl::Status ScopedContext::Enter() {
  if (auto s = cuda_.Check(cuda_.PrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
      !s.ok()) {
    context_ = nullptr;
    return s;
  }
  return cuda_.Check(cuda_.CtxSetCurrent(context_), "cuCtxSetCurrent");
}

absl::StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::Load() {
  std::string path;
  auto opened = OpenRuntimeLibrary("FABRIC_CUDA_LIBRARY", "libcuda.so.1", "no GPU driver", &path);
  if (!opened.ok()) return opened.status();
  void* library = *opened;
  std::unique_ptr<CudaDriver> cuda(new CudaDriver());
  cuda->library_ = library;
  const bool ok = Resolve(library, "cuInit", &cuda->Init) &&
                  Resolve(library, "cuDeviceGetCount", &cuda->DeviceGetCount) &&
                  Resolve(library, "cuDeviceGet", &cuda->DeviceGet) &&
                  Resolve(library, "cuDeviceGetName", &cuda->DeviceGetName) &&
                  Resolve(library, "cuDeviceTotalMem_v2", &cuda->DeviceTotalMem) &&
                  Resolve(library, "cuDeviceGetPCIBusId", &cuda->DeviceGetPCIBusId) &&
                  Resolve(library, "cuDeviceGetAttribute", &cuda->DeviceGetAttribute) &&
                  Resolve(library, "cuDevicePrimaryCtxRetain", &cuda->PrimaryCtxRetain) &&
                  Resolve(library, "cuDevicePrimaryCtxRelease_v2", &cuda->PrimaryCtxRelease) &&
                  Resolve(library, "cuCtxSetCurrent", &cuda->CtxSetCurrent) &&
                  Resolve(library, "cuCtxSynchronize", &cuda->CtxSynchronize) &&
                  Resolve(library, "cuMemAlloc_v2", &cuda->MemAlloc) &&
                  Resolve(library, "cuMemFree_v2", &cuda->MemFree) &&
                  Resolve(library, "cuMemAllocHost_v2", &cuda->MemAllocHost) &&
                  Resolve(library, "cuMemFreeHost", &cuda->MemFreeHost) &&
                  Resolve(library, "cuMemcpyHtoD_v2", &cuda->MemcpyHtoD) &&
                  Resolve(library, "cuMemcpyDtoH_v2", &cuda->MemcpyDtoH) &&
                  Resolve(library, "cuMemsetD8_v2", &cuda->MemsetD8) &&
                  Resolve(library, "cuStreamCreate", &cuda->StreamCreate) &&
                  Resolve(library, "cuStreamSynchronize", &cuda->StreamSynchronize) &&
                  Resolve(library, "cuStreamDestroy_v2", &cuda->StreamDestroy) &&
                  Resolve(library, "cuGetErrorName", &cuda->GetErrorName);
  Resolve(library, "cuMemGetHandleForAddressRange", &cuda->MemGetHandleForAddressRange);
  if (!ok)
    return absl::NotFoundError(
        absl::StrCat(path, " lacks a driver API call fabricctl needs (driver too old?)"));
  if (Result r = cuda->Init(0); r != 0) {
    return absl::NotFoundError(absl::StrCat("no usable GPU: ", cuda->Check(r, "cuInit").message()));
  }
  return cuda;
}

CudaDriver::~CudaDriver() {
  if (library_ != nullptr) ::dlclose(library_);
}

absl::Status CudaDriver::Check(Result result, const char* call) const {
  if (result == 0) return absl::OkStatus();
  const char* name = nullptr;
  if (GetErrorName == nullptr || GetErrorName(result, &name) != 0 || name == nullptr)
    name = "error";
  return absl::InternalError(absl::StrCat(call, ": ", name, " (", result, ")"));
}

absl::StatusOr<std::vector<v1::Gpu>> ListGpus(absl::Duration timeout) {
  auto bytes = RunInChild(
      []() -> absl::StatusOr<std::string> {
        auto cuda = CudaDriver::Load();
        if (!cuda.ok()) return cuda.status();
        int count = 0;
        RETURN_IF_ERROR((*cuda)->Check((*cuda)->DeviceGetCount(&count), "cuDeviceGetCount"));
        if (count == 0) return absl::NotFoundError("the GPU driver sees no GPU");
        v1::NodeInventory holder;
        for (int i = 0; i < count; ++i) {
          CudaDriver::Device device;
          RETURN_IF_ERROR((*cuda)->Check((*cuda)->DeviceGet(&device, i), "cuDeviceGet"));
          char name[256] = {}, bus[64] = {};
          size_t memory = 0;
          int gdr = 0, dmabuf = 0;
          (*cuda)->DeviceGetName(name, sizeof(name) - 1, device);
          (*cuda)->DeviceGetPCIBusId(bus, sizeof(bus) - 1, device);
          (*cuda)->DeviceTotalMem(&memory, device);
          (*cuda)->DeviceGetAttribute(&gdr, kAttrGpuDirectRdmaSupported, device);
          (*cuda)->DeviceGetAttribute(&dmabuf, kAttrDmaBufSupported, device);
          v1::Gpu* gpu = holder.add_gpus();
          gpu->set_index(static_cast<uint32_t>(i));
          gpu->set_name(name);
          gpu->set_pci_bus_id(absl::AsciiStrToLower(bus));
          gpu->set_memory_bytes(memory);
          gpu->set_gpudirect_rdma_supported(gdr != 0);
          gpu->set_dma_buf_supported(dmabuf != 0);
          gpu->set_numa_node(-1);
        }
        return holder.SerializeAsString();
      },
      timeout);
  if (!bytes.ok()) return bytes.status();
  v1::NodeInventory holder;
  if (!holder.ParseFromString(*bytes)) return absl::InternalError("GPU inventory does not parse");
  return std::vector<v1::Gpu>(holder.gpus().begin(), holder.gpus().end());
}

namespace {

// GPU `i`'s copies: for each size, host-to-device and device-to-host, pinned host memory, after
// a warm-up, each timed over the iterations.
absl::Status CopyOnGpu(const CudaDriver& cu, int i, const ProbeParams& params,
                       v1::ProbeResult* out) {
  const uint64_t largest = *std::max_element(params.sizes_bytes.begin(), params.sizes_bytes.end());
  const uint64_t iterations = std::max<uint64_t>(1, params.iterations);
  CudaDriver::Device device;
  RETURN_IF_ERROR(cu.Check(cu.DeviceGet(&device, i), "cuDeviceGet"));
  ScopedContext context(cu, device);
  RETURN_IF_ERROR(context.Enter());
  void* host = nullptr;
  CudaDriver::DevicePtr dev = 0;
  RETURN_IF_ERROR(cu.Check(cu.MemAllocHost(&host, largest), "cuMemAllocHost"));
  if (auto s = cu.Check(cu.MemAlloc(&dev, largest), "cuMemAlloc"); !s.ok()) {
    cu.MemFreeHost(host);
    return s;
  }
  absl::Status status;
  for (uint64_t size : params.sizes_bytes) {
    auto timed = [&](bool to_device, double* gbytes) -> absl::Status {
      for (uint64_t w = 0; w < params.warmup_iterations + 1; ++w) {  // at least one warm-up
        auto r = to_device ? cu.MemcpyHtoD(dev, host, size) : cu.MemcpyDtoH(host, dev, size);
        RETURN_IF_ERROR(cu.Check(r, to_device ? "cuMemcpyHtoD" : "cuMemcpyDtoH"));
      }
      const auto t0 = std::chrono::steady_clock::now();
      for (uint64_t k = 0; k < iterations; ++k) {
        auto r = to_device ? cu.MemcpyHtoD(dev, host, size) : cu.MemcpyDtoH(host, dev, size);
        RETURN_IF_ERROR(cu.Check(r, to_device ? "cuMemcpyHtoD" : "cuMemcpyDtoH"));
      }
      RETURN_IF_ERROR(cu.Check(cu.CtxSynchronize(), "cuCtxSynchronize"));
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      *gbytes = static_cast<double>(size) * static_cast<double>(iterations) / seconds / 1e9;
      return absl::OkStatus();
    };
    v1::CopyPoint* p = out->add_copy();
    p->set_gpu_index(static_cast<uint32_t>(i));
    p->set_size_bytes(size);
    double h2d = 0, d2h = 0;
    status = timed(true, &h2d);
    if (status.ok()) status = timed(false, &d2h);
    if (!status.ok()) break;
    p->set_h2d_gbytes(h2d);
    p->set_d2h_gbytes(d2h);
  }
  cu.MemFree(dev);
  cu.MemFreeHost(host);
  return status;
}

}  // namespace

ProbeRun RunGpuCopy(const ProbeParams& params, absl::Duration timeout, const Cancellation* cancel) {
  ProbeRun run;
  run.kind = "gpu_copy";
  run.device = "cuda";
  const auto started = std::chrono::steady_clock::now();
  auto bytes = RunInChild(
      [&params]() -> absl::StatusOr<std::string> {
        auto cuda = CudaDriver::Load();
        if (!cuda.ok()) return cuda.status();
        const CudaDriver& cu = **cuda;
        int count = 0;
        RETURN_IF_ERROR(cu.Check(cu.DeviceGetCount(&count), "cuDeviceGetCount"));
        if (count == 0) return absl::NotFoundError("the GPU driver sees no GPU");
        v1::ProbeResult out;
        for (int i = 0; i < count; ++i) RETURN_IF_ERROR(CopyOnGpu(cu, i, params, &out));
        return out.SerializeAsString();
      },
      timeout, cancel);
  run.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!bytes.ok()) {
    run.reason = std::string(bytes.status().message());
    run.outcome = absl::IsNotFound(bytes.status())           ? Outcome::kSkipped
                  : absl::IsDeadlineExceeded(bytes.status()) ? Outcome::kTimeout
                                                             : Outcome::kFailed;
    return run;
  }
  v1::ProbeResult measured;
  if (!measured.ParseFromString(*bytes)) {
    run.reason = "gpu_copy result does not parse";
    return run;
  }
  for (const auto& p : measured.copy()) {
    run.copy.push_back({p.gpu_index(), p.size_bytes(), p.h2d_gbytes(), p.d2h_gbytes()});
  }
  run.outcome = Outcome::kOk;
  return run;
}

}  // namespace fabricctl::probes
