#ifndef FABRICCTL_PROBES_TCP_TCP_INFO_H_
#define FABRICCTL_PROBES_TCP_TCP_INFO_H_

#include <cstdint>
#include <optional>

namespace fabricctl::probes {

// What the kernel counted on one TCP socket (TCP_INFO): segments sent, and how many of them
// were retransmissions (a lost segment is sent again). Cumulative over the connection's life.
struct TcpCounters {
  uint64_t segments_out = 0;
  uint64_t retransmits = 0;
};

// The socket's counters; nullopt when the kernel does not report them (not TCP, or a kernel
// older than 4.2 without tcpi_segs_out).
std::optional<TcpCounters> ReadTcpCounters(int fd);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_TCP_TCP_INFO_H_
