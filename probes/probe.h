#ifndef FABRICCTL_PROBES_PROBE_H_
#define FABRICCTL_PROBES_PROBE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "base/socket.h"
#include "probes/common/params.h"
#include "probes/common/result.h"
#include "proto/probe.pb.h"

namespace fabricctl::probes {

// Where the client half finds the server half: the server's out-of-band TCP port. TCP probes
// carry their data on connections to it; RDMA probes exchange queue-pair data over it.
struct ServerAddress {
  std::string host;
  uint16_t port = 0;
};

// What the server half knows of its own side.
struct ServeContext {
  ServeContext() = default;
  ServeContext(ProbeLimits limits, RdmaParams local_rdma)
      : limits(std::move(limits)), local_rdma(std::move(local_rdma)) {}

  ProbeLimits limits;
  // This node's RDMA selection (device, port, GID index); the client's request names its own.
  RdmaParams local_rdma;
  // Stops the server half's sessions (set by ProbeServer; nullptr: none).
  Cancellation* cancel = nullptr;
  // A server started for one run: the secret every hello must carry (empty: any hello is
  // taken, as `fabricctl probe --server` does), and the spec the run was started with (a
  // hello asking for another measurement is refused).
  std::string token;
  std::optional<v1::ProbeSpec> expected_spec;
};

// One pair probe: a server half and a client half that measure together. Implementations are
// stateless and listed in one table (probes/table.h); each lives in its own folder.
class Probe {
 public:
  virtual ~Probe() = default;

  virtual v1::ProbeKind kind() const = 0;
  // Stable name used on the command line and in reports: "tcp_bw", "rdma_write_lat".
  virtual const char* name() const = 0;
  // perftest-style table title: "RDMA_Write BW Test".
  virtual const char* title() const = 0;
  // Bandwidth rows (BwPoint) or latency rows (LatPoint).
  virtual bool measures_bandwidth() const = 0;

  // Server half of one out-of-band connection, after its hello was read and validated against
  // context.limits. Sends the ProbeWelcome itself (RDMA probes put their queue pairs in it).
  // Returns when the client is done with this connection.
  virtual absl::Status Serve(net::UniqueFd connection, const v1::ProbeHello& hello,
                             const ServeContext& context) const = 0;

  // Client half: the whole size sweep against `server`. Never throws; a probe that cannot run
  // returns kSkipped or kFailed with the reason, never zeros.
  virtual ProbeRun Run(const ProbeParams& params, const ServerAddress& server) const = 0;
};

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_PROBE_H_
