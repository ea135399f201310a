#ifndef FABRICCTL_CONTROLLER_VERDICT_BLAME_H_
#define FABRICCTL_CONTROLLER_VERDICT_BLAME_H_

#include <cstdint>
#include <vector>

#include "controller/verdict/analysis.h"

namespace fabricctl::controller {

// One figure between two nodes, good or bad, as evidence about its ends.
struct Observation {
  uint32_t a = 0, b = 0;  // directed: a sends to b
  bool bad = false;
  bool directed = false;  // false: a property of the pair (latency, a dead path), both sides
};

// Who is at fault, from many observations: a node qualifies when it has at least `min_peers`
// observations on a side (what it sends, what it receives) and more than half of them are bad;
// the node with the largest bad share is blamed first, on the side(s) past half (and on its
// other side too when a quarter of that is bad), and the bad
// observations it explains no longer count against their other ends; then the next, until no
// node qualifies. A node not `eligible` (its re-tests disagreed) is never blamed.
std::vector<Side> Blame(size_t nodes, const std::vector<Observation>& observations,
                        uint32_t min_peers, const std::vector<bool>& eligible);

// Whether a blamed side explains a bad observation.
bool Explains(const std::vector<Side>& blamed, const Observation& o);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_BLAME_H_
