#include "controller/verdict/slow_rail.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/verdict/robust_stats.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

std::string Gbps(double x) { return absl::StrFormat("%.3g Gb/s", x); }

// The link rate most of the rails' NICs report (rails that report none left out); 0: none known.
double CommonRate(const std::vector<RailFigure>& rails) {
  std::map<double, int> count;
  for (const RailFigure& r : rails) {
    if (r.nominal_gbps > 0) ++count[r.nominal_gbps];
  }
  double common = 0;
  int most = 0;
  for (const auto& [rate, n] : count) {
    if (n > most) common = rate, most = n;
  }
  return common;
}

}  // namespace

RailComparison CompareRails(const std::vector<RailFigure>& rails, const v1::Thresholds& t) {
  RailComparison out;
  const double common = CommonRate(rails);
  std::vector<size_t> compared;
  for (size_t r = 0; r < rails.size(); ++r) {
    v1::RailSummary* s = &*out.summaries.insert(out.summaries.end(), v1::RailSummary());
    s->set_rail(rails[r].rail);
    if (!std::isnan(rails[r].typical_gbps)) s->set_median_bw_gbps(rails[r].typical_gbps);
    if (rails[r].nominal_gbps > 0) s->set_nominal_gbps(rails[r].nominal_gbps);
    if (std::isnan(rails[r].typical_gbps) || rails[r].typical_gbps <= 0) {
      s->set_not_compared("it measured no bandwidth");
    } else if (common > 0 && rails[r].nominal_gbps > 0 && rails[r].nominal_gbps != common) {
      s->set_not_compared(absl::StrCat("its NICs report ", Gbps(rails[r].nominal_gbps),
                                       ", most rails' ", Gbps(common),
                                       ": rails of different rates are not alike"));
    } else {
      compared.push_back(r);
    }
  }
  if (compared.size() < 2) {
    for (size_t r : compared)
      out.summaries[r].set_not_compared("no other rail of its rate to compare with");
    return out;
  }
  const size_t fastest = *std::max_element(
      compared.begin(), compared.end(),
      [&](size_t a, size_t b) { return rails[a].typical_gbps < rails[b].typical_gbps; });
  const RailFigure& best = rails[fastest];
  std::vector<std::string> all;
  for (size_t r : compared)
    all.push_back(absl::StrCat(rails[r].rail, " ", Gbps(rails[r].typical_gbps)));
  for (size_t r : compared) {
    const RailFigure& rail = rails[r];
    const double spread =
        std::max({std::isnan(rail.log_spread) ? 0.0 : rail.log_spread,
                  std::isnan(best.log_spread) ? 0.0 : best.log_spread, kMinLogSpread});
    const double gap = std::log(best.typical_gbps / rail.typical_gbps);
    if (rail.typical_gbps >= best.typical_gbps * (1 - t.min_effect()) ||
        gap <= t.max_robust_z() * spread)
      continue;
    v1::Finding f = report::Make(
        report::kind::kSlowRail, "",
        absl::StrCat(rail.rail, " (", rail.netdev, ") runs at ", Gbps(rail.typical_gbps), ", ",
                     absl::StrFormat("%.0f %%", 100 * rail.typical_gbps / best.typical_gbps),
                     " of ", best.rail, "'s ", Gbps(best.typical_gbps), ", every NIC of it alike (",
                     absl::StrJoin(all, ", "),
                     "): the rail's switch, cabling or optics, not its hosts; nobody drained"));
    f.set_rail(rail.rail);
    f.set_device(rail.netdev);
    auto& e = *f.mutable_evidence();
    e["rail_gbps"] = absl::StrFormat("%.3f", rail.typical_gbps);
    e["fastest_rail"] = best.rail;
    e["fastest_gbps"] = absl::StrFormat("%.3f", best.typical_gbps);
    e["rails"] = absl::StrJoin(all, ", ");
    out.findings.push_back(std::move(f));
  }
  return out;
}

}  // namespace fabricctl::controller
