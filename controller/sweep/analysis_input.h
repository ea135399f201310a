#ifndef FABRICCTL_CONTROLLER_SWEEP_ANALYSIS_INPUT_H_
#define FABRICCTL_CONTROLLER_SWEEP_ANALYSIS_INPUT_H_

#include <map>
#include <vector>

#include "controller/sweep/fleet.h"
#include "controller/sweep/rounds.h"
#include "controller/sweep/specs.h"
#include "controller/verdict/analysis.h"
#include "proto/config.pb.h"

namespace fabricctl::controller::sweep {

// The adapter every later stage uses: the analysis's input from everything measured so far, a
// node per fleet node and a pair per measured pair in `pairs`' order (which `ordered`
// receives, when given). A pair's failures are read by their typed causes: a skipped RDMA
// probe between RDMA nodes is a TCP fallback, a GPU-memory failure a node's GPUDirect (only
// where this sweep put that half's buffers in GPU memory), any other failure the path's.
// On a rail (`rail`), a node's MTU and switch port are its rail interface's, and its place the
// rail's own leaf where one is known (GroupAt).
struct RailScope {
  std::string name;
  std::string netdev;  // "": no rail, the agent's own interface
};
AnalysisInput BuildAnalysisInput(const Fleet& fleet, const SweepSpecs& specs,
                                 const v1::Config& config, const std::map<PairKey, PairRun>& pairs,
                                 std::vector<const PairRun*>* ordered = nullptr,
                                 const RailScope& rail = {});

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_ANALYSIS_INPUT_H_
