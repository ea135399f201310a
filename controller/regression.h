#ifndef FABRICCTL_CONTROLLER_REGRESSION_H_
#define FABRICCTL_CONTROLLER_REGRESSION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/finding.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::controller {

// A pair's headline bandwidth in this sweep.
struct PairFigure {
  std::string node, peer;
  double bw_gbps = 0;
};

// regression (warning) for every pair below `relative_bw` of its bandwidth in the baseline
// sweep's health map (pairs matched in either direction; pairs the baseline lacks are skipped).
std::vector<v1::Finding> Regressions(const v1::Report& baseline, int64_t baseline_sweep_id,
                                     const std::vector<PairFigure>& now, double relative_bw,
                                     const std::string& probe);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_REGRESSION_H_
