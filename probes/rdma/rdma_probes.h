#ifndef FABRICCTL_PROBES_RDMA_RDMA_PROBES_H_
#define FABRICCTL_PROBES_RDMA_RDMA_PROBES_H_

#include "probes/probe.h"

namespace fabricctl::probes {

enum class RdmaVerb { kWrite, kSend, kRead };

// rdma_write_bw, rdma_send_bw, rdma_read_bw: RC queue-pair bandwidth as ib_write_bw,
// ib_send_bw and ib_read_bw measure it (perftest's src/perftest_resources.c): tx_depth work
// requests in flight, one completion every cq_moderation messages, time from the first post to the
// last completion, peak over post-to-completion windows. The queue-pair data crosses the
// out-of-band connection; per message size the two sides meet there before measuring.
class RdmaBwProbe final : public Probe {
 public:
  explicit RdmaBwProbe(RdmaVerb verb) : verb_(verb) {}
  v1::ProbeKind kind() const override;
  const char* name() const override;
  const char* title() const override;
  bool measures_bandwidth() const override { return true; }
  absl::Status Serve(net::UniqueFd connection, const v1::ProbeHello& hello,
                     const ServeContext& context) const override;
  ProbeRun Run(const ProbeParams& params, const ServerAddress& server) const override;

 private:
  RdmaVerb verb_;
};

// rdma_write_lat, rdma_send_lat: ping-pong as ib_write_lat (each side spins on the last byte of
// its receive area, then writes back) and ib_send_lat (SEND/RECV); one-way latency, RTT/2.
class RdmaLatProbe final : public Probe {
 public:
  explicit RdmaLatProbe(RdmaVerb verb) : verb_(verb) {}
  v1::ProbeKind kind() const override;
  const char* name() const override;
  const char* title() const override;
  bool measures_bandwidth() const override { return false; }
  absl::Status Serve(net::UniqueFd connection, const v1::ProbeHello& hello,
                     const ServeContext& context) const override;
  ProbeRun Run(const ProbeParams& params, const ServerAddress& server) const override;

 private:
  RdmaVerb verb_;  // kWrite or kSend
};

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_RDMA_RDMA_PROBES_H_
