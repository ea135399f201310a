#ifndef FABRICCTL_CONTROLLER_VERDICT_CABLING_H_
#define FABRICCTL_CONTROLLER_VERDICT_CABLING_H_

#include <set>
#include <string>
#include <vector>

#include "controller/verdict/inventories.h"
#include "proto/config.pb.h"
#include "proto/finding.pb.h"

namespace fabricctl::controller {

// Each reachable node that is not a reference (in a sweep with references, as `fabricctl accept`
// asks), its cabling as LLDP sees it — else, for an interface LLDP shows nothing for, as
// topology.ibnetdiscover shows its HCA (topology.ib_cables, found by the HCA's node GUID, else
// by the NodeDescription "node device"; InfiniBand) — each interface judged by the first rule
// that covers it (a planned name may be an HCA, mlx5_0, where a fabric has no interfaces to
// name):
//
// 1. The cabling plan (topology.cables): the interface's LLDP neighbour must be the planned
//    switch, at the planned port where one is given (LLDP's port id or description). A planned
//    interface the node lacks, or one without a neighbour, is miscabled too.
// 2. Its rail's leaf_pattern: the neighbour's system name must match the glob.
// 3. The rails' rule as the reference nodes show it: NIC i of every node is cabled to a leaf of
//    rail i. A rail's leaves are the switches LLDP names at the reference nodes' interface of
//    that rail (`rails:` netdev). A node's interface of rail i is miscabled when LLDP names a
//    switch the references show on another rail (two NICs swapped are two findings, each naming
//    the other's rail), when it names none where every reference has one, or, in a fabric whose
//    references' rails never share a switch, when it names the same unknown switch as the
//    node's NIC of another rail. A switch the references do not show at all is not judged: it
//    may be the new rack's own leaf of that rail. A rail no reachable reference shows a
//    neighbour for is not judged (nothing says where it should be).
//
// Each finding's evidence says which rule (`source`: "cabling plan", "leaf_pattern"; none for
// the references'), what was `expected` and what was `seen`, and by what (`seen_by`: "LLDP",
// "ibnetdiscover"; none when nothing was).
std::vector<v1::Finding> CablingOfNewNodes(const std::vector<NodeFacts>& nodes,
                                           const v1::Config& config,
                                           const std::set<std::string>& references);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_CABLING_H_
