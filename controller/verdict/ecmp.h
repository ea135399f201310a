#ifndef FABRICCTL_CONTROLLER_VERDICT_ECMP_H_
#define FABRICCTL_CONTROLLER_VERDICT_ECMP_H_

#include "controller/verdict/analysis.h"
#include "controller/verdict/paths.h"
#include "proto/finding.pb.h"

namespace fabricctl::controller {

// One bad member of an equal-cost group (slow_ecmp_link), from the flows of the pairs' bandwidth
// probes (AnalysisInput::flows): a pair's flows are hashed onto the paths between its leaves by
// their 5-tuples, so a slow member slows the flows on it and leaves the same pair's other flows
// at the pair's best. Each flow is judged against its own pair's other flows (like conditions:
// same hosts, same time), never against other pairs.
//
// A flow's figure is taken as ln(flow / the best flow of its pair and direction); the noise is
// the good side's spread of those over the sweep (never below kMinLogSpread). A link between two
// routers of the flows' traces is slow when, over the flows crossing it (not yet explained),
// each compared with the median of its pair's flows that do not cross it:
//   - they come from two pairs or more, measured and traced by two senders or more (a second
//     pair is the re-test: one pair's bad luck is not a link, and one agent's word is not one);
//   - three quarters of them are at least thresholds.min_effect below their pair's other flows;
//   - their median difference is at least min_effect, and beyond ChanceBar(max_robust_z, the
//     links judged) times the noise of a difference of two medians of that many flows.
// Links are taken greedily, the one with the most slow flows first (then the larger effect); the
// links whose flows are exactly its flows (which no measurement can tell from it: on two leaves,
// a spine's links to both) are named with it; its flows are explained, and the next is judged
// on what is left.
//
// Without traces, the flows of pairs between two groups of the first topology level (two
// leaves) that disagree (a flow min_effect below the pair's best and beyond the chance bar)
// name the paths between those groups instead, when at least two such pairs from two senders
// disagree, at least half of the pairs between them do, and at least twice the share of the
// pairs within groups (which cross no equal-cost group) do.
//
// The faults are added to `paths` (PathFault::Kind::kEcmpLink) and the pairs whose flows they
// explain point at them: no host and no link of a host is blamed for them. A path fault left
// explaining fewer than two pairs of its own is dropped (the member is the smaller explanation).
void AddEcmpFaults(const AnalysisInput& in, PathFaults& paths);

// The finding of a kEcmpLink fault (path_findings.cc writes every fault's).
v1::Finding EcmpFinding(const AnalysisInput& in, const PathFault& f);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_ECMP_H_
