#ifndef FABRICCTL_CONTROLLER_VERDICT_RAILS_H_
#define FABRICCTL_CONTROLLER_VERDICT_RAILS_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "proto/finding.pb.h"

namespace fabricctl::controller {

// One rail's verdict: what its own analysis found, and which nodes lack the rail (why).
struct RailVerdict {
  std::string rail;    // the rail's name; "" without rails
  std::string netdev;  // its interface
  std::vector<v1::Finding> findings;
  std::map<std::string, std::string> absent;  // node -> why it lacks the rail
  std::set<std::string> unhealthy;            // nodes this rail did not judge OK
};

// The sweep's findings from its rails' verdicts. Each rail is judged on its own (NIC i against
// NIC i of the other nodes); then, for every finding (by kind, node, peer, device and port):
// - raised on every rail its subject has (two or more): one finding, no rail, evidence `rails`
//   lists them: the node's, the link's or the fabric's, not a NIC's;
// - raised on some of them: one finding per rail, naming it; a straggler_node there becomes
//   slow_nic (the node and the rail) where another rail judged the node OK and raised nothing
//   about it (its evidence that the host itself is fine);
// - a node that lacks a rail gets rail_missing on it (and no node_unreachable from that rail).
// Without rails (one rail with no name), the findings are returned as they are.
std::vector<v1::Finding> CombineRails(const std::vector<RailVerdict>& rails);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_RAILS_H_
