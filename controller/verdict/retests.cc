#include "controller/verdict/retests.h"

namespace fabricctl::controller {

std::vector<RetestTally> TallyRetests(const AnalysisInput& in,
                                      const std::function<bool(size_t)>& counts,
                                      const std::function<bool(size_t)>& bad) {
  std::vector<RetestTally> tally(in.nodes.size());
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    if (!counts(p)) continue;
    const bool is_bad = bad(p);
    for (uint32_t end : {in.pairs[p].client, in.pairs[p].server}) {
      if (is_bad) ++tally[end].bad;
      if (in.pairs[p].attempts >= 2) ++(is_bad ? tally[end].stayed : tally[end].recovered);
    }
  }
  return tally;
}

bool PairFlagged(const AnalysisInput& in, const AnalysisResult& a, size_t p) {
  const PairResult& r = a.pairs[p];
  return r.slow || r.high_latency || r.unreachable || r.forward.lossy || r.reverse.lossy ||
         in.pairs[p].status == PairStatus::kRefused;
}

}  // namespace fabricctl::controller
