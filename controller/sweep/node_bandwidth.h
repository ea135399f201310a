#ifndef FABRICCTL_CONTROLLER_SWEEP_NODE_BANDWIDTH_H_
#define FABRICCTL_CONTROLLER_SWEEP_NODE_BANDWIDTH_H_

#include <string>
#include <vector>

#include "controller/sweep/agent_client.h"
#include "controller/sweep/context.h"
#include "controller/sweep/rounds.h"
#include "controller/verdict/node_bandwidth.h"

namespace fabricctl::controller::sweep {

// The stage where it was asked: measured into sweep.node_bandwidth unless it cannot run or the
// sweep is stopping, and what it did or why not (SweepInfo.node_bandwidth); "" when not asked.
std::string RunNodeBandwidth(AgentClient& agents, SweepContext& sweep,
                             const RoundSettings& settings);

// The node-bandwidth stage: in the plan's first two rounds (each node with two peers under full
// or topology pairing), each pair's client sends to its server with the sweep's bandwidth probe
// on each rail alone, one rail after another, and then on every rail at once; per pair, the sums
// of the rails' figures. Its own runners keep these figures out of the rails' (each result is
// stored with the sweep's, as every result is).
std::vector<NodeBandwidthPair> MeasureNodeBandwidth(AgentClient& agents, SweepContext& sweep,
                                                    RoundSettings settings);

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_NODE_BANDWIDTH_H_
