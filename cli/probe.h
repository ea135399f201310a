#ifndef FABRICCTL_CLI_PROBE_H_
#define FABRICCTL_CLI_PROBE_H_

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "probes/common/params.h"

namespace fabricctl::cli {

// `fabricctl probe`: a standalone server or client, like ib_write_bw or iperf3.
struct ProbeCommandOptions {
  std::string kind;  // "tcp_bw", "rdma_write_lat", ...
  bool server = false;
  // Server: address to listen on and whether to exit after one client session.
  std::string listen_host = "0.0.0.0";
  uint16_t port = 7402;
  bool one_off = false;
  // Client: HOST or HOST:PORT of the server.
  std::string target;
  std::string sizes;        // empty: probes.sizes' default for bandwidth, 2 for latency
  uint64_t iterations = 0;  // 0 with no duration: 5000 for bandwidth, 1000 for latency
  std::string duration;     // "10s"; exclusive with iterations
  uint64_t warmup = 0;
  probes::ProbeParams params;   // RDMA and TCP settings from flags
  std::string format = "text";  // text or json
  std::string units = "Gb";     // Gb (Gb/s) or MiB (MiB/s)
  std::string memory = "host";  // RDMA buffers in host or gpu memory (this side's)
};

// Runs the command; returns the exit code (0 measured, 3 refused, unreachable or not
// applicable here), writing the table or JSON to `out` and a one-line reason to `err`.
// `fabricctl probe`: its flags, into `options`.
CLI::App* AddProbeCommand(CLI::App& app, ProbeCommandOptions* options);

int RunProbeCommand(const ProbeCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_PROBE_H_
