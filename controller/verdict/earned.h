#ifndef FABRICCTL_CONTROLLER_VERDICT_EARNED_H_
#define FABRICCTL_CONTROLLER_VERDICT_EARNED_H_

// Earned passes: which nodes a completed sweep vouches for (known-good), and what each pass
// covered. A pass is a claim about what was measured, so it is made only where a measurement
// covered the node:
//   - a pair probe (rdma_*, tcp_bw, tcp_lat) measured it with at least min_peers distinct peers
//     on each of its rails, and those pairs were judged (with fewer, a slow pair cannot tell the
//     node from the link); audits, GPU copies and all-reduce alone measure no pair;
//   - no warning or critical finding of the sweep concerns it (the catalogue's Concerns: the
//     node or pair it names, the members behind a switch or path, every judged node for a
//     verdict about the fabric, a rail or the verdict itself), but for the fleet's standing
//     state: a configuration warning every judged node carries alike, where at least three
//     were judged (one or two nodes are no fleet).
// A node that such a finding concerns loses the pass it had (`ends`); one merely not covered
// keeps it.
#include <cstdint>

#include "proto/report.pb.h"

namespace fabricctl::controller {

// Nodes judged together below this many carry no "fleet state": each warning is their own.
inline constexpr size_t kMinFleetForState = 3;

// Sets NodeHealth.pass on each node of `report` (a completed sweep's: its pairs, with their
// results, and its findings). `min_peers`: known_good.min_peers.
void EarnPasses(uint32_t min_peers, v1::Report* report);

// Whether `pass` covers what a sweep asks for: each of `probes` (pair kinds; others need no
// pass) and each of `rails` ("" or empty: whatever rails it covered).
bool PassCovers(const v1::NodePass& pass, const std::vector<v1::ProbeKind>& probes,
                const std::vector<std::string>& rails);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_EARNED_H_
