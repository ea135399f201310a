#ifndef FABRICCTL_CONTROLLER_VERDICT_FLEET_SPLIT_H_
#define FABRICCTL_CONTROLLER_VERDICT_FLEET_SPLIT_H_

// A fleet that falls into two groups by what its nodes can reach: a fast group and a slow one
// (a second generation of NIC, a batch of hosts whose links trained at half rate). With half
// the fleet slow, a healthy node's median figure is already a slow one, so the median cannot
// be the fabric's typical figure; what each node reaches with its fastest peers still tells the
// two groups apart.

#include <cstdint>
#include <limits>
#include <vector>

#include "controller/verdict/analysis.h"

namespace fabricctl::controller {

struct FleetSplit {
  bool found = false;
  std::vector<char> slow;  // per node: in the slow group
  size_t judged = 0;       // nodes with a reach (measured with enough peers)
  // The median reach of each group, Gb/s.
  double fast_reach_gbps = std::numeric_limits<double>::quiet_NaN();
  double slow_reach_gbps = std::numeric_limits<double>::quiet_NaN();
};

// A node's reach is its second-best bandwidth figure (what it sends or receives; the second,
// so that one lucky measurement does not decide): a fast node reaches the fast figure as soon as
// one of its peers is fast, however many are slow. The nodes' reaches, on a log scale, split in
// two at their widest gap when both sides have two nodes or more, the fast side is no small
// minority (at least as many as the slow side, or a third of the nodes), and the gap is a real
// effect: at least thresholds.min_effect, and more than thresholds.max_robust_z robust spreads of
// the figures within each side (the pairs with both ends in it, two pairs or more on each side: the
// healthy noise of a fleet that is split, and of one that is only noisy, whose top figures scatter
// as widely), or the slow side below thresholds.relative_bw of the fast one (then no noise estimate
// is needed: a group of two has only one pair within it). Pairs `excluded` (explained by a
// switch-level fault) are left out, and so are directions taken at a lighter load than `load_bar`
// (analysis.h: like with like; 0: every one counts): pairs that ran alone while a dead agent's
// partners idled would otherwise lift some nodes' reach.
FleetSplit FindFleetSplit(const AnalysisInput& in, const std::vector<char>& excluded,
                          double load_bar = 0);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_FLEET_SPLIT_H_
