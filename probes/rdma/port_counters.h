#ifndef FABRICCTL_PROBES_RDMA_PORT_COUNTERS_H_
#define FABRICCTL_PROBES_RDMA_PORT_COUNTERS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "probes/sysfs/sysfs_root.h"

namespace fabricctl::probes {

// What an RDMA port counted, read from sysfs around a probe: the packets it sent
// (counters/port_xmit_packets) and the transport's retransmission events (hw_counters: RoCE's
// adaptive retransmissions, roce_adp_retrans, or without it the ACK timeouts that made the
// sender retransmit, local_ack_timeout_err, which count the same events; and the NAKs for a
// sequence error, each a go-back-N resend, packet_seq_err). `retransmits` is absent when the
// driver has none of them (soft-RoCE names its own).
struct PortCounters {
  uint64_t xmit_packets = 0;
  std::optional<uint64_t> retransmits;
};

// Nullopt when the port has no port_xmit_packets.
std::optional<PortCounters> ReadPortCounters(const SysfsRoot& sysfs, const std::string& device,
                                             uint32_t port);

// The sender's share of a probe's packets, as tcp_bw's TCP_INFO gives it: packets sent and
// retransmission events between `before` and `after`; nullopt when either read failed, the
// driver counts no retransmissions, or a counter went backwards (reset meanwhile).
struct PortLoss {
  uint64_t packets = 0, retransmits = 0;
};
std::optional<PortLoss> LossBetween(const std::optional<PortCounters>& before,
                                    const std::optional<PortCounters>& after);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_RDMA_PORT_COUNTERS_H_
