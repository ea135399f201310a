#ifndef FABRICCTL_CONTROLLER_SWEEP_COMPANIONS_H_
#define FABRICCTL_CONTROLLER_SWEEP_COMPANIONS_H_

#include <vector>

#include "controller/sweep/pairing.h"
#include "controller/verdict/analysis.h"

namespace fabricctl::controller::sweep {

// Re-tests taken under the load of the figures they are judged against.
//
// A pair whose round-mates failed (a dead path, a dead agent) was measured with fewer probes
// moving data beside it than a full round has (LoadMeter). Where a host's or the fabric's
// speed depends on that load, its figure is not comparable with the full rounds': hosts that
// share CPUs idle between a lone ping-pong's messages and answer it late (a lab of namespaces
// reads 30 us alone where a full round reads 10), an uplink that other pairs share is faster
// alone. Re-testing such a pair alone repeats the unlike conditions; so its re-test round is
// filled, up to the full rounds' concurrency, with companions: pairs that measured, that are not
// being re-tested, whose ends are in none of the round's pairs. Their probes load the round
// only: their figures are not kept (RoundRunner::MeasureRound). The round's failed pairs go
// to a round of their own, as they would load nothing.
//
// `rounds`: the re-test rounds (PackRounds), rewritten in place; returns each round's
// companions (empty where the round needs none). With no round light, or full rounds of one
// pair, nothing changes.
std::vector<Round> AddCompanions(const AnalysisInput& in, std::vector<Round>& rounds);

// A full round's concurrency on this rail: the upper quartile of the measured figures' (0:
// unknown), and whether any of `p`'s figures was taken below kFullLoadShare of it.
double FullRoundLoad(const AnalysisInput& in);
bool TakenLight(const PairInput& p, double full);

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_COMPANIONS_H_
