// Its own file: <linux/tcp.h> (which has tcpi_segs_out) and glibc's <netinet/tcp.h> (which the
// probes use, and whose tcp_info stops before it) cannot be included together.
#include "probes/tcp/tcp_info.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

namespace fabricctl::probes {

std::optional<TcpCounters> ReadTcpCounters(int fd) {
  tcp_info info{};
  socklen_t length = sizeof(info);
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return std::nullopt;
  if (length < offsetof(tcp_info, tcpi_segs_out) + sizeof(info.tcpi_segs_out)) return std::nullopt;
  TcpCounters c{info.tcpi_segs_out, info.tcpi_total_retrans, 0};
  if (length >= offsetof(tcp_info, tcpi_dsack_dups) + sizeof(info.tcpi_dsack_dups)) {
    c.duplicates = info.tcpi_dsack_dups;
  }
  return c;
}

}  // namespace fabricctl::probes
