#ifndef FABRICCTL_CONTROLLER_PAIRING_H_
#define FABRICCTL_CONTROLLER_PAIRING_H_

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

// Explicit rounds: one round per line, pairs written "a:b" separated by white space, node
// names as registered; '#' starts a comment. Errors name the line and the node.
absl::StatusOr<std::vector<Round>> FileRounds(const std::string& text,
                                              const std::vector<std::string>& nodes);

// Packs arbitrary pairs into as few rounds as a first-fit pass finds, no node twice in a
// round (for re-tests and localisation, whose pairs come from the measurements).
std::vector<Round> PackRounds(const std::vector<Pair>& pairs);

// Checks the invariant every plan keeps: pairs of distinct, in-range nodes, no node twice in a
// round. For tests and for plans read from files.
absl::Status CheckRounds(const std::vector<Round>& rounds, uint32_t n);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_PAIRING_H_
