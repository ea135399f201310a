#ifndef FABRICCTL_CONTROLLER_VERDICT_CRITERIA_H_
#define FABRICCTL_CONTROLLER_VERDICT_CRITERIA_H_

// The words of the analysis's findings: each states the criterion that fired and the figures
// that fired it. The verdict package's own (findings.cc, pair_findings.cc).
#include <string>

#include "controller/verdict/passes.h"

namespace fabricctl::controller {

// A figure as findings show it: two decimals.
std::string Num(double v);

// "below 0.58 Gb/s (60 % of the typical 0.96 Gb/s), or 20 % below it and beyond 3.5 robust
// deviations (0.03 Gb/s each)".
std::string SlowCriterion(const Judged& j, const v1::Thresholds& t);

// "; and, one pair's figure being one measurement, below 0.31 Gb/s: 3.5 robust deviations
// under typical on a log scale, where the fabric's figures vary by 8 % a deviation".
std::string LinkCriterion(const Judged& j);

// "its tail stands out: p99 above 2.1 times the fabric's typical p99 40.00 us and beyond 3.5
// deviations on a log scale (the pairs' tails vary by 30 % a deviation); jitter 200.00 us".
std::string TailCriterion(const Judged& j, const v1::Thresholds& t, const PairInput& pair);

// "a -> b 0.30 Gb/s, b -> a 0.31 Gb/s (best of 2)".
std::string DescribeFigures(const AnalysisInput& in, const PairInput& pair);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_CRITERIA_H_
