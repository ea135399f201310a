#ifndef FABRICCTL_CONTROLLER_SWEEP_PLAN_H_
#define FABRICCTL_CONTROLLER_SWEEP_PLAN_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "controller/sweep/fleet.h"
#include "controller/sweep/pairing.h"
#include "proto/config.pb.h"
#include "proto/controller.pb.h"

namespace fabricctl::controller::sweep {

struct Plan {
  v1::Pairing pairing = v1::PAIRING_FULL;  // as run (unspecified resolves to full)
  std::vector<Round> rounds;               // pairs of fleet node indices
};

// Rounds of disjoint pairs over the fleet's reachable nodes, by the request's pairing (or the
// configuration's): full, quick (across the groups of sweep.group_by_label), sample (seeded by
// `started`) or a file. A file naming an unknown node is INVALID_ARGUMENT.
absl::StatusOr<Plan> PlanRounds(const v1::SweepRequest& request, const v1::Config& config,
                                const Fleet& fleet, absl::Time started);

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_PLAN_H_
