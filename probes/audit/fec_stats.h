#ifndef FABRICCTL_PROBES_AUDIT_FEC_STATS_H_
#define FABRICCTL_PROBES_AUDIT_FEC_STATS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace fabricctl::probes {

// A netdev's forward error correction counts since its driver began counting, as ethtool netlink
// gives them (ETHTOOL_MSG_FEC_GET with ETHTOOL_FLAG_STATS; what `ethtool -I --show-fec IFACE`
// prints): the totals over the link's lanes. Each is absent where the driver does not count it;
// an absent count is never read as 0.
struct FecCounts {
  // Blocks received with errors that FEC corrected (IEEE 802.3 30.5.1.1.17
  // aFECCorrectedBlocks). A PAM4 link corrects blocks all the time: a count says nothing
  // without the link's budget.
  std::optional<uint64_t> corrected;
  // Blocks with more errors than FEC could correct (30.5.1.1.18 aFECUncorrectableBlocks):
  // their frames were lost.
  std::optional<uint64_t> uncorrected;
  // Bits corrected (not in the standard; few drivers count them).
  std::optional<uint64_t> corrected_bits;

  bool empty() const { return !corrected && !uncorrected && !corrected_bits; }
};

// The counts in the attributes of an ETHTOOL_MSG_FEC_GET reply (the bytes after its genl
// header). The ETHTOOL_A_FEC_STATS nest holds ETHTOOL_A_FEC_STAT_CORRECTED, _UNCORR and
// _CORR_BITS, each an array of u64: the total first, then one per lane; the kernel sends an
// empty array for a count the driver does not keep. A reply without the nest (a request without
// ETHTOOL_FLAG_STATS, a kernel older than FEC statistics) gives empty counts, not an error.
// Pure and fuzzed: any bytes give counts or InvalidArgument naming what is malformed (an
// attribute shorter than its header or running past its end, an array that is not whole u64
// values), never a read out of bounds.
absl::StatusOr<FecCounts> ParseFecReply(const std::string& attributes);

// The FEC counts of `ifname` on this machine (live systems only): one ethtool netlink request on
// a socket of its own. The kernel answers it within the send, under the rtnl lock, as it does a
// read of the netdev's `speed` in sysfs; only the wait for the reply is bounded (2 s).
// Unimplemented where the kernel (without ethtool netlink or FEC_GET) or the driver (veth, lo,
// most virtual devices: EOPNOTSUPP) has no FEC, or where the driver counts none of the three:
// that does not change while the driver is loaded, so a caller may stop asking. NotFound where
// the netdev does not exist (for now: a driver reloading). No privilege needed.
absl::StatusOr<FecCounts> ReadFecCounts(const std::string& ifname);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_AUDIT_FEC_STATS_H_
