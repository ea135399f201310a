#include "controller/verdict/regression.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_format.h"
#include "report/findings.h"

namespace fabricctl::controller {

std::vector<v1::Finding> Regressions(const v1::Report& baseline, int64_t baseline_sweep_id,
                                     const std::vector<PairFigure>& now, double relative_bw,
                                     const std::string& probe) {
  // Directed: node -> peer is the pair's bw_gbps, peer -> node its bw_reverse_gbps.
  std::map<std::tuple<std::string, std::string, std::string>, double> before;
  for (const auto& pair : baseline.health().pairs()) {
    if (pair.has_bw_gbps()) before[{pair.node(), pair.peer(), pair.rail()}] = pair.bw_gbps();
    if (pair.has_bw_reverse_gbps()) {
      before[{pair.peer(), pair.node(), pair.rail()}] = pair.bw_reverse_gbps();
    }
  }
  std::vector<v1::Finding> out;
  for (const PairFigure& p : now) {
    auto it = before.find({p.node, p.peer, p.rail});
    // A baseline that measured one direction only compares with that one.
    if (it == before.end()) it = before.find({p.peer, p.node, p.rail});
    if (it == before.end() || p.bw_gbps >= it->second * relative_bw) continue;
    v1::Finding f =
        report::MakePair(report::kind::kRegression, p.node, p.peer,
                         absl::StrFormat("%s -> %s%s: %s %.2f Gb/s, was %.2f Gb/s in sweep %d",
                                         p.node, p.peer, p.rail.empty() ? "" : " on " + p.rail,
                                         probe, p.bw_gbps, it->second, baseline_sweep_id));
    f.set_rail(p.rail);
    (*f.mutable_evidence())["baseline_gbps"] = absl::StrFormat("%.2f", it->second);
    (*f.mutable_evidence())["bw_gbps"] = absl::StrFormat("%.2f", p.bw_gbps);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace fabricctl::controller
