#ifndef FABRICCTL_CONTROLLER_SWEEP_CONTEXT_H_
#define FABRICCTL_CONTROLLER_SWEEP_CONTEXT_H_

#include <vector>

#include "absl/time/time.h"
#include "controller/sweep/allreduce.h"
#include "controller/sweep/assemble.h"
#include "controller/sweep/fleet.h"
#include "controller/sweep/plan.h"
#include "controller/sweep/rails.h"
#include "controller/sweep/rounds.h"
#include "controller/sweep/specs.h"
#include "controller/verdict/node_bandwidth.h"
#include "proto/config.pb.h"
#include "proto/controller.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::controller::sweep {

// A sweep in progress: what was asked and with which configuration, the nodes and the plan,
// the runners that measure and hold every result, and what the later stages add (the
// all-reduce groups, the re-tests' bookkeeping). The runner (runner.h) builds it one stage at a
// time and owns it for the length of the sweep; each stage borrows it.
struct SweepContext {
  const v1::SweepRequest& request;
  const v1::Config& config;  // as it was when the sweep started (a reload waits for the next)
  const SweepSpecs& specs;
  Fleet& fleet;
  const Plan& plan;
  const std::vector<RailPlan>& rails;
  RailRunners& runners;
  const ProgressFn& progress;
  v1::SweepInfo info;  // as the started event said
  absl::Time started;
  v1::Report baseline;  // the --baseline sweep's report; empty without one
  std::vector<RingRun> rings;
  RetestStats retests;
  // The node-bandwidth stage's pairs (node_bandwidth.h); empty when it did not run.
  std::vector<NodeBandwidthPair> node_bandwidth;
};

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_CONTEXT_H_
