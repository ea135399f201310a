#ifndef FABRICCTL_BASE_CABLING_PLAN_H_
#define FABRICCTL_BASE_CABLING_PLAN_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/config.pb.h"

namespace fabricctl {

// The most cables a plan may hold (a cable a NIC: 12500 nodes of eight rails).
inline constexpr size_t kMaxCables = 100000;

// Reads a cabling plan (topology.cabling): one cable a line,
//
//   # node     netdev  switch        port
//   gpu001     eth0    leaf-r0-a     Ethernet1/1
//   gpu001     eth1    leaf-r1-a     Ethernet1/1
//   gpu[002-032] eth2  leaf-r2-a
//
// fields apart by blanks, '#' to the end of a line a comment. The port is optional; a node
// field may be a Slurm hostlist (a,b or gpu[001-004]) only where the port is left out (one port is
// one node's). An interface planned twice, a switch port planned for two cables, a line of fewer
// than three or more than four fields, a name that is not one, or more than `max_cables` cables is
// an error naming `source` and the line.
absl::StatusOr<std::vector<v1::Cable>> ParseCablingPlan(const std::string& text,
                                                        const std::string& source,
                                                        size_t max_cables = kMaxCables);

// topology.cables, after the cables of the plan file at `path` (topology.cabling resolved; empty:
// none) are added to those written in the configuration; the whole list checked as a file is.
absl::Status LoadCablingPlan(v1::Topology* topology, const std::string& path);

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_CABLING_PLAN_H_
