#ifndef FABRICCTL_PROBES_TCP_HOST_DROPS_H_
#define FABRICCTL_PROBES_TCP_HOST_DROPS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "probes/sysfs/sysfs_root.h"

namespace fabricctl::probes {

// Packets this host received and threw away itself, by counter: what a busy receiver drops
// before its sockets read them (so that its peers retransmit) without the link losing anything.
//   TcpExt (/proc/net/netstat, this network namespace's): TCPBacklogDrop (a socket's backlog
//   full while its owner held it), TCPRcvQDrop (the receive queue over its memory),
//   TCPZeroWindowDrop, RcvPruned (the receive queue pruned to make room), PFMemallocDrop (not
//   the out-of-order queue's drops: a link's loss fills that queue);
//   softnet_dropped (/proc/net/softnet_stat's second column, summed over CPUs: a CPU's input
//   backlog full, net.core.netdev_max_backlog);
//   rx_missed_errors, rx_fifo_errors of every NIC (a netdev with a device link; statistics/:
//   its ring full, the host not taking packets off it fast enough).
struct HostDrops {
  std::map<std::string, uint64_t> counters;
  uint64_t Total() const;
  // "TCPBacklogDrop +12, softnet_dropped +3": the counters that rose, for a report.
  std::string Describe() const;
};

// The host's counters now, through `root`; nullopt when /proc/net/netstat cannot be read.
std::optional<HostDrops> ReadHostDrops(const SysfsRoot& root);

// What rose from `before` to `after`, counter by counter (a counter lower after is a reset,
// not a rise; a counter missing from either is left out).
HostDrops DropsSince(const HostDrops& before, const HostDrops& after);

// The parsers, pure (fuzzed): /proc/net/netstat's TcpExt counters named above, by name (a
// header line of names and a line of values per group); and the sum of softnet_stat's dropped
// column (hexadecimal, one line a CPU). Malformed lines are skipped.
std::map<std::string, uint64_t> ParseTcpExtDrops(const std::string& netstat);
std::optional<uint64_t> ParseSoftnetDropped(const std::string& softnet_stat);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_TCP_HOST_DROPS_H_
