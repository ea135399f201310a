#ifndef FABRICCTL_BASE_IBNETDISCOVER_H_
#define FABRICCTL_BASE_IBNETDISCOVER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fabricctl {

// One host port of an InfiniBand fabric and the switch port it is cabled to.
struct IbHostPort {
  std::string host;         // the first word of the CA's NodeDescription ("gpu001 mlx5_0")
  std::string description;  // the whole NodeDescription
  std::string ca_guid;      // "0x8f10403960984"
  uint32_t port = 0;
  std::string switch_guid;  // "0x0008f10400410015"
  std::string switch_name;  // the switch's NodeDescription, else "S-<guid>"
  uint32_t switch_port = 0;
};

// Reads the topology file `ibnetdiscover` (infiniband-diags) prints: every CA port that is
// cabled to a switch, with the switch's GUID, name and port. Blocks start with vendid= ...,
// a "Ca N "H-guid" # "description"" line, then one "[port](portguid) "S-guid"[port] # ..."
// line per cabled port; switch blocks give each switch's NodeDescription. Lines it does not
// know are skipped; a CA or link line that does not parse, or any line over 4 KiB, is an error
// naming `source` and the line; more than `max_ports` host ports is an error. A host with
// several cabled ports (one per rail) is listed once per port, in the file's order.
absl::StatusOr<std::vector<IbHostPort>> ParseIbnetdiscover(const std::string& text,
                                                           const std::string& source,
                                                           size_t max_ports = 1000000);

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_IBNETDISCOVER_H_
