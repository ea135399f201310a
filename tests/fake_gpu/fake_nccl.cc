// A test stand-in for NCCL (libnccl.so.2) on machines without GPUs, such as CI: it implements
// the calls fabricctl resolves, across processes and network namespaces of one machine, with
// the reduction done through files in a directory named by the unique id. It writes
// NCCL_DEBUG=INFO lines in NCCL's own formats to NCCL_DEBUG_FILE, choosing its
// "network" from the environment as NCCL does: NCCL_IB_DISABLE=1 or NCCL_NET=Socket give the
// socket fallback, NCCL_NET_GDR_LEVEL=LOC turns GPUDirect RDMA off. Tests load it through
// $FABRIC_NCCL_LIBRARY, with tests/fake_gpu/fake_cuda.cc as the driver; its timings are of
// files, never of a fabric.
//
// As with NCCL, whose bootstrap root is a thread of the process that called ncclGetUniqueId,
// that process must live until every rank has joined: the id carries its pid, and
// ncclCommInitRank fails as NCCL's does when it is gone.
//
// $FABRIC_FAKE_NCCL_HANG=1 makes ncclCommInitRank hang, as a rank waiting for a dead peer does.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kSuccess = 0;
constexpr int kSystemError = 2;
constexpr int kInvalidArgument = 4;
constexpr int kRemoteError = 6;
constexpr char kMagic[] = "fabric-fake-nccl";
constexpr auto kPeerTimeout = std::chrono::seconds(120);

struct UniqueId {
  char internal[128];
};

struct Comm {
  std::string dir;
  int nranks = 0;
  int rank = 0;
  long sequence = 0;
  FILE* log = nullptr;
};

bool Env(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

std::string Host() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  return host;
}

FILE* OpenLog() {
  const char* level = std::getenv("NCCL_DEBUG");
  const char* file = std::getenv("NCCL_DEBUG_FILE");
  if (level == nullptr || std::strcmp(level, "INFO") != 0) return nullptr;
  if (file == nullptr) return stdout;
  return std::fopen(file, "w");
}

void Info(const Comm& comm, const std::string& message) {
  if (comm.log == nullptr) return;
  std::fprintf(comm.log, "%s:%d:%ld [0] NCCL INFO %s\n", Host().c_str(), ::getpid(),
               static_cast<long>(::syscall(SYS_gettid)), message.c_str());
  std::fflush(comm.log);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Writes `bytes` to `path` whole: to a temporary name first, then renamed.
bool WriteFile(const std::string& path, const void* bytes, size_t length) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return false;
  bool ok = std::fwrite(bytes, 1, length, f) == length;
  ok = std::fclose(f) == 0 && ok;
  return ok && std::rename(tmp.c_str(), path.c_str()) == 0;
}

// Waits until every rank's `prefix.<rank>` exists.
bool WaitForAll(const Comm& comm, const std::string& prefix) {
  const auto deadline = std::chrono::steady_clock::now() + kPeerTimeout;
  for (int r = 0; r < comm.nranks; ++r) {
    while (!Exists(comm.dir + "/" + prefix + "." + std::to_string(r))) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  return true;
}

}  // namespace

