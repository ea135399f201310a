#ifndef FABRICCTL_CONTROLLER_SWEEP_PAIRING_H_
#define FABRICCTL_CONTROLLER_SWEEP_PAIRING_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace fabricctl::controller {

// A pair of node indices (first < second is not required: first runs the client half).
using Pair = std::pair<uint32_t, uint32_t>;
// Pairs measured at the same time; no node appears twice in a round, so measurements do
// not share a node's links.
using Round = std::vector<Pair>;

// Every pair exactly once: the circle method (round-robin tournament), n-1 rounds of n/2
// disjoint pairs for even n; for odd n a bye is added, giving n rounds of (n-1)/2 pairs.
std::vector<Round> FullRounds(uint32_t n);

// One round: every node in one pair (one node sits out when n is odd). With `groups` (a
// group id per node, e.g. the rack), nodes are paired across groups where possible, so that
// the round crosses the links between groups.
std::vector<Round> QuickRounds(uint32_t n, const std::vector<uint32_t>& groups = {});

// `k` rounds, each a random perfect matching (statistical coverage at scale); rounds are
// drawn from the circle method's rounds after a random relabelling, so no pair repeats
// while k <= n-1.
std::vector<Round> SampleRounds(uint32_t n, uint32_t k, uint64_t seed);

// Rounds that cover a fabric by its topology, with a number of pairs that grows with its
// links rather than the square of its nodes. `groups[l][i]` is node i's group at level l,
// lowest (the leaf) first, -1 where unknown (the unplaced nodes then form one group); a
// group's parent is its members' group at the next level. Pairs: within each leaf, every pair
// when the leaf has at most `leaf_peers` + 1 nodes, else `leaf_peers` rounds of its circle
// method (each node `leaf_peers` peers); between every two groups of a level that share a
// parent (every two leaves of a spine; every two spines), two pairs whose four ends differ
// where the groups have two nodes each, the ends taken in turn so that the load spreads over
// the members. Packed into rounds of disjoint pairs, the within-leaf rounds first.
std::vector<Round> TopologyRounds(uint32_t n, const std::vector<std::vector<int32_t>>& groups,
                                  uint32_t leaf_peers = 8);

// Explicit rounds: one round per line, pairs written "a:b" separated by white space, node
// names as registered; '#' starts a comment. Errors name the line and the node.
absl::StatusOr<std::vector<Round>> FileRounds(const std::string& text,
                                              const std::vector<std::string>& nodes);

// Packs arbitrary pairs into as few rounds as a first-fit pass finds, no node twice in a
// round (for re-tests and localisation, whose pairs come from the measurements).
std::vector<Round> PackRounds(const std::vector<Pair>& pairs);
// The same over nodes 0..n-1.
std::vector<Round> PackRounds(const std::vector<Pair>& pairs, uint32_t n);

// Checks the invariant every plan keeps: pairs of distinct, in-range nodes, no node twice in a
// round. For tests and for plans read from files.
absl::Status CheckRounds(const std::vector<Round>& rounds, uint32_t n);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_SWEEP_PAIRING_H_
