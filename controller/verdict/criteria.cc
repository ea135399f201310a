#include "controller/verdict/criteria.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace fabricctl::controller {

std::string Num(double v) { return absl::StrFormat("%.2f", v); }

// "below 0.58 Gb/s (60 % of the typical 0.96 Gb/s), or 20 % below it and beyond 3.5 robust
// deviations (0.03 Gb/s each)".
std::string SlowCriterion(const Judged& j, const v1::Thresholds& t) {
  std::string text = absl::StrFormat(
      "slow is below %s Gb/s (%.0f %% of the fabric's typical %s Gb/s), or %.0f %% below typical "
      "and beyond %.1f robust deviations of %s Gb/s",
      Num(j.typical.bw.typical * t.relative_bw()), t.relative_bw() * 100, Num(j.typical.bw.typical),
      t.min_effect() * 100, t.max_robust_z(), Num(j.typical.bw.spread));
  if (j.typical.link_floor > 0 && !j.typical.bw_floor_missed)
    absl::StrAppend(&text, ", or below ", Num(j.typical.link_floor),
                    " Gb/s (the expected rate's floor)");
  return text;
}

// "; and, one pair's figure being one measurement, below 0.31 Gb/s: 3.5 robust deviations
// under typical on a log scale, where the fabric's figures vary by 8 % a deviation".
std::string LinkCriterion(const Judged& j) {
  return absl::StrFormat(
      "; and, one pair's figure being one measurement, below %s Gb/s: %.1f robust deviations "
      "under typical on a log scale, where the figures vary by %.0f %% a deviation",
      Num(j.LinkOutlierBelow()), j.noise.z, (std::exp(j.noise.log_spread) - 1) * 100);
}

// "its tail stands out: p99 above 2.1 times the fabric's typical p99 40.00 us and beyond 3.5
// deviations on a log scale (the pairs' tails vary by 30 % a deviation); jitter 200.00 us".
std::string TailCriterion(const Judged& j, const v1::Thresholds& t, const PairInput& pair) {
  return absl::StrFormat(
      "its tail stands out while its median does not: p99 above %.1f times the fabric's typical "
      "p99 %s us and beyond %.1f deviations on a log scale (the pairs' tails vary by %.0f %% a "
      "deviation); jitter (p99 - median) %s us",
      t.relative_lat(), Num(j.tails.reference.typical), j.tails.z,
      (std::exp(j.tails.log_spread) - 1) * 100, Num(pair.lat_p99_us - pair.lat_us));
}

std::string DescribeFigures(const AnalysisInput& in, const PairInput& pair) {
  const std::string& a = in.nodes[pair.client].name;
  const std::string& b = in.nodes[pair.server].name;
  std::vector<std::string> parts;
  if (!std::isnan(pair.forward.bw_gbps))
    parts.push_back(absl::StrCat(a, " -> ", b, " ", Num(pair.forward.bw_gbps), " Gb/s"));
  if (!std::isnan(pair.reverse.bw_gbps)) {
    parts.push_back(absl::StrCat(b, " -> ", a, " ", Num(pair.reverse.bw_gbps), " Gb/s"));
  }
  std::string text = absl::StrJoin(parts, ", ");
  if (pair.attempts > 1) absl::StrAppend(&text, " (best of ", pair.attempts, " attempts)");
  return text;
}

// The MTU findings, against the expectation or, without one, the sweep's most common MTU; a
// tie for the most (one node at 9000 and one at 1500) has no yardstick: every node of the
// split is named, and the finding says that an expectation would decide.
}  // namespace fabricctl::controller
