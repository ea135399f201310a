#ifndef FABRICCTL_PROBES_GPU_NCCL_LOG_H_
#define FABRICCTL_PROBES_GPU_NCCL_LOG_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/finding.pb.h"
#include "proto/probe.pb.h"

namespace fabricctl::probes {

// What an NCCL_DEBUG=INFO log says about how NCCL moved data (as NCCL 2.18 to 2.30 write them;
// tests/fixtures/nccl holds examples): the network module in use, the devices NET/IB opened, each
// channel connection's transport, and whether GPUDirect RDMA carried inter-node traffic. Handles
// the formats of NCCL 2.18 to 2.30.
struct NcclLog {
  std::string version;                  // "2.30.7+cuda12.2"
  std::string host;                     // from the line envelope "host:pid:tid [dev]"
  std::string network;                  // "Using network X": IB (also RoCE), Socket, a plugin
  std::vector<std::string> ib_devices;  // "NET/IB : Using [0]mlx5_0:1/RoCE ..." -> mlx5_0:1/RoCE
  bool ib_no_device = false;            // "NET/IB : No device found."
  // Connections by "send/receive rank[dev] -> rank[dev]": the transport after "via".
  std::map<std::string, std::string> channels;
  int net_channels = 0;          // inter-node (NET/...) connections
  int socket_channels = 0;       // of which over NET/Socket
  int gdr_channels = 0;          // of which with /GDRDMA
  std::optional<bool> ring_gdr;  // "Connected all rings, use ring PXN %d GDR %d" (>= 2.25)
  // The first line behind each verdict, for findings: "network", "socket", "no_gdr", "gdr".
  std::map<std::string, std::string> evidence;
  int lines = 0;  // NCCL lines recognised
};

// Parses a log's text. Pure and fuzzed: any bytes give a value.
NcclLog ParseNcclLog(const std::string& text);

// The largest NCCL log read: a job's NCCL_DEBUG=INFO log is a few MiB at most.
inline constexpr size_t kMaxNcclLogBytes = 64u << 20;

// What a node's NCCL network choice is weighed against when the log shows no traffic between
// nodes (a single node's run): whether RDMA is expected there, and why.
struct NcclExpectation {
  // Why RDMA is expected ("expect.link_rate_gbps is set", "RDMA device mlx5_0 is present");
  // empty: it is not (no expect.* says RDMA and the node has no RDMA device).
  std::string rdma_expected_because;
};

// The findings a log supports, for `node` (the log's host when empty):
// - tcp_fallback, critical, when NCCL sent inter-node connections over sockets (evidence of a
//   fallback that happened, with the line);
// - tcp_fallback when NCCL chose the Socket network but sent nothing between nodes (a single
//   node's run): critical when `expect` says RDMA is expected there, a warning otherwise; the
//   text says which;
// - gpudirect_unavailable when NET/IB traffic was staged through host memory.
std::vector<v1::Finding> NcclLogFindings(const NcclLog& log, const std::string& source,
                                         const NcclExpectation& expect = {});

// The proto summary of a log (ProbeResult.nccl).
v1::NcclTransport NcclTransportOf(const NcclLog& log);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_GPU_NCCL_LOG_H_
