#ifndef FABRICCTL_PROBES_COMMON_PARAMS_H_
#define FABRICCTL_PROBES_COMMON_PARAMS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "probes/common/cancel.h"
#include "probes/common/result.h"
#include "proto/config.pb.h"
#include "proto/probe.pb.h"

namespace fabricctl::probes {

// RDMA endpoint and queue-pair settings (perftest's flags in brackets).
struct RdmaParams {
  std::string device;          // -d; empty: the first device with an active port
  uint32_t port = 0;           // -i; 0: the first active port
  int32_t gid_index = -1;      // -x; -1: picked as perftest does (RoCE v2, IPv4 first)
  uint32_t tx_depth = 0;       // -t; 0: 128 for bandwidth, 1 for latency
  uint32_t cq_moderation = 0;  // -Q; 0: 100, and 1 above 8 KiB as perftest forces
  int32_t inline_bytes =
      -1;  // -I; -1: 220 bytes (perftest's WRITE default), or less where the device offers less
  bool bidirectional = false;  // -b
  uint32_t queue_pairs = 1;    // -q
  // Buffers in GPU memory (perftest's --use_cuda): registered through dma-buf, or through
  // peer memory (nvidia-peermem) where dma-buf is not to be had. Each side chooses its own.
  bool gpu_memory = false;
  uint32_t gpu = 0;  // CUDA ordinal
  // The server half's buffers in GPU memory (a sweep's per-side choice; `fabricctl probe`
  // servers choose their own).
  bool server_gpu_memory = false;
};

// One probe request, after defaults. Plain data; the proto ProbeSpec is its wire form.
struct ProbeParams {
  v1::ProbeKind kind = v1::PROBE_KIND_UNSPECIFIED;
  std::vector<uint64_t> sizes_bytes;  // ascending
  // Measured iterations per size; 0 when `duration` is set.
  uint64_t iterations = 0;
  // Measured time per size; zero when `iterations` is set.
  absl::Duration duration = absl::ZeroDuration();
  uint64_t warmup_iterations = 0;
  uint32_t tcp_streams = 1;
  // tcp_bw: trace each stream's path after the last size (TcpOptions.trace_flows).
  bool trace_flows = false;
  RdmaParams rdma;
  // allreduce: "ring" (host memory over the fabric, the default) or "nccl".
  std::string allreduce_backend = "ring";
  // The host ring's transport: "tcp" or "rdma" (device and port from `rdma`).
  std::string ring_transport = "tcp";
  // Bound on the whole probe (each blocking step gives up by then); zero: the probe's own
  // generous bounds.
  absl::Duration timeout = absl::ZeroDuration();
  // Stops the client half from another thread (not part of the wire form); nullptr: none.
  Cancellation* cancel = nullptr;
  // The secret of the server half's run (Endpoint.token), sent in every hello; empty for a
  // server that asks for none (`fabricctl probe --server`).
  std::string token;
  // A rail's interface (TcpOptions.netdev / RdmaOptions.netdev): the agent resolves it to its
  // IPv4 address, `source_host`, on which a server half listens and from which a client half
  // connects (not part of the wire form). Empty: the agent's address and the routing table.
  std::string netdev;
  std::string source_host;
  // With GPU memory and a netdev: each half uses the GPU nearest the netdev's NIC (the agent
  // resolves it into rdma.gpu).
  bool nearest_gpu = false;
};

// Hard caps every node enforces on every request, whoever sent it.
struct ProbeLimits {
  uint64_t max_message_bytes = 64ull << 20;         // 64 MiB
  uint64_t max_total_bytes = 256ull << 30;          // 256 GiB moved by one probe
  absl::Duration max_duration = absl::Minutes(10);  // wall time of one probe
  uint64_t max_iterations = 10'000'000;             // per size
  uint32_t max_streams = 64;
  uint32_t max_queue_pairs = 64;
  uint64_t max_memory_bytes = 1ull << 30;  // buffers of one probe
};

// The caps of a configuration file's probes.limits; fields left at zero keep the defaults.
ProbeLimits LimitsFromConfig(const v1::ProbeLimits& config);

// Checks a request against the caps and for consistency. Errors name the field:
// "--sizes: size 128M is above the cap of 64M bytes", "--iters and --duration exclude ...".
absl::Status ValidateParams(const ProbeParams& params, const ProbeLimits& limits);

// A run id names an agent's log files: 1 to kMaxRunIdLength of A-Z a-z 0-9 - _ ., not starting
// with a dot. The agent refuses any other; the controller makes its ids to fit.
inline constexpr size_t kMaxRunIdLength = 128;
absl::Status ValidateRunId(std::string_view run_id);

// Wire form, both ways. FromSpec validates nothing beyond the shape; call ValidateParams.
v1::ProbeSpec ToSpec(const ProbeParams& params);
ProbeParams FromSpec(const v1::ProbeSpec& spec);

// A run's result in its wire and report form: the one place ProbeRun becomes proto.
v1::ProbeResult ToResult(const ProbeRun& run, const ProbeParams& params);

// A failed run from `status`: kTimeout for DeadlineExceeded, else kFailed; the reason is the
// message (after `prefix`), the cause and side are what the status carries (cause.h).
ProbeRun FailedRun(std::string kind, const absl::Status& status, const std::string& prefix = "");

// Whether two specs ask for the same measurement, field by field after defaults: a server
// half checks a hello against the spec it was started with, so a hello cannot ask it to carry
// more, or otherwise, than the controller planned.
bool SameMeasurement(const v1::ProbeSpec& a, const v1::ProbeSpec& b);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_COMMON_PARAMS_H_
