#ifndef FABRICCTL_PROBES_COMMON_RESULT_H_
#define FABRICCTL_PROBES_COMMON_RESULT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fabricctl::probes {

// One router on a flow's path: the address that answered at this TTL and its name where the
// resolver knows one; address empty: no answer.
struct Hop {
  uint32_t ttl = 0;
  std::string address, name;
};

// One flow of a pair probe (a TCP stream): its 5-tuple ("IP:PORT" each end), its own figure,
// and its path where traced (docs/probes.md "Flows").
struct Flow {
  std::string protocol = "tcp";
  std::string source, destination;
  double bw_gbps = 0;
  std::vector<Hop> hops;
  bool traced = false;
  std::string trace_note;  // why the path is incomplete; empty when traced or not asked
  std::string queue_pair;  // RoCE: "mlx5_0:1 qp 1234 > qp 5678"
};

// One bandwidth row, as one line of ib_write_bw's table. Gb/s is 1e9 bit/s.
struct BwPoint {
  uint64_t size_bytes = 0;
  uint64_t iterations = 0;             // messages measured (all streams or queue pairs together)
  std::optional<double> bw_peak_gbps;  // absent where not measured (TCP, duration mode)
  double bw_avg_gbps = 0;
  double msg_rate_mpps = 0;
  // TCP: segments the sending side's streams sent in the timed part, and how many of them were
  // retransmissions (TCP_INFO); RDMA WRITE and SEND: the port's packets and retransmission
  // events (port_counters.h); absent where not measured.
  std::optional<uint64_t> segments, retransmits;
  // TCP: of those retransmissions, the ones the receiver reported it had already (D-SACK): not
  // lost, only late to be acknowledged (a busy host); absent where not measured.
  std::optional<uint64_t> spurious;
  // tcp_bw: each stream's figure and 5-tuple; the point's figure is their sum.
  std::vector<Flow> flows;
};

// One latency row, as one line of ib_write_lat's table: one-way time (RTT/2) in microseconds.
struct LatPoint {
  uint64_t size_bytes = 0;
  uint64_t iterations = 0;
  double t_min_us = 0;
  double t_max_us = 0;
  double t_typical_us = 0;  // median
  double t_avg_us = 0;
  double t_stdev_us = 0;
  double t_p99_us = 0;
  double t_p999_us = 0;
};

// One row of all_reduce_perf's table, from one rank.
struct CollectivePoint {
  uint64_t size_bytes = 0;
  double time_us = 0;       // per operation
  double algbw_gbytes = 0;  // GB/s (1e9)
  double busbw_gbytes = 0;
  uint64_t wrong = 0;       // elements that failed the data check
  double send_time_us = 0;  // this rank's link to the right, timed on its own (0: not timed)
};

// The bytes a rank's link to the right carries when it is timed on its own (send_time_us):
// the point's size, at most this.
inline constexpr uint64_t kLinkTimedBytes = 8u << 20;

// Host-device copy bandwidth of one GPU at one size (pinned host memory), GB/s (1e9).
struct CopyPoint {
  uint32_t gpu_index = 0;
  uint64_t size_bytes = 0;
  double h2d_gbytes = 0;
  double d2h_gbytes = 0;
};

enum class Outcome {
  kOk,       // measured
  kSkipped,  // does not apply here (no device, memlock too low); see reason
  kFailed,   // could not run; see reason; nothing measured
  kTimeout,  // killed by its deadline
};

// perftest-style "key : value" lines describing how a run was set up.
using InfoLines = std::vector<std::pair<std::string, std::string>>;

// What one probe run produced. Plain data; proto conversion is in probes/common/convert.
struct ProbeRun {
  std::string kind;  // "tcp_bw", "rdma_write_lat", ...
  Outcome outcome = Outcome::kFailed;
  std::string reason;
  // Why not measured, as a v1::FailureCause value, and whether the server half saw it (the
  // client half's run reports both; 0: unspecified). Set from the failing Status (cause.h).
  int cause = 0;
  bool server_side = false;
  std::string device;  // "tcp", "mlx5_0:1"
  // RDMA: each half's buffers, "host" or "gpu 0 (dma-buf)" (GPUDirect RDMA and its path).
  std::string client_memory, server_memory;
  InfoLines setup;  // e.g. {"Mtu", "4096[B]"}, {"GID index", "3"}
  std::vector<BwPoint> bw;
  std::vector<LatPoint> lat;
  std::vector<CollectivePoint> collective;
  std::vector<CopyPoint> copy;
  double elapsed_s = 0;

  static ProbeRun Skipped(std::string kind, std::string reason) {
    ProbeRun run;
    run.kind = std::move(kind);
    run.outcome = Outcome::kSkipped;
    run.reason = std::move(reason);
    return run;
  }
};

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_COMMON_RESULT_H_
