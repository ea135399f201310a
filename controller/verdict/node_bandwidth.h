#ifndef FABRICCTL_CONTROLLER_VERDICT_NODE_BANDWIDTH_H_
#define FABRICCTL_CONTROLLER_VERDICT_NODE_BANDWIDTH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/config.pb.h"
#include "proto/finding.pb.h"

namespace fabricctl::controller {

// One direction of a pair of the node-bandwidth stage: `client` sent to `server` on every rail,
// each rail alone and then every rail at once; the sums of the rails' figures (Gb/s).
struct NodeBandwidthPair {
  uint32_t client = 0, server = 0;  // sender and receiver, indices into the names
  double alone_gbps = 0, together_gbps = 0;
  uint32_t rails = 0;  // rails measured both ways
};

// node_bandwidth_limited: a node that cannot feed its NICs together (its PCIe root complex, its
// CPU or its memory), from the node-bandwidth stage. A pair's share is together / alone (1:
// the rails add up). The fleet's typical share is the pairs' median, its noise the good side's
// spread of ln(share) (never below kMinLogSpread). A pair is limited when its share is at least
// thresholds.min_effect below 1 and either a robust outlier below the typical share (beyond
// ChanceBar(max_robust_z, the pairs)) or the typical share itself is that far below 1 (then the
// fleet is, and every pair so far below is named: a rule silent when half the fleet is limited
// would be wrong). A node is named, on the side it is limited (evidence `direction`: transmit,
// receive or both), when it sent (or received) to two peers or more and every one of those
// directions is limited: its peers' other directions clear them. Critical, drain.
std::vector<v1::Finding> JudgeNodeBandwidth(const std::vector<NodeBandwidthPair>& pairs,
                                            const std::vector<std::string>& names,
                                            const v1::Thresholds& thresholds);

// The smallest explanation: a node that cannot feed its NICs together is slow on every rail
// that ran at once with the others, and by how much depends on what its other rails carry at the
// moment: the rails' findings about it (slow_nic, straggler_node, and slow_link or unstable with
// it at an end) are its node_bandwidth_limited, and are dropped.
void SubsumeByNodeBandwidth(const std::vector<v1::Finding>& limited,
                            std::vector<v1::Finding>* findings);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_NODE_BANDWIDTH_H_