extern "C" {

int ncclGetVersion(int* version) {
  *version = 22105;  // 2.21.5
  return kSuccess;
}

const char* ncclGetErrorString(int result) {
  switch (result) {
    case kSuccess:
      return "no error";
    case kSystemError:
      return "unhandled system error";
    case kInvalidArgument:
      return "invalid argument";
    case kRemoteError:
      return "remote process exited or there was a network error";
    default:
      return "unknown result code";
  }
}

// The id: the magic, the root's pid (4 bytes), then the directory's path.
constexpr size_t kPidAt = sizeof(kMagic);
constexpr size_t kDirAt = kPidAt + sizeof(int32_t);

int ncclGetUniqueId(UniqueId* id) {
  char dir[] = "/tmp/fabric-fake-nccl-XXXXXX";
  if (::mkdtemp(dir) == nullptr) return kSystemError;
  std::memset(id->internal, 0, sizeof(id->internal));
  std::memcpy(id->internal, kMagic, sizeof(kMagic));
  const int32_t root = ::getpid();
  std::memcpy(id->internal + kPidAt, &root, sizeof(root));
  std::memcpy(id->internal + kDirAt, dir, sizeof(dir));
  return kSuccess;
}

int ncclCommInitRank(void** out, int nranks, UniqueId id, int rank) {
  if (std::memcmp(id.internal, kMagic, sizeof(kMagic)) != 0) return kInvalidArgument;
  if (nranks < 1 || rank < 0 || rank >= nranks) return kInvalidArgument;
  int32_t root = 0;
  std::memcpy(&root, id.internal + kPidAt, sizeof(root));
  if (::kill(root, 0) != 0) return kRemoteError;  // the bootstrap root is gone
  auto* comm = new Comm;
  comm->dir = std::string(id.internal + kDirAt);
  comm->nranks = nranks;
  comm->rank = rank;
  comm->log = OpenLog();
  Info(*comm, "NCCL version 2.21.5+cuda12.4");
  Info(*comm,
       "fabricctl test stand-in for libnccl.so.2: no GPU and no network; data moves "
       "through files in " +
           comm->dir);
  const bool socket = Env("NCCL_IB_DISABLE", "1") || Env("NCCL_NET", "Socket");
  const bool gdr = !Env("NCCL_NET_GDR_LEVEL", "LOC");
  if (socket) {
    if (Env("NCCL_IB_DISABLE", "1")) Info(*comm, "NCCL_IB_DISABLE set by environment to 1.");
    Info(*comm, "NET/Socket : Using [0]lo:127.0.0.1<0>");
    Info(*comm, "Using network Socket");
  } else {
    Info(*comm, "NET/IB : Using [0]fake0:1/RoCE [RO]; OOB lo:127.0.0.1<0>");
    Info(*comm, "Using network IB");
  }
  if (Env("FABRIC_FAKE_NCCL_HANG", "1")) {
    for (;;) ::pause();
  }
  const std::string me = std::to_string(rank);
  if (!WriteFile(comm->dir + "/init." + me, me.data(), me.size()) || !WaitForAll(*comm, "init")) {
    delete comm;
    return kRemoteError;
  }
  const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  const std::string via = socket ? "NET/Socket/0" : gdr ? "NET/IB/0/GDRDMA" : "NET/IB/0";
  if (nranks > 1) {
    Info(*comm,
         "Channel 00/0 : " + std::to_string(prev) + "[0] -> " + me + "[0] [receive] via " + via);
    Info(*comm,
         "Channel 00/0 : " + me + "[0] -> " + std::to_string(next) + "[0] [send] via " + via);
  }
  Info(*comm, "Connected all rings");
  Info(*comm, "comm " + std::to_string(reinterpret_cast<uintptr_t>(comm)) + " rank " + me +
                  " nranks " + std::to_string(nranks) + " - Init COMPLETE");
  *out = comm;
  return kSuccess;
}

int ncclAllReduce(const void* send, void* recv, size_t count, int datatype, int op, void* handle,
                  void*) {
  auto* comm = static_cast<Comm*>(handle);
  if (comm == nullptr || datatype != 7 || op != 0) return kInvalidArgument;  // float32 sum only
  const std::string seq = std::to_string(++comm->sequence);
  const std::string mine = comm->dir + "/ar" + seq + "." + std::to_string(comm->rank);
  if (!WriteFile(mine, send, count * sizeof(float))) return kSystemError;
  if (!WaitForAll(*comm, "ar" + seq)) return kRemoteError;
  std::vector<float> sum(count, 0.0f), part(count);
  for (int r = 0; r < comm->nranks; ++r) {  // in rank order, as every rank does
    FILE* f = std::fopen((comm->dir + "/ar" + seq + "." + std::to_string(r)).c_str(), "rb");
    if (f == nullptr) return kSystemError;
    const size_t got = std::fread(part.data(), sizeof(float), count, f);
    std::fclose(f);
    if (got != count) return kSystemError;
    for (size_t i = 0; i < count; ++i) sum[i] += part[i];
  }
  std::memcpy(recv, sum.data(), count * sizeof(float));
  // Every rank has read step s-2 once this rank got past step s-1's wait: drop that file.
  if (comm->sequence > 2) {
    std::remove(
        (comm->dir + "/ar" + std::to_string(comm->sequence - 2) + "." + std::to_string(comm->rank))
            .c_str());
  }
  return kSuccess;
}

int ncclCommAbort(void* handle) {
  auto* comm = static_cast<Comm*>(handle);
  if (comm != nullptr && comm->log != nullptr && comm->log != stdout) std::fclose(comm->log);
  delete comm;
  return kSuccess;
}

int ncclCommDestroy(void* handle) {
  auto* comm = static_cast<Comm*>(handle);
  if (comm == nullptr) return kInvalidArgument;
  const std::string me = std::to_string(comm->rank);
  // Two barriers: after "done" nobody reads data files; after "gone" nobody looks at any file,
  // so rank 0 can remove the directory.
  bool ok = WriteFile(comm->dir + "/done." + me, "", 0) && WaitForAll(*comm, "done");
  for (long s = std::max(1L, comm->sequence - 1); ok && s <= comm->sequence; ++s) {
    std::remove((comm->dir + "/ar" + std::to_string(s) + "." + me).c_str());
  }
  ok = ok && WriteFile(comm->dir + "/gone." + me, "", 0);
  if (ok && comm->rank == 0 && WaitForAll(*comm, "gone")) {
    if (DIR* d = ::opendir(comm->dir.c_str())) {
      while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] != '.') std::remove((comm->dir + "/" + e->d_name).c_str());
      }
      ::closedir(d);
    }
    ::rmdir(comm->dir.c_str());
  }
  Info(*comm, "comm rank " + me + " - Destroy COMPLETE");
  return ncclCommAbort(comm) == kSuccess && ok ? kSuccess : kRemoteError;
}

}  // extern "C"
