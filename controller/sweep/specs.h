#ifndef FABRICCTL_CONTROLLER_SWEEP_SPECS_H_
#define FABRICCTL_CONTROLLER_SWEEP_SPECS_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/config.pb.h"
#include "proto/controller.pb.h"
#include "proto/probe.pb.h"

namespace fabricctl::controller::sweep {

// What a sweep measures: the pair probes' specs, in the sweep's probe order, and whether the
// all-reduce runs after them.
struct SweepSpecs {
  std::vector<v1::ProbeKind> kinds;  // pair probes
  std::vector<v1::ProbeSpec> specs;  // one per kind, validated against the configured caps
  bool allreduce = false;
  // gpu_copy on every node (host-device copies of its GPUs), beside its audits.
  bool gpu_copy = false;
  v1::ProbeSpec gpu_copy_spec;
  absl::Duration pair_timeout;
  // The first bandwidth and the first latency probe: the figures the verdict judges; -1 none.
  int bw_index = -1;
  int lat_index = -1;
  bool rdma_asked = false;
  // The request's reference nodes (reference_nodes): the analysis's NodeInput::reference.
  std::set<std::string> references;
  // Their figures where they last passed, of this sweep's bandwidth probe (those known-good
  // and measured by it): NodeInput::stored_gbps.
  std::map<std::string, float> stored_gbps;
  uint32_t vouched_nodes = 0;  // SweepRequest.vouched_nodes
  // Flows per tcp_bw pair probe (SweepRequest.flows, sweep.flows or DefaultFlows), each traced
  // when more than one.
  uint32_t flows = 1;

  // Which probes a pair measures from server to client too: the bandwidth probes, when
  // `both_directions`.
  std::vector<bool> ReverseFlags(bool both_directions) const;
};

// From the request, or the configuration's sweep.probes, or tcp_bw and tcp_lat. Errors name the
// probe or the setting that is wrong (INVALID_ARGUMENT).
absl::StatusOr<SweepSpecs> ResolveSpecs(const v1::SweepRequest& request, const v1::Config& config);

// The flows a pair probe needs so that, with k equal-cost paths and flows hashed onto them at
// random, the expected number of paths none of them takes, k x (1 - 1/k)^N, is at most
// `missed` (0.05: k = 2 takes 6 flows, 4 takes 16, 8 takes 39; 16 would take 89 and gets
// kMaxFlows, which miss 0.26 paths a pair, each pair's own). 1 for k <= 1.
inline constexpr uint32_t kMaxFlows = 64;
uint32_t DefaultFlows(uint32_t ecmp_paths, double missed = 0.05);

// The all-reduce's spec for one group (a ring of `nccl` ranks or of nodes over RDMA or TCP).
absl::StatusOr<v1::ProbeSpec> AllreduceSpec(const v1::SweepRequest& request,
                                            const v1::Config& config, absl::Duration pair_timeout,
                                            bool nccl, bool rdma);

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_SPECS_H_
