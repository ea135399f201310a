// The runner's re-tests: what the figures so far flag, measured again within a budget of time
// (SweepRunner::Retest).
#include <algorithm>
#include <set>
#include <vector>

#include "base/logging.h"
#include "controller/sweep/companions.h"
#include "controller/sweep/context.h"
#include "controller/sweep/fleet.h"
#include "controller/sweep/rails.h"
#include "controller/sweep/retest_plan.h"
#include "controller/sweep/rounds.h"
#include "controller/sweep/runner.h"

namespace fabricctl::controller {
namespace {

// How many leading rounds it takes to hold every pair of `wanted` (PackRounds places the
// pairs listed first in the earliest rounds).
size_t RoundsHolding(const std::vector<Round>& rounds, const std::set<Pair>& wanted) {
  size_t held = 0;
  for (size_t r = 0; r < rounds.size(); ++r) {
    for (const Pair& p : rounds[r]) {
      if (wanted.count(p)) held = r + 1;
    }
  }
  return held;
}

}  // namespace

// Re-tests what the figures so far flag (sweep::RetestPairs, each rail's on its own, all rails
// at once), up to `retests` passes, asking the nodes whose RPCs failed in transport whether
// they are still there before each pass. The passes share a budget of time, `retest_budget`
// of what the measuring rounds took: each pass's first round, and every round holding a pair
// that decides a suspect node's or a switch element's verdict (RetestPairs lists them first),
// run whatever they cost; the others only while the budget lasts; what is left over is
// counted.
void SweepRunner::Retest(sweep::SweepContext& sweep, absl::Duration measuring) {
  const v1::Config& config = sweep.config;
  const sweep::SweepSpecs& specs = sweep.specs;
  sweep::Fleet& fleet = sweep.fleet;
  sweep::RailRunners& runners = sweep.runners;
  sweep::RetestStats& stats = sweep.retests;
  stats.budget = measuring * config.sweep().retest_budget();
  const uint32_t retests = config.sweep().retests();
  sweep::CheckReachable(*agents_, fleet, options_.inventory_timeout, /*only_suspect=*/true);
  for (uint32_t attempt = 2; attempt <= 1 + retests && !stopping_; ++attempt) {
    std::vector<std::vector<Round>> by_rail(runners.size()), companions(runners.size());
    bool any = false, bandwidth_only = true;
    size_t must_run = 1;  // the rounds that hold a pair deciding a node's or a switch's verdict
    for (size_t r = 0; r < runners.size(); ++r) {
      std::vector<const sweep::PairRun*> ordered;
      const AnalysisInput in =
          sweep::BuildRailInput(fleet, specs, config, sweep.rails[r], runners.rail(r), &ordered);
      bool rail_bandwidth_only = false;
      size_t deciding = 0;
      const std::vector<Pair> pairs =
          sweep::RetestPairs(fleet, in, ordered, &rail_bandwidth_only, &deciding);
      if (pairs.empty()) continue;
      any = true;
      bandwidth_only = bandwidth_only && rail_bandwidth_only;
      by_rail[r] = PackRounds(pairs);
      companions[r] = sweep::AddCompanions(in, by_rail[r]);
      must_run = std::max(
          must_run,
          RoundsHolding(by_rail[r], std::set<Pair>(pairs.begin(), pairs.begin() + deciding)));
    }
    if (!any) break;
    std::vector<bool> only(specs.kinds.size(), true);
    if (bandwidth_only) {
      for (size_t k = 0; k < specs.kinds.size(); ++k)
        only[k] = static_cast<int>(k) == specs.bw_index;
    }
    const absl::Time start = absl::Now();
    const size_t ran =
        runners.Run(by_rail, attempt, "retest",
                    {&only, start + (stats.budget - stats.spent), must_run, &companions});
    stats.spent += absl::Now() - start;
    stats.Count(by_rail, ran);
    sweep::CheckReachable(*agents_, fleet, options_.inventory_timeout, /*only_suspect=*/true);
  }
  if (stats.skipped() > 0) {
    Logger("sweep")->warn(
        "re-tests: {} flagged pairs not measured again: the budget of {} was spent",
        stats.skipped(), absl::FormatDuration(stats.budget));
  }
}

SweepRunner::SweepRunner(Store* store, std::shared_ptr<grpc::ChannelCredentials> credentials,
                         SweepOptions options)
    : SweepRunner(store, sweep::NewGrpcAgentClient(std::move(credentials)), std::move(options)) {}

}  // namespace fabricctl::controller
