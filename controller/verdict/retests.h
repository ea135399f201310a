#ifndef FABRICCTL_CONTROLLER_VERDICT_RETESTS_H_
#define FABRICCTL_CONTROLLER_VERDICT_RETESTS_H_

// What re-tests must say before a verdict blames: the predicates the analysis judges by and the
// sweep's re-test planner (controller/sweep/retest_plan.h) plans by, defined once.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "controller/verdict/analysis.h"

namespace fabricctl::controller {

// Whether re-tests agree with a blame: the re-tested pairs stayed bad at least once, and at
// least as often as they recovered.
inline bool RetestsAgree(uint32_t stayed, uint32_t recovered) {
  return stayed >= 1 && stayed >= recovered;
}

// One node's re-tests so far: its bad pairs, and of its pairs measured twice or more, those
// still bad (stayed) and those not (recovered).
struct RetestTally {
  uint32_t bad = 0, stayed = 0, recovered = 0;
  // A node's blame says it is slow with most of its peers, and one peer's re-test cannot tell
  // the node from the link between them: a node with two bad pairs or more needs two of them
  // to stay bad on re-test (with two peers), and no more to recover than stayed.
  bool Agree() const {
    return RetestsAgree(stayed, recovered) && stayed >= std::min<uint32_t>(2, bad);
  }
  // Re-tested, and they disagree: it will not be blamed.
  bool Cleared() const { return stayed + recovered > 0 && !RetestsAgree(stayed, recovered); }
  // How many more of its bad pairs a re-test pass should measure: as many as it lacks of two
  // that stayed bad (of one, with one bad pair), and at least one.
  uint32_t Wanted() const {
    const uint32_t need = std::min<uint32_t>(2, bad);
    return need > stayed ? need - stayed : 1;
  }
};

// Each node's tally over the pairs `counts` admits, `bad` saying which of them are bad.
std::vector<RetestTally> TallyRetests(const AnalysisInput& in,
                                      const std::function<bool(size_t)>& counts,
                                      const std::function<bool(size_t)>& bad);

// A pair the analysis flags: slow, high latency, failed, lossy, or refused.
bool PairFlagged(const AnalysisInput& in, const AnalysisResult& a, size_t p);

// A node the analysis blames: a straggler, or one whose paths are down.
inline bool Suspect(const NodeResult& node) { return node.straggler || node.path_down; }

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_RETESTS_H_
