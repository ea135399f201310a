#ifndef FABRICCTL_CONTROLLER_VERDICT_PATHS_H_
#define FABRICCTL_CONTROLLER_VERDICT_PATHS_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "controller/verdict/analysis.h"

namespace fabricctl::controller {

struct PathFaults {
  std::vector<PathFault> faults;
  // Per pair: the fault that explains it, -1 for none.
  std::vector<int32_t> pair_fault;
};

// The switch-level faults that explain the slow pairs (boolean network tomography over the
// topology's groups, 007's and NetBouncer's idea on a tree).
//
// A pair crosses the elements its path goes through: two nodes in one group (a leaf) cross
// that group's switch; two in different groups cross both switches, both uplinks and the
// path between the two groups. Pairs are judged against the pairs *within* groups of the same
// level (they cross no uplink, so a fault between groups leaves them alone): a pair is slow
// when its worse direction is at least thresholds.min_effect below their typical figure and
// beyond thresholds.max_robust_z of their spread (never taken below 1 %). An element is
// faulty when at least three quarters of its measured pairs are slow, its slow pairs are at
// least two that no single node is an end of all of (else that node explains them), and for
// a switch, more than half of the pairs within its group are slow too. Elements are taken
// greedily, the one explaining the most unexplained slow pairs first (ties: the one with
// fewer pairs, then a path before an uplink before a switch), until none explains two more.
// With re-tests required, an element counts only when its re-tested pairs stayed slow at
// least once and at least as often as they recovered.
//
// Without a topology (no level with two groups among the nodes' places), groups are proposed
// from the figures: Otsu's two-class split of the pair figures, kept only where the two
// classes stand apart (their medians by min_effect; the gap from the slow class's best figure
// to the fast class's median by min_effect and by twice max_robust_z of the fast class's
// spread: a fabric's noise cut in two does not), then its upper class split again the same way; at
// each line the nodes joined by pairs above it form groups, from the coarsest line. A group of one
// node (a straggler) is not a group. A proposal counts only when the paths between its groups pass
// the test above.
PathFaults FindPathFaults(const AnalysisInput& in);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_PATHS_H_
