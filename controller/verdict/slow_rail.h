#ifndef FABRICCTL_CONTROLLER_VERDICT_SLOW_RAIL_H_
#define FABRICCTL_CONTROLLER_VERDICT_SLOW_RAIL_H_

#include <limits>
#include <string>
#include <vector>

#include "proto/config.pb.h"
#include "proto/finding.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::controller {

// One rail as its own analysis judged it.
struct RailFigure {
  std::string rail, netdev;
  // Its typical bandwidth (AnalysisResult::median_bw_gbps) and its pairs' noise on a log scale
  // (AnalysisResult::bw_log_spread); NaN when it measured nothing.
  double typical_gbps = std::numeric_limits<double>::quiet_NaN();
  double log_spread = std::numeric_limits<double>::quiet_NaN();
  // The link rate its NICs report in the nodes' inventories, the most common one (Gb/s); 0 when
  // unknown.
  double nominal_gbps = 0;
};

struct RailComparison {
  std::vector<v1::Finding> findings;       // slow_rail, one per slow rail
  std::vector<v1::RailSummary> summaries;  // every rail, for the report
};

// Rails against each other. Each rail is judged against itself (every rail's NIC i against NIC
// i of the other nodes), so a rail whose every NIC runs slow (its own switch trained low, optics
// of the wrong speed) raises nothing there. A node's rails are alike by construction: where the
// inventory says so (their NICs report one link rate, or none), a rail whose typical figure is
// at least min_effect below the fastest rail's, and beyond max_robust_z of their pairs' noise
// (the larger of the two rails' log spreads: a typical figure is a median over many pairs, so
// this is a conservative bar), is slow_rail: the rail, not its hosts; nobody is drained for it.
// A rail whose NICs report another link rate than the most common one is not compared, and its
// summary says why. Fewer than two comparable rails: nothing to say.
RailComparison CompareRails(const std::vector<RailFigure>& rails, const v1::Thresholds& thresholds);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_SLOW_RAIL_H_
