#ifndef FABRICCTL_CONTROLLER_VERDICT_ALLREDUCE_H_
#define FABRICCTL_CONTROLLER_VERDICT_ALLREDUCE_H_

#include <string>
#include <vector>

#include "proto/config.pb.h"
#include "proto/finding.pb.h"
#include "proto/probe.pb.h"

namespace fabricctl::controller {

// One all-reduce group as it ran: its members in ring order, the combined result and each
// rank's (one per node), and the bandwidths of the sweep's pairs inside the group.
struct RingOutcome {
  std::string group;                          // "rack=r1"; empty for the whole sweep
  std::vector<std::string> members;           // node names, ring order
  v1::ProbeResult collective;                 // combined; no points when it did not measure
  std::vector<v1::ProbeResult> rank_results;  // one per member
  std::vector<double> pairwise_gbps;          // measured pairs with both ends in the group
};

// The verdict on one group:
// - what NCCL's logs said, node by node (the ranks' own findings);
// - probe_failed / probe_timeout (warning) when the collective did not measure;
// - allreduce_below_threshold (critical) when busbw at the largest size is below
//   thresholds.min_allreduce_busbw_gbytes, or below thresholds.relative_allreduce_busbw of the
//   group's median pairwise bandwidth, or when a link of the ring stands out: each rank's send
//   time is the time of its link to the right; links slower than twice the typical one (the
//   median of the quicker half of the timed links, as up to half the links of a small ring may
//   be slow; a rank that timed none, 0, is no figure) are slow;
//   the node with both its links slow (in and out) is named, else the sender of a lone slow link;
// - probe_failed (critical) when the data check found wrong elements.
std::vector<v1::Finding> JudgeAllreduce(const RingOutcome& ring, const v1::Thresholds& thresholds);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_ALLREDUCE_H_
