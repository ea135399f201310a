#ifndef FABRICCTL_CONTROLLER_SWEEP_ASSEMBLE_H_
#define FABRICCTL_CONTROLLER_SWEEP_ASSEMBLE_H_

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "controller/sweep/allreduce.h"
#include "controller/sweep/fleet.h"
#include "controller/sweep/rails.h"
#include "controller/sweep/rounds.h"
#include "controller/verdict/analysis.h"
#include "controller/verdict/breaker.h"
#include "controller/verdict/slow_rail.h"
#include "proto/config.pb.h"
#include "proto/report.pb.h"
#include "report/builder.h"

namespace fabricctl::controller::sweep {

// One rail's measurements and their analysis (without rails: the sweep's one rail, no name).
struct RailOutcome {
  std::string rail;
  std::vector<bool> absent;  // nodes that lack the rail, by fleet index, and why
  std::vector<std::string> absent_reason;
  AnalysisInput input;
  AnalysisResult analysis;
  std::vector<const PairRun*> pairs;  // in the analysis input's pair order
};

// Each rail's figures for CompareRails (verdict/slow_rail.h): its analysis's typical figure and
// noise, and the link rate most of its nodes' NICs report (the RDMA port's rate, else the
// interface's speed).
std::vector<RailFigure> RailFigures(const Fleet& fleet, const v1::Config& config,
                                    const std::vector<RailPlan>& rails,
                                    const std::vector<RailOutcome>& outcomes);

// Everything a sweep's report is made of.
// What the re-tests and the localisation rounds did (SweepRunner::Retest, Measure), for the
// report's summary: their budget and the time they took, their rounds, the pairs they
// measured again and those the budget left. A pair is left when the last phase that asked for
// it did not measure it: one that several passes ask for and the budget leaves each time is
// one pair left, one measured by a later pass (or later in the same phase) is not.
struct RetestStats {
  absl::Duration budget, spent;
  uint32_t rounds = 0, pairs = 0;
  std::set<std::pair<size_t, Pair>> left;  // (rail, pair in either order, lower end first)
  uint32_t skipped() const { return static_cast<uint32_t>(left.size()); }
  // Adds a phase whose first `ran` rounds of `by_rail` ran: their pairs measured, the rest's
  // left.
  void Count(const std::vector<std::vector<Round>>& by_rail, size_t ran) {
    rounds += static_cast<uint32_t>(ran);
    std::set<std::pair<size_t, Pair>> measured;
    for (size_t r = 0; r < by_rail.size(); ++r) {
      for (size_t k = 0; k < by_rail[r].size(); ++k) {
        for (const Pair& p : by_rail[r][k]) {
          const std::pair<size_t, Pair> key{
              r, {std::min(p.first, p.second), std::max(p.first, p.second)}};
          if (k < ran) {
            ++pairs;
            measured.insert(key);
          } else {
            left.insert(key);
          }
        }
      }
    }
    for (const auto& key : measured) left.erase(key);
  }
};

struct SweepOutcome {
  const Fleet* fleet = nullptr;
  const std::vector<RailOutcome>* rails = nullptr;
  const std::vector<RingRun>* rings = nullptr;
  std::vector<v1::Finding> findings;  // the rails' combined, the all-reduce's, the regressions
  RetestStats retests;
  std::vector<v1::RailSummary> rail_summaries;  // the rails against each other (slow_rail.h)
  uint32_t vouched_nodes = 0;  // judged without a measurement (SweepSpecs), for the breaker
  EarlierDrains earlier;       // the verdicts within breaker.window
  // The rules on inventories' (config_drift, miscabled) and the node-bandwidth stage's
  // (node_bandwidth_limited): each raises its node's status, as its audits do (a node they flag
  // is not healthy, and not known-good).
  std::vector<v1::Finding> inventory_findings;
};

// The report of a sweep: the health map (nodes with their status, raised by their audits'
// findings, the worst over their rails; pairs with their rail, figures and every result), the
// findings, and the summary that report::ReportBuilder derives from them. A node's median is
// its slowest rail's; the fabric's best and typical figures the fastest rail's best and the
// median of the rails' typical figures.
v1::Report AssembleReport(const SweepOutcome& outcome, const v1::Config& config,
                          const v1::SweepInfo& info, absl::Time started, absl::Time finished);

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_ASSEMBLE_H_
