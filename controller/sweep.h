#ifndef FABRICCTL_CONTROLLER_SWEEP_H_
#define FABRICCTL_CONTROLLER_SWEEP_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "controller/analysis.h"
#include "controller/store.h"
#include "grpcpp/security/credentials.h"
#include "proto/agent.grpc.pb.h"
#include "proto/config.pb.h"
#include "proto/controller.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::controller {

struct SweepOptions {
  // Expectations, thresholds and defaults (config.sweep, config.probes).
  v1::Config config;
  // Deadline of the reachability check of each node.
  absl::Duration inventory_timeout = absl::Seconds(5);
  // Pairs measured at once within a round (a round's pairs are disjoint, so all could run;
  // this bounds the controller's threads at scale).
  uint32_t max_parallel_pairs = 256;
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

// Runs sweeps: checks which nodes answer, plans rounds of disjoint pairs, measures every pair
// of a round at once through the agents (server half, then client half, each RPC with a
// deadline), writes each result to the store as it arrives, re-tests failing pairs, re-pairs
// the ends of slow pairs measured once, runs the all-reduce rings when asked (and the node
// audits), analyses the matrix and stores the report. A node that stops answering costs its pairs' deadlines,
// not the sweep.
//
// Thread-safe; one sweep at a time (a second gets FailedPrecondition).
class SweepRunner {
 public:
  SweepRunner(Store* store, std::shared_ptr<grpc::ChannelCredentials> credentials,
              SweepOptions options);

  // `nodes` are the registry's entries for the sweep. `progress` receives the started and
  // round events (the report is the return value).
  absl::StatusOr<v1::Report> Run(const v1::SweepRequest& request,
                                 const std::vector<StoredNode>& nodes,
                                 const std::function<void(const v1::SweepEvent&)>& progress);

 private:
  struct Node;
  struct PairRun;
  v1::AgentService::Stub* StubFor(const std::string& address);
  // One probe on one pair: server half on `server`, client half on `client`.
  v1::ProbeResult MeasurePair(const Node& client, const Node& server, const v1::ProbeSpec& spec,
                              const std::string& run_id);

  Store* store_;
  std::shared_ptr<grpc::ChannelCredentials> credentials_;
  SweepOptions options_;
  std::mutex running_;  // held for the duration of a sweep
  std::mutex stubs_mu_;
  std::map<std::string, std::unique_ptr<v1::AgentService::Stub>> stubs_;  // by address
};

// The address the node's agent was registered with, and the MTU of the interface that holds
// that address (0 when not found): what the MTU check compares.
uint32_t AgentInterfaceMtu(const v1::NodeInventory& inventory, std::string* interface_name);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_SWEEP_H_
