#ifndef FABRICCTL_PROBES_TCP_TCP_INFO_H_
#define FABRICCTL_PROBES_TCP_TCP_INFO_H_

#include <cstdint>
#include <optional>

namespace fabricctl::probes {

// What the kernel counted on one TCP socket (TCP_INFO): segments sent, how many of them were
// retransmissions (a lost segment is sent again), and how many segments the receiver reported
// as duplicates (D-SACK, RFC 2883: a retransmission whose original had arrived, sent because an
// acknowledgement came late, not because anything was lost; 0 on kernels before 4.19).
// Cumulative over the connection's life.
struct TcpCounters {
  uint64_t segments_out = 0;
  uint64_t retransmits = 0;
  uint64_t duplicates = 0;
};

// The socket's counters; nullopt when the kernel does not report them (not TCP, or a kernel
// older than 4.2 without tcpi_segs_out).
std::optional<TcpCounters> ReadTcpCounters(int fd);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_TCP_TCP_INFO_H_
