#ifndef FABRICCTL_CONTROLLER_SWEEP_RETEST_PLAN_H_
#define FABRICCTL_CONTROLLER_SWEEP_RETEST_PLAN_H_

#include <vector>

#include "controller/sweep/analysis_input.h"
#include "controller/sweep/fleet.h"
#include "controller/sweep/pairing.h"
#include "controller/sweep/rounds.h"
#include "controller/sweep/specs.h"
#include "controller/verdict/analysis.h"
#include "proto/config.pb.h"

namespace fabricctl::controller::sweep {

// Localisation: a bad pair whose ends were each measured once or less cannot say which end
// (or the link) is at fault; each such end is re-paired with a node the first analysis found
// good and that it has not met yet, so that the node common to the failing pairs shows itself
// (a full sweep never needs this). The good nodes are taken in turn, so that the pairs pack
// into few rounds. Returns the pairs to measure.
std::vector<Pair> LocalisationPairs(const Fleet& fleet, const AnalysisInput& in,
                                    const AnalysisResult& first, const RoundRunner& runner);

// The pairs to re-test before a verdict, from an analysis of the figures so far that blames
// without waiting for re-tests: every bad pair (slow, high latency, failed or refused) that no
// blamed node explains; and for each blamed node whose re-tests do not yet agree
// (RetestTally::Agree: two of its bad pairs re-tested and still bad, with two peers, where it has
// two), its least measured bad pairs, as many as it still lacks, so that a slow node costs two
// rounds of re-tests, not one per peer; for each switch-level suspect
// (a path, uplink or switch) whose re-tests do not yet agree, two of its pairs with different
// ends. Pairs with an unreachable end are left out; each pair keeps its orientation. The
// suspects' and switch elements' pairs come first (they decide drains and switch findings;
// a re-test budget spends itself on them first), then the links', each pair once: first those
// not re-tested yet with a clear deficit (a direction no suspect explains below relative_bw x
// typical), then the others in the analysis's order.
// `bandwidth_only` is set when every pair to re-test is flagged for bandwidth alone, so that
// only the bandwidth probes need measuring again.
// `deciding` (when given) receives how many of the returned pairs, from the first, decide a
// node's or a switch element's verdict.
std::vector<Pair> RetestPairs(const Fleet& fleet, const AnalysisInput& in,
                              const std::vector<const PairRun*>& ordered,
                              bool* bandwidth_only = nullptr, size_t* deciding = nullptr);

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_RETEST_PLAN_H_
