// A test stand-in for the CUDA driver (libcuda.so.1) on machines without an NVIDIA GPU, such
// as CI: it implements the driver calls fabricctl resolves, with "device" memory in host
// memory. Tests load it through $FABRIC_CUDA_LIBRARY; nothing it measures is a GPU's figure.
//
// $FABRIC_FAKE_GPUS: how many GPUs it shows (default 1; 0: cuInit fails as with no device).
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kOutOfMemory = 2;
constexpr int kNoDevice = 100;
constexpr int kInvalidDevice = 101;
constexpr int kNotSupported = 801;

int GpuCount() {
  const char* env = std::getenv("FABRIC_FAKE_GPUS");
  return env != nullptr ? std::atoi(env) : 1;
}

int context_token;  // the primary context's handle
int stream_token;   // every stream's handle

}  // namespace

extern "C" {

int cuInit(unsigned) { return GpuCount() > 0 ? kSuccess : kNoDevice; }

int cuDeviceGetCount(int* count) {
  *count = GpuCount();
  return kSuccess;
}

int cuDeviceGet(int* device, int ordinal) {
  if (ordinal < 0 || ordinal >= GpuCount()) return kInvalidDevice;
  *device = ordinal;
  return kSuccess;
}

int cuDeviceGetName(char* name, int length, int device) {
  std::snprintf(name, static_cast<size_t>(length), "fabricctl test stand-in GPU %d (no GPU)",
                device);
  return kSuccess;
}

int cuDeviceTotalMem_v2(size_t* bytes, int) {
  *bytes = size_t{1} << 30;
  return kSuccess;
}

int cuDeviceGetPCIBusId(char* bus, int length, int device) {
  std::snprintf(bus, static_cast<size_t>(length), "0000:F%d:00.0", device % 10);
  return kSuccess;
}

int cuDeviceGetAttribute(int* value, int attribute, int) {
  *value = attribute == 116 || attribute == 124 ? 1 : 0;  // GPUDirect RDMA, dma-buf
  return kSuccess;
}

int cuDevicePrimaryCtxRetain(void** context, int) {
  *context = &context_token;
  return kSuccess;
}

int cuDevicePrimaryCtxRelease_v2(int) { return kSuccess; }
int cuCtxSetCurrent(void*) { return kSuccess; }
int cuCtxSynchronize() { return kSuccess; }

int cuMemAlloc_v2(unsigned long long* pointer, size_t bytes) {
  void* p = std::malloc(bytes);
  if (p == nullptr) return kOutOfMemory;
  *pointer = reinterpret_cast<unsigned long long>(p);
  return kSuccess;
}

int cuMemFree_v2(unsigned long long pointer) {
  std::free(reinterpret_cast<void*>(pointer));
  return kSuccess;
}

int cuMemAllocHost_v2(void** pointer, size_t bytes) {
  *pointer = std::malloc(bytes);
  return *pointer != nullptr ? kSuccess : kOutOfMemory;
}

int cuMemFreeHost(void* pointer) {
  std::free(pointer);
  return kSuccess;
}

int cuMemcpyHtoD_v2(unsigned long long to, const void* from, size_t bytes) {
  std::memcpy(reinterpret_cast<void*>(to), from, bytes);
  return kSuccess;
}

int cuMemcpyDtoH_v2(void* to, unsigned long long from, size_t bytes) {
  std::memcpy(to, reinterpret_cast<const void*>(from), bytes);
  return kSuccess;
}

int cuMemsetD8_v2(unsigned long long pointer, unsigned char value, size_t bytes) {
  std::memset(reinterpret_cast<void*>(pointer), value, bytes);
  return kSuccess;
}

// Host memory has no dma-buf to export: the caller falls back to plain registration, as it
// would to peer memory on a GPU without dma-buf.
int cuMemGetHandleForAddressRange(void*, unsigned long long, size_t, int, unsigned long long) {
  return kNotSupported;
}

int cuStreamCreate(void** stream, unsigned) {
  *stream = &stream_token;
  return kSuccess;
}

int cuStreamSynchronize(void*) { return kSuccess; }
int cuStreamDestroy_v2(void*) { return kSuccess; }

int cuGetErrorName(int result, const char** name) {
  switch (result) {
    case kSuccess:
      *name = "CUDA_SUCCESS";
      return kSuccess;
    case kInvalidValue:
      *name = "CUDA_ERROR_INVALID_VALUE";
      return kSuccess;
    case kOutOfMemory:
      *name = "CUDA_ERROR_OUT_OF_MEMORY";
      return kSuccess;
    case kNoDevice:
      *name = "CUDA_ERROR_NO_DEVICE";
      return kSuccess;
    case kInvalidDevice:
      *name = "CUDA_ERROR_INVALID_DEVICE";
      return kSuccess;
    case kNotSupported:
      *name = "CUDA_ERROR_NOT_SUPPORTED";
      return kSuccess;
    default:
      return kInvalidValue;
  }
}

}  // extern "C"
