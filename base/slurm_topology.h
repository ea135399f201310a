#ifndef FABRICCTL_BASE_SLURM_TOPOLOGY_H_
#define FABRICCTL_BASE_SLURM_TOPOLOGY_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fabricctl {

// Reads Slurm's topology.conf (the tree plugin's format):
//
//   SwitchName=leaf1 Nodes=gpu[001-032]
//   SwitchName=spine1 Switches=leaf[1-4]
//
// and returns, for every node a switch lists, the switches above it from its own upward
// (gpu001 -> leaf1, spine1). Keys are matched without regard to case as Slurm does; other
// keys (LinkSpeed) are ignored; '#' starts a comment; a line ending in '\' continues. A node
// or switch listed under two switches, a switch in a cycle, a bad hostlist, a line without
// SwitchName, or lists expanding to more than `max_nodes` names in all (nodes and switches)
// is an error naming `source` and the line.
absl::StatusOr<std::map<std::string, std::vector<std::string>>> ParseSlurmTopology(
    const std::string& text, const std::string& source, size_t max_nodes = 100000);

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_SLURM_TOPOLOGY_H_
