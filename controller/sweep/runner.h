#ifndef FABRICCTL_CONTROLLER_SWEEP_RUNNER_H_
#define FABRICCTL_CONTROLLER_SWEEP_RUNNER_H_

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/mutex.h"
#include "controller/store/store.h"
#include "controller/sweep/queue.h"
#include "controller/verdict/breaker.h"
#include "grpcpp/security/credentials.h"
#include "proto/config.pb.h"
#include "proto/controller.pb.h"
#include "proto/report.pb.h"
#include "report/builder.h"

namespace fabricctl::controller {

namespace sweep {
class AgentClient;
struct Fleet;
struct SweepContext;
struct SweepSpecs;
}  // namespace sweep

struct SweepOptions {
  // Expectations, thresholds and defaults (config.sweep, config.probes).
  v1::Config config;
  // Deadline of the reachability check of each node.
  absl::Duration inventory_timeout = absl::Seconds(5);
  // Pairs measured at once within a round (a round's pairs are disjoint, so all could run;
  // this bounds the controller's threads at scale).
  uint32_t max_parallel_pairs = 256;
  std::function<absl::Time()> now = [] { return absl::Now(); };
  // Whether each result records the concurrency it was taken at (the analysis's like-with-like
  // yardstick). Off only where a probe's duration means nothing: fake agents that answer in
  // milliseconds, whose overlaps are the scheduler's noise (tests/testing/sweeps.h).
  bool measure_load = true;
};

// Runs sweeps, as a list of stages (controller/sweep/): resolve the probes' specs, select the
// nodes and check which answer (and audit them when asked), plan rounds of disjoint pairs,
// measure every pair of a round at once through the agents, re-test failing pairs, re-pair the
// ends of slow pairs measured once (localisation), run the all-reduce groups, judge, and
// assemble and store the report. Every result is written to the store as its round ends. A node
// that stops answering costs its pairs' deadlines, not the sweep.
//
// Thread-safe; one sweep at a time, the others queued (SweepQueue: a turn in rotation among
// the callers' identities, and a sweep covered by another shares that one's result); a sweep
// waits up to its request's `wait` for its turn, then gets FailedPrecondition.
class SweepRunner {
 public:
  // Agents reached over gRPC with `credentials`.
  SweepRunner(Store* store, std::shared_ptr<grpc::ChannelCredentials> credentials,
              SweepOptions options);
  // Agents reached through `agents` (tests use a fake).
  SweepRunner(Store* store, std::unique_ptr<sweep::AgentClient> agents, SweepOptions options);
  ~SweepRunner();

  // `nodes` are the registry's entries for the sweep; `caller` the identity that asked (its
  // certificate's name: the queue's unit of fairness). `progress` receives the started and
  // round events (the report is the return value; a sweep that shares another's result gets
  // none). When `cancelled` turns true (the client went away), the calls to agents in flight
  // are cancelled, so that the agents stop their probes and free themselves within a second;
  // the sweep is recorded as interrupted and Run returns CANCELLED.
  absl::StatusOr<v1::Report> Run(const v1::SweepRequest& request,
                                 const std::vector<StoredNode>& nodes,
                                 const std::function<void(const v1::SweepEvent&)>& progress,
                                 const std::function<bool()>& cancelled = nullptr,
                                 const std::string& caller = "");
  // The sweeps each caller holds now (running, waiting, sharing a result).
  std::map<std::string, uint32_t> Queued() const { return queue_.Held(); }

  // Cancels the running sweep (recorded interrupted, Run returns CANCELLED) and refuses new
  // ones (UNAVAILABLE): the controller is stopping.
  void Shutdown();
  // The configuration for sweeps that start from now on (SIGHUP); a running sweep keeps its own.
  void SetConfig(v1::Config config);
  // The configuration for sweeps that start now.
  v1::Config Config() const;
  // The history policy of the current configuration, and pruning by a policy now (a running
  // sweep is never pruned). Called on the controller's schedule and by an administrator,
  // never by a sweep.
  v1::History HistoryPolicy() const;
  absl::StatusOr<Store::Pruned> PruneHistory(const v1::History& policy);

 private:
  absl::StatusOr<v1::Report> RunStages(const v1::SweepRequest& request,
                                       const std::vector<StoredNode>& nodes,
                                       const std::function<void(const v1::SweepEvent&)>& progress);
  // RunStages' steps, each borrowing the sweep in progress: who answers and what they are
  // (audits, gpu_copy); the rounds, re-tests, all-reduce groups and localisation; the verdict
  // and the report.
  void CheckNodes(const v1::SweepRequest& request, const sweep::SweepSpecs& specs,
                  sweep::Fleet& fleet);
  absl::Status Measure(sweep::SweepContext& sweep);
  // Re-tests what the figures so far flag, within a budget: a share of `measuring`, the time
  // the measuring rounds took.
  void Retest(sweep::SweepContext& sweep, absl::Duration measuring);
  // One pass more, after localisation, of the pairs measured once (the localisation's) that
  // decide a suspect node's or a switch element's verdict, when re-tests are on.
  void ConfirmLocalised(sweep::SweepContext& sweep);
  // The verdict of every rail, the all-reduce groups and the baseline, as a report.
  v1::Report MakeReport(sweep::SweepContext& sweep);
  // The breaker's memory (breaker.window): what the verdicts that finished within `window`
  // before `now` drained and judged; and a verdict's, kept for those after it.
  // The drains the store holds that `report`'s sweep gives back (undrain.enabled; GiveBack).
  void GiveDrainsBack(const v1::Undrain& undrain, int64_t sweep_id, v1::Report* report);
  EarlierDrains DrainsWithin(absl::Duration window, absl::Time now) const;
  void RememberDrains(const v1::Report& report, absl::Duration window, absl::Time now);

  Store* store_;
  std::unique_ptr<sweep::AgentClient> agents_;
  SweepOptions options_;  // its config is the first; config_ the current one
  mutable Mutex config_mu_;
  v1::Config config_ ABSL_GUARDED_BY(config_mu_);
  std::atomic<bool> shutdown_{false};
  struct Drained {
    absl::Time finished;
    std::vector<std::string> drained, judged;
  };
  mutable Mutex drains_mu_;
  std::deque<Drained> recent_drains_ ABSL_GUARDED_BY(drains_mu_);  // oldest first
  // One sweep at a time; the others wait their turn or share a result.
  SweepQueue queue_;
  // Runs the stages with a watch on `cancelled` and on Shutdown.
  absl::StatusOr<v1::Report> RunWatched(const v1::SweepRequest& request,
                                        const std::vector<StoredNode>& registry,
                                        const std::function<void(const v1::SweepEvent&)>& progress,
                                        const std::function<bool()>& cancelled);
  std::atomic<bool> stopping_{false};  // the running sweep was cancelled
};

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_SWEEP_RUNNER_H_
