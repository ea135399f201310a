#ifndef FABRICCTL_CONTROLLER_SWEEP_ALLREDUCE_H_
#define FABRICCTL_CONTROLLER_SWEEP_ALLREDUCE_H_

#include <string>
#include <vector>

#include "controller/sweep/agent_client.h"
#include "controller/sweep/fleet.h"
#include "controller/sweep/rounds.h"
#include "controller/verdict/allreduce.h"
#include "proto/config.pb.h"
#include "proto/controller.pb.h"

namespace fabricctl::controller::sweep {

struct SweepContext;

// One all-reduce group of a sweep and how it runs.
struct RingRun {
  std::vector<uint32_t> ring;  // fleet node index of each member, ring order
  bool nccl = false;           // NCCL, one rank per GPU, rather than the host ring
  bool rdma = false;           // the host ring over RDMA rather than TCP
  std::vector<uint32_t> gpus;  // NCCL: ranks on each node of `ring`
  std::string skipped;         // why the group could not run as asked
  RingOutcome outcome;         // what it measured, for the verdict
};

// The groups: every reachable node in one, or one per value of the node label
// request.allreduce_group_by (a rack, a rail; labels as Placement gives them); groups of one
// node are left out. The back-end
// per group: "auto" picks NCCL where every node has GPUs and NCCL, else the host ring over RDMA
// where every node has an active RDMA port and enough memlock, else over TCP; "nccl", "rdma" and
// "tcp" as asked (a group that cannot run as asked is skipped with the reason).
std::vector<RingRun> PlanRings(const v1::SweepRequest& request, const v1::Config& config,
                               const Fleet& fleet);

// Runs one group: every member opens its rank (StartProbeServer), then all run at once
// (RunLocalProbe); when a rank cannot start, the others are stopped. The ranks' figures are
// combined as nccl-tests does (times averaged over ranks, wrong elements added); the result is
// stored. `index` numbers the group in run ids and progress events.
void RunRing(AgentClient& agents, SweepContext& sweep, const v1::ProbeSpec& spec, size_t index);

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_ALLREDUCE_H_
