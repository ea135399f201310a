#ifndef FABRICCTL_PROBES_TCP_TCP_PROBES_H_
#define FABRICCTL_PROBES_TCP_TCP_PROBES_H_

#include "probes/probe.h"

namespace fabricctl::probes {

// tcp_bw: bulk transfer over one or more TCP streams, the fallback path NCCL takes when RDMA
// is off. Per message size, each stream is its own connection: the client writes messages of
// that size (a count, or for a duration) and closes its side; the server counts every byte up
// to the end of the stream and reports the count, so the figure is what arrived, as iperf3's
// receiver reports it. Time runs from the first write to the last count received.
class TcpBwProbe final : public Probe {
 public:
  v1::ProbeKind kind() const override { return v1::TCP_BW; }
  const char* name() const override { return "tcp_bw"; }
  const char* title() const override { return "TCP BW Test"; }
  bool measures_bandwidth() const override { return true; }
  absl::Status Serve(net::UniqueFd connection, const v1::ProbeHello& hello,
                     const ServeContext& context) const override;
  ProbeRun Run(const ProbeParams& params, const ServerAddress& server) const override;
};

// tcp_lat: ping-pong of one message over a TCP_NODELAY connection; each round trip is one
// sample and the reported latency is RTT/2, as perftest's write and send latency tests and
// sockperf's ping-pong report it.
class TcpLatProbe final : public Probe {
 public:
  v1::ProbeKind kind() const override { return v1::TCP_LAT; }
  const char* name() const override { return "tcp_lat"; }
  const char* title() const override { return "TCP Latency Test"; }
  bool measures_bandwidth() const override { return false; }
  absl::Status Serve(net::UniqueFd connection, const v1::ProbeHello& hello,
                     const ServeContext& context) const override;
  ProbeRun Run(const ProbeParams& params, const ServerAddress& server) const override;
};

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_TCP_TCP_PROBES_H_
