#ifndef FABRICCTL_CLI_KNOWN_GOOD_H_
#define FABRICCTL_CLI_KNOWN_GOOD_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "proto/controller.pb.h"
#include "proto/finding.pb.h"

namespace fabricctl::cli {

// `fabricctl sweep --max-age`: which of a sweep's nodes to measure again.
//
// A node is fresh when the registry says it is online and known-good (a completed sweep passed
// it, and no later sweep, agent restart, inventory or link change ended that) and that sweep
// ended at most `max_age` ago. Every other node is stale: it is measured, and so are up to
// kReferences fresh nodes beside it, the most recently passed first, so that a stale node has
// known-good partners to be judged with (a slow pair then points at the stale end) and the
// sweep is never one node alone when others are at hand. Each fresh node left out gets a
// known_good finding saying which sweep vouches for it.
struct StalePlan {
  std::vector<std::string> stale;       // in the order asked
  std::vector<std::string> references;  // fresh nodes measured beside them
  std::vector<v1::Finding> skipped;     // one known_good finding per fresh node left out
  // stale, then references: the sweep's nodes; empty when every node is fresh.
  std::vector<std::string> Measure() const;
};

inline constexpr size_t kReferences = 2;

// `wanted`: the sweep's nodes (empty: every node listed); `nodes`: ListNodes' answer for them.
// A node the registry does not list is stale (the sweep reports it unreachable).
StalePlan PlanStale(const std::vector<std::string>& wanted, const v1::ListNodesResponse& nodes,
                    absl::Duration max_age, absl::Time now);

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_KNOWN_GOOD_H_
