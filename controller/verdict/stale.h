#ifndef FABRICCTL_CONTROLLER_VERDICT_STALE_H_
#define FABRICCTL_CONTROLLER_VERDICT_STALE_H_

// The incremental gate (`fabricctl sweep --max-age`): which of a sweep's nodes to measure again,
// decided by the controller from the passes it recorded.
//
// A node is fresh when it is online and known-good (a completed sweep earned it a pass, and
// nothing ended that since), that pass is at most `max_age` old, and it covered what this sweep
// asks for: each of its pair probe kinds and rails (a tcp_bw pass does not vouch for
// rdma_write_bw). Every other node is stale. The stale nodes are measured beside
// max(kMinReferences, their number) fresh nodes of the request (fewer only where it has
// fewer; at most kMaxReferences), the most recently passed first, which judge them as the
// sweep's reference nodes: the stale nodes never make the typical figure alone, however many
// share a fault. Each fresh node left out gets a known_good finding saying which sweep vouches
// for it.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "proto/finding.pb.h"
#include "proto/probe.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::controller {

inline constexpr size_t kMinReferences = 3;
inline constexpr size_t kMaxReferences = 64;  // SweepRequest.reference_nodes' bound

// A node as the registry and its known-good record stand.
struct Standing {
  std::string node;
  bool online = false;
  bool passed = false;  // a pass is recorded (it may since be lost)
  bool good = false;    // and nothing ended it
  int64_t sweep_id = 0;
  absl::Time passed_at;
  v1::NodePass coverage;
};

struct StaleAsk {
  std::vector<std::string> nodes;  // the request's, in its order (empty: every standing node)
  absl::Duration max_age;
  absl::Time now;
  std::vector<v1::ProbeKind> probes;  // what the sweep measures
  std::vector<std::string> rails;     // and on which rails (empty: whatever it has)
};

struct StalePlan {
  std::vector<std::string> stale;       // in the order asked
  std::vector<std::string> references;  // fresh nodes measured beside them
  std::vector<v1::Finding> skipped;     // one known_good finding per fresh node left out
  std::string decision;                 // one line for the report: what was measured and why
  // stale, then references: the sweep's nodes; empty when every node is fresh.
  std::vector<std::string> Measure() const;
};

// `standing`: the registry's nodes (a node it does not hold is stale: the sweep reports it
// unreachable).
StalePlan PlanStale(const StaleAsk& ask, const std::vector<Standing>& standing);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_STALE_H_
