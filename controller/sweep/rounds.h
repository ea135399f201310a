#ifndef FABRICCTL_CONTROLLER_SWEEP_ROUNDS_H_
#define FABRICCTL_CONTROLLER_SWEEP_ROUNDS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "controller/store/store.h"
#include "controller/sweep/agent_client.h"
#include "controller/sweep/fleet.h"
#include "controller/sweep/load_meter.h"
#include "controller/sweep/pairing.h"
#include "proto/controller.pb.h"
#include "proto/probe.pb.h"

namespace fabricctl::controller::sweep {

using ProgressFn = std::function<void(const v1::SweepEvent&)>;

// Everything measured on one pair: the kept result per probe (in the sweep's probe order),
// client to server, and of the bandwidth probes server to client (an unset result where a
// probe was not measured that way), and how often the pair was measured. The kept result is
// the best attempt's; the two worst attempts' headline bandwidths are kept beside it (NaN where
// none), so that attempts that disagree (a flapping link) are seen, not averaged away.
struct PairRun {
  uint32_t client = 0, server = 0;
  std::vector<v1::ProbeResult> results;
  std::vector<v1::ProbeResult> reverse;
  std::vector<float> worst, worst_reverse;            // the lowest figure of the attempts
  std::vector<float> next_worst, next_worst_reverse;  // the second lowest
  // The lowest p99 latency of the attempts (HeadlineTail; NaN where none): a re-test clears a
  // chance tail even when its median is not the best.
  std::vector<float> best_tail;
  // The lowest retransmitted share of the attempts, each way (HeadlineLoss; NaN where none): a
  // re-test clears a chance loss, as it does a chance tail.
  std::vector<float> least_loss, least_loss_reverse;
  // Whether in that attempt the receiving host's own drops could account for what its sender
  // retransmitted (ReceiverDropped): the loss is the host's, not the link's.
  std::vector<uint8_t> least_loss_host, least_loss_host_reverse;
  uint32_t attempts = 0;
};

// Whether the receiving host's own drops (ProbeResult.receiver_drops) could account for every
// retransmission of the result: each drop a packet of up to kSegmentsPerDrop segments (a
// receive-offloaded packet of 64 KiB holds 45 of 1448 bytes), the retransmissions less those the
// receiver said it already had.
inline constexpr uint64_t kSegmentsPerDrop = 45;
bool ReceiverDropped(const v1::ProbeResult& r);

// Pairs by {lower index, higher index}.
using PairKey = std::pair<uint32_t, uint32_t>;
PairKey KeyOf(uint32_t a, uint32_t b);

// Headline figures of a result: average bandwidth at the largest size, typical latency at the
// smallest; NaN when not measured.
float HeadlineBw(const v1::ProbeResult& r);
float HeadlineLat(const v1::ProbeResult& r);
// The share of its TCP segments a bandwidth result's sender retransmitted, over all its sizes,
// when they add up to kMinLossSegments or more; NaN otherwise (or not measured).
float HeadlineLoss(const v1::ProbeResult& r);
// The 99th percentile latency at the smallest size, when it rests on kMinTailSamples
// iterations or more (a p99 of fewer is its few worst samples); NaN otherwise.
inline constexpr uint64_t kMinTailSamples = 1000;
float HeadlineTail(const v1::ProbeResult& r);

// One probe on one pair: the server half on `server`, the client half on `client` (its RPC
// deadline the spec's timeout plus a slack, so that the agent's own bound fires first and says
// what it saw), then the server half stopped. An agent that is busy (RESOURCE_EXHAUSTED: a
// probe of another run still holds it) is asked again, with a growing pause, for as long as
// the spec's timeout allows. A failure names the half and the node; one the agent refused is
// marked `refused` (no evidence about the path); a node whose RPC failed in transport is marked
// for a reachability check.
// The client's result is taken as trust.h's AcceptResult says (figures up to `max_gbps`); a
// failure the client blames on the server's GPU memory counts as such only when the server
// half says so itself.
v1::ProbeResult MeasurePair(AgentClient& agents, Node& client, Node& server,
                            const v1::ProbeSpec& spec, const std::string& run_id, double max_gbps);

// Which of two results of the same probe on the same pair to keep: a measurement beats a
// failure; the better measurement beats the worse (a re-test that recovers was a transient).
bool Better(const v1::ProbeResult& candidate, const v1::ProbeResult& kept);

// Where a sweep's results go and how its rounds run.
struct RoundSettings {
  Store* store = nullptr;  // every result is written here, under `sweep_id`
  int64_t sweep_id = 0;
  // reverse[k]: measure the sweep's spec k from server to client too (the bandwidth probes).
  std::vector<bool> reverse;
  uint32_t max_parallel_pairs = 256;  // a sweep's pairs measured at once, every rail's together
  ProgressFn progress;                // one event per round (RailRunners)
  const std::atomic<bool>* stop = nullptr;  // no round starts once it is set
  // How long a node whose RPCs failed in transport may take to say it is still there.
  absl::Duration inventory_timeout = absl::Seconds(5);
  // Record each result's concurrency (SweepOptions::measure_load).
  bool measure_load = true;
};

// Measures rounds of pairs through the agents and keeps, per pair, the best result of each
// probe. Every result is written to the store when its round ends. Rounds are numbered in the order
// they run (the plan's, then re-tests, then localisation, then the collectives).
class RoundRunner {
 public:
  // `specs`: the probes of every pair, `max_parallel_pairs` of them at once (this runner's
  // share of the settings'). Every result records the concurrency `load` saw during it (shared
  // by a sweep's rails).
  RoundRunner(AgentClient& agents, Fleet& fleet, const RoundSettings& settings,
              std::vector<v1::ProbeSpec> specs, uint32_t max_parallel_pairs, LoadMeter& load);

