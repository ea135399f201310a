#ifndef FABRICCTL_PROBES_AUDIT_DCB_H_
#define FABRICCTL_PROBES_AUDIT_DCB_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fabricctl::probes {

// IEEE 802.1Qaz state of one netdev from DCB netlink (RTM_GETDCB / DCB_CMD_IEEE_GET, as
// `dcb` of iproute2 and mlnx_qos read it; dcb(8)).
struct DcbApp {
  uint8_t selector = 0;  // 5: DSCP (IEEE_8021QAZ_APP_SEL_DSCP)
  uint8_t priority = 0;
  uint16_t protocol = 0;  // the DSCP value for selector 5
};

struct DcbIeee {
  bool has_pfc = false;
  uint8_t pfc_enabled = 0;  // bit p: PFC on priority p
  std::vector<DcbApp> apps;
};

// The request, as bytes to send on a NETLINK_ROUTE socket.
std::string BuildDcbIeeeGetRequest(const std::string& ifname, uint32_t sequence);

// Parses the kernel's reply (one or more netlink messages). A netlink error reply becomes a
// Status (EOPNOTSUPP: the netdev has no DCB support -> Unimplemented). Pure and fuzzed: any
// bytes give a value or an error, never a read out of bounds.
absl::StatusOr<DcbIeee> ParseDcbIeeeReply(const std::string& bytes);

// Asks the kernel about `ifname` (live systems only; fixtures keep replies as files).
absl::StatusOr<std::string> QueryDcbIeee(const std::string& ifname);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_AUDIT_DCB_H_
