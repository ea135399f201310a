#ifndef FABRICCTL_PROBES_GPU_NCCL_H_
#define FABRICCTL_PROBES_GPU_NCCL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "probes/common/child.h"
#include "probes/common/params.h"
#include "probes/common/result.h"
#include "probes/gpu/nccl_log.h"

namespace fabricctl::probes {

// NCCL, loaded at run time from libnccl.so.2 ($FABRIC_NCCL_LIBRARY names another path, e.g.
// the library of a Python wheel): the build needs no NCCL and the binary runs without it. Only
// the calls fabricctl uses are resolved. Not thread-safe; used inside child processes.
class NcclLibrary {
 public:
  using Result = int;  // ncclResult_t; 0 is ncclSuccess
  using Comm = void*;  // ncclComm_t
  struct UniqueId {
    char internal[128];  // ncclUniqueId
  };
  static constexpr int kFloat32 = 7;  // ncclFloat32
  static constexpr int kSum = 0;      // ncclSum

  // NotFound when the library is absent or lacks a call.
  static absl::StatusOr<std::unique_ptr<NcclLibrary>> Load();
  ~NcclLibrary();
  NcclLibrary(const NcclLibrary&) = delete;
  NcclLibrary& operator=(const NcclLibrary&) = delete;

  // "ncclCommInitRank: unhandled system error (2)"-style error for a failed call.
  absl::Status Check(Result result, const char* call) const;
  // "2.21.5" from ncclGetVersion's code.
  std::string Version() const;

  Result (*GetVersion)(int*) = nullptr;
  Result (*GetUniqueId)(UniqueId*) = nullptr;
  Result (*CommInitRank)(Comm*, int, UniqueId, int) = nullptr;
  Result (*AllReduce)(const void*, void*, size_t, int, int, Comm, void*) = nullptr;
  Result (*CommDestroy)(Comm) = nullptr;
  Result (*CommAbort)(Comm) = nullptr;
  const char* (*GetErrorString)(Result) = nullptr;

 private:
  NcclLibrary() = default;
  void* library_ = nullptr;  // dlopen handle, owned
};

// "2.21.5" for ncclGetVersion's code (X*10000 + Y*100 + Z since 2.9, X*1000 + Y*100 + Z before).
std::string NcclVersionString(int code);

// The NCCL version this node would use, asked in a child process. NotFound with the reason
// where there is no libnccl.so.2.
absl::StatusOr<std::string> FindNccl(absl::Duration timeout);

// The rendezvous of one NCCL communicator: a child process that made the unique id with
// ncclGetUniqueId and keeps NCCL's bootstrap root (a thread of that process) alive until this
// object is destroyed. The id travels to every rank through the controller.
class NcclRendezvous {
 public:
  static absl::StatusOr<NcclRendezvous> Create(absl::Duration timeout);
  // The 128 bytes of the ncclUniqueId.
  const std::string& unique_id() const { return holder_.answer(); }

 private:
  HeldChild holder_;
};

// One rank of an NCCL all-reduce.
struct NcclRank {
  uint32_t rank = 0;
  uint32_t nranks = 0;
  uint32_t gpu = 0;       // CUDA ordinal on this node
  std::string unique_id;  // 128 bytes, from NcclRendezvous
  std::string log_path;   // NCCL_DEBUG=INFO goes here (NCCL_DEBUG_FILE)
};

// Runs one rank in a child process under a watchdog (params.timeout): joins the communicator,
// then per message size checks the data once (as RunRingAllreduce does) and times
// `iterations` ncclAllReduce calls on a stream after the warm-up, as nccl-tests does
// (out of place, float sum). Fills run.collective; the caller reads the log. Skipped where
// there is no GPU or no NCCL; kTimeout when the watchdog fired (a hung peer, a hung init).
ProbeRun RunNcclRank(const ProbeParams& params, const NcclRank& rank);

// This node's share of a communicator: ranks first..first+gpus-1 of `world` on GPUs
// 0..gpus-1, all at once, each in its own child, rank r logging to
// "<log_prefix>.rank<r>.log". The node's run has its ranks' times averaged (nccl-tests averages
// over ranks), algbw and busbw over `world`, wrong elements added. A rank that did not measure
// decides the outcome, the cause before its victims: a failure (a skip counts as one: the
// caller chose NCCL for this node) before a rank the watchdog stopped while it waited.
struct NcclNodeRun {
  ProbeRun run;
  std::vector<std::string> logs;
};
NcclNodeRun RunNcclNode(const ProbeParams& params, const std::string& unique_id, uint32_t first,
                        uint32_t world, uint32_t gpus, const std::string& log_prefix);

// The verdict of a node's rank logs together: the transport summary and the findings
// (tcp_fallback, gpudirect_unavailable) naming `node` (empty: the logs' hostname) and the log
// file as the source, one finding of each kind for the node.
struct NcclVerdict {
  v1::NcclTransport transport;
  std::vector<v1::Finding> findings;
};
NcclVerdict JudgeNcclLogs(const std::string& node, const std::vector<std::string>& log_paths,
                          const NcclExpectation& expect = {});

// The all-reduce's own data check: a probe_failed (critical) naming `node` for each size whose
// result had wrong elements.
std::vector<v1::Finding> JudgeNcclData(const std::string& node, const ProbeRun& run);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_GPU_NCCL_H_
