#ifndef FABRICCTL_CONTROLLER_VERDICT_REGRESSION_H_
#define FABRICCTL_CONTROLLER_VERDICT_REGRESSION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/finding.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::controller {

// A pair's headline bandwidth in this sweep, from `node` to `peer`.
struct PairFigure {
  std::string node, peer;
  double bw_gbps = 0;
  std::string rail;  // the rail it was measured on; "" without rails
};

// regression (warning) for every direction of a pair below `relative_bw` of the same direction
// in the baseline sweep's health map (a baseline that measured one direction only is compared
// with that one; pairs the baseline lacks are skipped). Each rail is compared with the same
// rail of the baseline; a finding names its rail. `now` holds each direction measured.
std::vector<v1::Finding> Regressions(const v1::Report& baseline, int64_t baseline_sweep_id,
                                     const std::vector<PairFigure>& now, double relative_bw,
                                     const std::string& probe);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_REGRESSION_H_
