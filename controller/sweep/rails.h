#ifndef FABRICCTL_CONTROLLER_SWEEP_RAILS_H_
#define FABRICCTL_CONTROLLER_SWEEP_RAILS_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/store/store.h"
#include "controller/sweep/agent_client.h"
#include "controller/sweep/fleet.h"
#include "controller/sweep/load_meter.h"
#include "controller/sweep/pairing.h"
#include "controller/sweep/rounds.h"
#include "controller/sweep/specs.h"
#include "controller/verdict/analysis.h"
#include "proto/config.pb.h"
#include "proto/controller.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::controller::sweep {

// One rail of a sweep: its name and interface, the pair probes' specs placed on it (TCP and
// RDMA options name the netdev, RDMA the device), and the nodes that lack it (by fleet index,
// with the reason): they are measured on the other rails only.
// Without rails: one rail with no name whose specs are the sweep's.
struct RailPlan {
  std::string name;
  std::string netdev;
  std::vector<v1::ProbeSpec> specs;
  std::vector<bool> absent;
  std::vector<std::string> absent_reason;
};

// The rails a sweep measures: the request's (--rails, by name) or every configured rail, in
// the configuration's order. A name the configuration lacks, or --rails without rails:, is
// INVALID_ARGUMENT. A node lacks a rail when its inventory has no such interface up with an
// IPv4 address (a missing RDMA device is judged as without rails: rdma_unavailable); a rail
// that more than half the reachable nodes lack is FAILED_PRECONDITION (the configuration's).
absl::StatusOr<std::vector<RailPlan>> PlanRails(const v1::SweepRequest& request,
                                                const v1::Config& config, const SweepSpecs& specs,
                                                const Fleet& fleet);

// Why `node` lacks `rail` ("" when it has it), from its inventory.
std::string MissingRail(const v1::NodeInventory& inventory, const v1::Rail& rail);

// The analysis's input for one rail: BuildAnalysisInput over the rail's pairs, with each
// node's MTU that of the rail's interface, and the nodes that lack the rail left out (not
// reachable on it, with the reason).
AnalysisInput BuildRailInput(const Fleet& fleet, const SweepSpecs& specs, const v1::Config& config,
                             const RailPlan& rail, const RoundRunner& runner,
                             std::vector<const PairRun*>* ordered = nullptr);

// What a node's inventory says of its NIC on `rail` (RailState), and why it lacks it (`missing`).
v1::RailState RailStateOf(const v1::NodeInventory& inventory, const v1::Rail& rail,
                          const std::string& missing);

// One RoundRunner per rail. Rails share no link, so round r of every rail runs at once (the
// sweep's max_parallel_pairs shared between them, at least one pair a rail); one progress
// event per round, with `phase` ("measure", "retest", "localise"), counts every rail's pairs.
// No round starts once `stop` is set. After a round in which a node's RPCs failed in
// transport, that node is asked (within `inventory_timeout`) whether it is there, and its later
// pairs are not run when it is not: a dead agent costs one deadline in the sweep, not one per
// round.
class RailRunners {
 public:
  RailRunners(AgentClient& agents, Fleet& fleet, const std::vector<RailPlan>& rails,
              RoundSettings settings);

  // What a run of rounds may do: only some of the probes (`only`, by probe index); no round
  // after the first `must_run` (at least one) starts at or past `stop_after`; `companions`
  // (when given, shaped as by_rail): pairs measured beside each round for its load only
  // (AddCompanions).
  struct Limits {
    const std::vector<bool>* only = nullptr;
    absl::Time stop_after = absl::InfiniteFuture();
    size_t must_run = 1;
    const std::vector<std::vector<Round>>* companions = nullptr;
  };
  // `by_rail[i]`: rail i's rounds (a rail with fewer rounds sits out the later ones). Returns
  // how many rounds ran.
  size_t Run(const std::vector<std::vector<Round>>& by_rail, uint32_t attempt, const char* phase,
             const Limits& limits);
  size_t Run(const std::vector<std::vector<Round>>& by_rail, uint32_t attempt, const char* phase) {
    return Run(by_rail, attempt, phase, Limits{});
  }
  // The same rounds on every rail.
  void RunAll(const std::vector<Round>& rounds, uint32_t attempt, const char* phase);

  size_t size() const { return runners_.size(); }
  RoundRunner& rail(size_t i) { return *runners_[i]; }
  const RoundRunner& rail(size_t i) const { return *runners_[i]; }

 private:
  AgentClient& agents_;
  Fleet& fleet_;
  ProgressFn progress_;
  const std::atomic<bool>* stop_;
  const absl::Duration inventory_timeout_;
  LoadMeter load_;  // every rail's probes
  std::vector<std::unique_ptr<RoundRunner>> runners_;
};

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_RAILS_H_
