#ifndef FABRICCTL_PROBES_COLLECTIVE_ALLREDUCE_H_
#define FABRICCTL_PROBES_COLLECTIVE_ALLREDUCE_H_

#include <vector>

#include "probes/collective/rdma_ring.h"
#include "probes/collective/ring.h"
#include "probes/common/params.h"
#include "probes/common/result.h"

namespace fabricctl::probes {

// One rank of the host-memory `allreduce` probe: joins the ring over TCP (with `rdma`, also
// connects the rank's RDMA ring to its neighbours' `endpoints` and waits for both to be
// ready, the TCP connections serving as the control channel; the data then goes over RDMA),
// then per message size checks
// the data once (every rank contributes rank-dependent values; each element's sum is known)
// and times `iterations` all-reduces after `warmup_iterations`, as nccl-tests does. Fills
// run.collective with this rank's time per operation, algbw and busbw (the controller averages
// the ranks), wrong elements and the time of its link to the right, timed on its own.
ProbeRun RunRingAllreduce(const ProbeParams& params, uint32_t rank,
                          const std::vector<RankAddress>& ranks, const net::Listener& listener,
                          RdmaRing* rdma = nullptr,
                          const std::vector<v1::Endpoint>& endpoints = {});

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_COLLECTIVE_ALLREDUCE_H_
