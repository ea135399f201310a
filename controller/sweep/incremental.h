#ifndef FABRICCTL_CONTROLLER_SWEEP_INCREMENTAL_H_
#define FABRICCTL_CONTROLLER_SWEEP_INCREMENTAL_H_

// The incremental gate (SweepRequest.max_age): the request narrowed to the nodes that are not
// known-good for what it measures, and the known-good nodes that judge them (PlanStale,
// controller/verdict/stale.h, decides; this gathers its input from the registry and the store
// and applies its answer to the request).
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "controller/store/store.h"
#include "controller/sweep/specs.h"
#include "controller/verdict/stale.h"
#include "proto/config.pb.h"
#include "proto/controller.pb.h"

namespace fabricctl::controller::sweep {

struct Incremental {
  v1::SweepRequest request;  // the stale nodes and their references; max_age cleared
  StalePlan plan;
};

// `online(node)`: whether the registry counts the node online now.
absl::StatusOr<Incremental> NarrowToStale(const v1::SweepRequest& asked, const v1::Config& config,
                                          const std::vector<StoredNode>& registry,
                                          const std::vector<Store::KnownGood>& known_good,
                                          const std::vector<bool>& online, absl::Time now);

// The references' figures where they last passed (SweepSpecs::stored_gbps): each reference that
// is known-good now and whose pass measured this sweep's bandwidth probe; none when the sweep
// measures no bandwidth or the store cannot say.
std::map<std::string, float> StoredReferenceFigures(const Store& store, const SweepSpecs& specs);

// The report of an incremental sweep with nothing to measure: every node vouched for.
v1::Report VouchedReport(const StalePlan& plan, absl::Time now);

// Adds what the plan decided to `report`: each vouched node's known_good finding, and the
// decision in its sweep information.
void NoteDecision(const StalePlan& plan, v1::Report* report);

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_INCREMENTAL_H_