  // One round: max_parallel_pairs pairs at once, each of that many threads taking the next
  // pair as soon as it has finished one (no batches: a round of more pairs than that takes
  // about as long as its slowest thread's share, not as its batches' slowest pairs added
  // up); returns how many pairs failed. `only` (when given) names the probes to run, by index into
  // the sweep's specs; the others keep what they have (a re-test of a slow pair measures its
  // bandwidth again, not its latency). `companions` (when given) are measured beside the
  // round's pairs for their load only (AddCompanions): neither kept, stored nor counted.
  // RailRunners runs the rounds, every rail's at once.
  uint32_t MeasureRound(const Round& round, uint32_t attempt, const std::vector<bool>* only,
                        const Round* companions = nullptr);

  // Measures on rail `name` (every result says so, and the run ids too); pairs with a node
  // that lacks the rail (`absent`, by fleet index) are not measured.
  void PlaceOnRail(std::string name, std::vector<bool> absent) {
    rail_ = std::move(name);
    absent_ = std::move(absent);
  }
  const std::string& rail_name() const { return rail_; }

  // Stores a result measured outside the rounds (a collective) under the next round number.
  void StoreExtra(const v1::ProbeResult& result);

  // What is kept so far; read between rounds (a round writes it only while Run runs).
  const std::map<PairKey, PairRun>& pairs() const {
    MutexLock lock(&mu_);
    return pairs_;
  }
  bool Measured(uint32_t a, uint32_t b) const {
    MutexLock lock(&mu_);
    return pairs_.count(KeyOf(a, b)) > 0;
  }
  int64_t sweep_id() const { return sweep_id_; }

 private:
  bool Absent(uint32_t node) const { return node < absent_.size() && absent_[node]; }
  // The agents' run id of one probe of one pair: sweep, round, attempt, ends, probe and rail.
  std::string RunId(uint32_t round, uint32_t attempt, const std::string& from,
                    const std::string& to, v1::ProbeKind kind) const;
  void Keep(const Pair& pair, std::vector<v1::ProbeResult> results,
            std::vector<v1::ProbeResult> reverse);
  // A pair's results, held until its round ends: a result's concurrency is known once every
  // probe it overlapped has ended (LoadMeter).
  struct Held {
    std::vector<v1::ProbeResult> results, reverse;
    std::vector<std::pair<v1::ProbeResult*, LoadMeter::Ticket>> tickets;
  };
  // The round has ended: each result's concurrency, then the first `kept` pairs' results stored
  // and kept (the others were companions).
  void FinishRound(uint32_t round_index, uint32_t attempt, const std::vector<bool>* only,
                   const std::vector<Pair>& pairs, size_t kept, std::vector<Held>& measured);
  void Save(uint32_t round, uint32_t attempt, const v1::ProbeResult& result);

  AgentClient& agents_;
  Store& store_;
  const int64_t sweep_id_;
  Fleet& fleet_;
  const std::vector<v1::ProbeSpec> specs_;
  const std::vector<bool> reverse_;
  const bool measure_load_;
  const uint32_t max_parallel_pairs_;
  LoadMeter& load_;
  uint32_t next_round_ = 0;
  std::string rail_;
  std::vector<bool> absent_;
  mutable Mutex mu_;  // guards pairs_ while a round runs
  std::map<PairKey, PairRun> pairs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_ROUNDS_H_
