#include "controller/sweep/rounds.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>

#include "absl/strings/str_cat.h"
#include "base/logging.h"
#include "base/parallel.h"
#include "base/utf8.h"
#include "controller/sweep/trust.h"
#include "controller/verdict/analysis.h"
#include "google/protobuf/util/time_util.h"
#include "probes/catalogue.h"
#include "probes/common/params.h"

namespace fabricctl::controller::sweep {
namespace {

using google::protobuf::util::TimeUtil;

constexpr absl::Duration kStartTimeout = absl::Seconds(10);
constexpr absl::Duration kStopTimeout = absl::Seconds(5);
constexpr absl::Duration kRpcSlack = absl::Seconds(5);

bool Failed(const v1::ProbeResult& r) {
  return r.outcome() == v1::PROBE_FAILED || r.outcome() == v1::PROBE_TIMEOUT;
}

}  // namespace

PairKey KeyOf(uint32_t a, uint32_t b) { return {std::min(a, b), std::max(a, b)}; }

float HeadlineBw(const v1::ProbeResult& r) {
  if (r.outcome() != v1::PROBE_OK || r.bw_size() == 0) return std::nanf("");
  return static_cast<float>(r.bw(r.bw_size() - 1).bw_avg_gbps());
}

float HeadlineLat(const v1::ProbeResult& r) {
  if (r.outcome() != v1::PROBE_OK || r.lat_size() == 0) return std::nanf("");
  return static_cast<float>(r.lat(0).t_typical_us());
}

float HeadlineLoss(const v1::ProbeResult& r) {
  if (r.outcome() != v1::PROBE_OK || r.bw_size() == 0) return std::nanf("");
  uint64_t segments = 0, retransmits = 0;
  for (const auto& p : r.bw()) {
    if (!p.has_segments() || !p.has_retransmits()) return std::nanf("");
    segments += p.segments();
    // A retransmission the receiver says it already had was late, not lost.
    retransmits += p.retransmits() - std::min(p.spurious_retransmits(), p.retransmits());
  }
  if (segments < kMinLossSegments) return std::nanf("");
  return static_cast<float>(static_cast<double>(retransmits) / static_cast<double>(segments));
}

bool ReceiverDropped(const v1::ProbeResult& r) {
  if (r.outcome() != v1::PROBE_OK || !r.has_receiver_drops() || r.receiver_drops() == 0)
    return false;
  uint64_t retransmits = 0;
  for (const auto& p : r.bw()) {
    retransmits += p.retransmits() - std::min(p.spurious_retransmits(), p.retransmits());
  }
  // As a division: a receiver's figure, however large, cannot overflow it.
  return (retransmits + kSegmentsPerDrop - 1) / kSegmentsPerDrop <= r.receiver_drops();
}

float HeadlineTail(const v1::ProbeResult& r) {
  if (r.outcome() != v1::PROBE_OK || r.lat_size() == 0 || r.lat(0).iterations() < kMinTailSamples) {
    return std::nanf("");
  }
  return static_cast<float>(r.lat(0).t_p99_us());
}

bool Better(const v1::ProbeResult& candidate, const v1::ProbeResult& kept) {
  if (kept.outcome() != v1::PROBE_OK) return candidate.outcome() == v1::PROBE_OK;
  if (candidate.outcome() != v1::PROBE_OK) return false;
  if (!std::isnan(HeadlineBw(kept))) return HeadlineBw(candidate) > HeadlineBw(kept);
  if (!std::isnan(HeadlineLat(kept))) return HeadlineLat(candidate) < HeadlineLat(kept);
  return false;
}

namespace {

// What one measurement of a pair is: its probe, its run's id, its deadline, and the most
// bandwidth a result may claim.
struct Measurement {
  const v1::ProbeSpec& spec;
  std::string run_id;
  absl::Duration timeout;
  double max_gbps;
};

// One attempt at the pair; RESOURCE_EXHAUSTED (an agent busy with another run's probe) is
// returned for the caller to wait and try again.
absl::StatusOr<v1::ProbeResult> MeasureOnce(AgentClient& agents, Node& client, Node& server,
                                            const Measurement& m);

}  // namespace

v1::ProbeResult MeasurePair(AgentClient& agents, Node& client, Node& server,
                            const v1::ProbeSpec& spec, const std::string& run_id, double max_gbps) {
  const absl::Duration timeout =
      absl::Microseconds(TimeUtil::DurationToMicroseconds(spec.timeout()));
  const absl::Time give_up = absl::Now() + std::max(timeout, absl::Seconds(1));
  absl::Duration pause = absl::Milliseconds(100);
  for (uint32_t attempt = 0;; ++attempt) {
    auto result = MeasureOnce(
        agents, client, server,
        {spec, attempt == 0 ? run_id : absl::StrCat(run_id, "-w", attempt), timeout, max_gbps});
    if (result.ok()) return *std::move(result);
    // Busy: wait for the other run's probe to end, within the pair's own budget.
    if (absl::Now() + pause >= give_up) {
      v1::ProbeResult busy;
      busy.set_kind(spec.kind());
      busy.set_node(client.name);
      busy.set_peer(server.name);
      busy.set_outcome(v1::PROBE_FAILED);
      busy.set_refused(true);
      busy.set_reason(std::string(result.status().message()));
      return busy;
    }
    absl::SleepFor(pause);
    pause = std::min(pause * 2, absl::Seconds(1));
  }
}

namespace {

absl::StatusOr<v1::ProbeResult> MeasureOnce(AgentClient& agents, Node& client, Node& server,
                                            const Measurement& m) {
  const v1::ProbeSpec& spec = m.spec;
  const std::string& run_id = m.run_id;
  v1::ProbeResult result;
  result.set_kind(spec.kind());
  result.set_node(client.name);
  result.set_peer(server.name);
  *result.mutable_started() = TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(absl::Now()));
  auto fail = [&](Node& who, const char* half,
                  const absl::Status& s) -> absl::StatusOr<v1::ProbeResult> {
    if (IsTransportFailure(s)) who.transport_failures = true;
    result.set_outcome(absl::IsDeadlineExceeded(s) ? v1::PROBE_TIMEOUT : v1::PROBE_FAILED);
    result.set_reason(absl::StrCat(half, " on ", who.name, ": ", s.message()));
    // Refused by the agent (an invalid request, a missing capability): says nothing of the path.
    result.set_refused(!IsTransportFailure(s) && !absl::IsCancelled(s));
    return result;
  };

  v1::StartProbeServerRequest start;
  *start.mutable_spec() = spec;
  start.set_run_id(run_id);
  start.set_peer(client.name);
  auto started = agents.StartProbeServer(server.address, start, kStartTimeout);
  if (absl::IsResourceExhausted(started.status())) return started.status();
  if (!started.ok()) return fail(server, "server half", started.status());
  if (auto own = OwnAddress(server, started->endpoint().address()); !own.ok()) {
    v1::StopProbeServerRequest stop;
    stop.set_run_id(run_id);
    (void)agents.StopProbeServer(server.address, stop, kStopTimeout);
    result.set_cause(v1::CAUSE_INVALID_FIGURES);
    result.set_failed_side(v1::SIDE_SERVER);
    return fail(server, "server half", own);
  }

  v1::RunProbeClientRequest run;
  *run.mutable_spec() = spec;
  run.set_run_id(run_id);
  run.set_peer(server.name);
  *run.mutable_server() = started->endpoint();
  auto ran = agents.RunProbeClient(client.address, run, m.timeout + kRpcSlack);

  v1::StopProbeServerRequest stop;
  stop.set_run_id(run_id);
  auto stopped = agents.StopProbeServer(server.address, stop, kStopTimeout);
  if (IsTransportFailure(stopped.status())) server.transport_failures = true;

  if (absl::IsResourceExhausted(ran.status())) return ran.status();
  if (!ran.ok()) return fail(client, "client half", ran.status());
  v1::ProbeResult measured = ran->result();
  AcceptResult(client.name, spec, m.max_gbps, &measured);
  measured.set_node(client.name);
  measured.set_peer(server.name);
  *measured.mutable_started() = result.started();
  // The receiving host's own drops, in its own words (a host that claims them blames itself).
  if (stopped.ok() && stopped->result().has_receiver_drops()) {
    measured.set_receiver_drops(stopped->result().receiver_drops());
    measured.set_receiver_drop_counters(
        PrintableText(stopped->result().receiver_drop_counters().substr(0, 256)));
  } else {
    measured.clear_receiver_drops();
    measured.clear_receiver_drop_counters();
  }
  // Each half speaks for itself: the client's word that the server's half failed (its GPU
  // memory) stands only where the server half says so too.
  if (measured.failed_side() == v1::SIDE_SERVER &&
      measured.cause() == v1::CAUSE_GPUDIRECT_UNAVAILABLE &&
      !(stopped.ok() && stopped->result().failed_side() == v1::SIDE_SERVER &&
        stopped->result().cause() == v1::CAUSE_GPUDIRECT_UNAVAILABLE)) {
    // Unconfirmed: no evidence about the server's GPU, nor about the path between them.
    measured.set_cause(v1::CAUSE_PEER_REFUSED);
    measured.set_refused(true);
  }
  return measured;
}

}  // namespace

RoundRunner::RoundRunner(AgentClient& agents, Fleet& fleet, const RoundSettings& settings,
                         std::vector<v1::ProbeSpec> specs, uint32_t max_parallel_pairs,
                         LoadMeter& load)
    : agents_(agents),
      store_(*settings.store),
      sweep_id_(settings.sweep_id),
      fleet_(fleet),
      specs_(std::move(specs)),
      reverse_(settings.reverse),
      measure_load_(settings.measure_load),
      max_parallel_pairs_(std::max<uint32_t>(1, max_parallel_pairs)),
      load_(load) {}

std::string RoundRunner::RunId(uint32_t round, uint32_t attempt, const std::string& from,
                               const std::string& to, v1::ProbeKind kind) const {
  const std::string head = absl::StrCat("s", sweep_id_, "-r", round, "-a", attempt, "-");
  const std::string tail =
      absl::StrCat("-", probes::FindProbeInfo(kind)->name, rail_.empty() ? "" : "-", rail_);
  std::string id = absl::StrCat(head, from, "-", to, tail);
  // Agents take ids of at most kMaxRunIdLength characters (MeasurePair may add "-wN"): long
  // names and a rail's are replaced by a digest of them, unique within the run.
  if (id.size() > probes::kMaxRunIdLength - 8) {
    id = absl::StrCat(
        head,
        absl::Hex(std::hash<std::string>()(absl::StrCat(from, "\x1f", to, "\x1f", rail_)),
                  absl::kZeroPad16),
        "-", probes::FindProbeInfo(kind)->name);
  }
  return id;
}

void RoundRunner::Save(uint32_t round, uint32_t attempt, const v1::ProbeResult& result) {
  if (auto s = store_.InsertResult(sweep_id_, round, attempt, result); !s.ok()) {
    Logger("sweep")->error("sweep {}: cannot store a result: {}", sweep_id_,
                           std::string(s.message()));
  }
}

void RoundRunner::StoreExtra(const v1::ProbeResult& result) { Save(next_round_++, 1, result); }

void RoundRunner::Keep(const Pair& pair, std::vector<v1::ProbeResult> results,
                       std::vector<v1::ProbeResult> reverse) {
  MutexLock lock(&mu_);
  PairRun& run = pairs_[KeyOf(pair.first, pair.second)];
  if (run.attempts == 0) {
    run.client = pair.first;
    run.server = pair.second;
    for (const auto& r : results) run.worst.push_back(HeadlineBw(r));
    for (const auto& r : reverse) run.worst_reverse.push_back(HeadlineBw(r));
    run.worst_reverse.resize(results.size(), std::nanf(""));
    run.next_worst.assign(results.size(), std::nanf(""));
    for (const auto& r : results) run.best_tail.push_back(HeadlineTail(r));
    for (const auto& r : results) run.least_loss.push_back(HeadlineLoss(r));
    for (const auto& r : reverse) run.least_loss_reverse.push_back(HeadlineLoss(r));
    run.least_loss_reverse.resize(results.size(), std::nanf(""));
    for (const auto& r : results) run.least_loss_host.push_back(ReceiverDropped(r));
    for (const auto& r : reverse) run.least_loss_host_reverse.push_back(ReceiverDropped(r));
    run.least_loss_host_reverse.resize(results.size(), 0);
    run.next_worst_reverse.assign(results.size(), std::nanf(""));
    run.results = std::move(results);
    run.reverse = std::move(reverse);
    run.attempts = 1;
    return;
  }
  ++run.attempts;
  auto keep_least = [](float& least, uint8_t& host, const v1::ProbeResult& r) {
    if (const float loss = HeadlineLoss(r); !std::isnan(loss) && !(least <= loss)) {
      least = loss;
      host = ReceiverDropped(r);
    }
  };
  // The two lowest figures so far (NaN: none yet).
  auto keep_worst = [](float& worst, float& next, const v1::ProbeResult& r) {
    const float bw = HeadlineBw(r);
    if (std::isnan(bw)) return;
    if (!(worst <= bw)) {
      next = worst;
      worst = bw;
    } else if (!(next <= bw)) {
      next = bw;
    }
  };
  // A re-test may run the other way round: each direction of a directed probe is kept as
  // its own; a symmetric probe (latency) has one figure whichever way it ran.
  const bool swapped = pair.first != run.client;
  for (size_t k = 0; k < results.size(); ++k) {
    if (results[k].kind() == v1::PROBE_KIND_UNSPECIFIED) continue;  // not run this time
    if (const float tail = HeadlineTail(results[k]);
        !std::isnan(tail) && !(run.best_tail[k] <= tail)) {
      run.best_tail[k] = tail;
    }
    const bool directed = k < reverse_.size() && reverse_[k];
    auto& forward = swapped && directed ? run.reverse[k] : run.results[k];
    if (swapped && directed) {
      keep_worst(run.worst_reverse[k], run.next_worst_reverse[k], results[k]);
      keep_least(run.least_loss_reverse[k], run.least_loss_host_reverse[k], results[k]);
    } else {
      keep_worst(run.worst[k], run.next_worst[k], results[k]);
      keep_least(run.least_loss[k], run.least_loss_host[k], results[k]);
    }
    if (Better(results[k], forward)) forward = std::move(results[k]);
    if (!directed) continue;
    auto& backward = swapped ? run.results[k] : run.reverse[k];
    if (swapped) {
      keep_worst(run.worst[k], run.next_worst[k], reverse[k]);
      keep_least(run.least_loss[k], run.least_loss_host[k], reverse[k]);
    } else {
      keep_worst(run.worst_reverse[k], run.next_worst_reverse[k], reverse[k]);
      keep_least(run.least_loss_reverse[k], run.least_loss_host_reverse[k], reverse[k]);
    }
    if (Better(reverse[k], backward)) backward = std::move(reverse[k]);
  }
}

void RoundRunner::FinishRound(uint32_t round_index, uint32_t attempt, const std::vector<bool>* only,
                              const std::vector<Pair>& pairs, size_t kept,
                              std::vector<Held>& measured) {
  for (size_t i = 0; i < pairs.size(); ++i) {
    Held& m = measured[i];
    for (const auto& [result, ticket] : m.tickets) {
      if (measure_load_) result->set_concurrency(static_cast<float>(load_.Concurrency(ticket)));
      load_.Release(ticket);
    }
    if (i >= kept) continue;
    for (size_t k = 0; k < m.results.size(); ++k) {
      if (only != nullptr && k < only->size() && !(*only)[k]) continue;  // not run
      Save(round_index, attempt, m.results[k]);
      if (k < reverse_.size() && reverse_[k]) Save(round_index, attempt, m.reverse[k]);
    }
    Keep(pairs[i], std::move(m.results), std::move(m.reverse));
  }
}

uint32_t RoundRunner::MeasureRound(const Round& round, uint32_t attempt,
                                   const std::vector<bool>* only, const Round* companions) {
  const uint32_t round_index = next_round_++;
  std::atomic<uint32_t> failed{0};
  std::vector<Pair> pairs;
  for (const Pair& pair : round) {
    if (!Absent(pair.first) && !Absent(pair.second))
      pairs.push_back(pair);  // else not on this rail
  }
  const size_t kept = pairs.size();  // the companions after them load the round only
  if (companions != nullptr) {
    for (const Pair& pair : *companions) {
      if (!Absent(pair.first) && !Absent(pair.second)) pairs.push_back(pair);
    }
  }
  std::vector<Held> measured(pairs.size());
  // max_parallel_pairs at once, each thread taking the next pair as it finishes one.
  ParallelFor(pairs.size(), max_parallel_pairs_, [&](size_t i) {
    const Pair pair = pairs[i];
    Node& client = *fleet_.nodes[pair.first];
    Node& server = *fleet_.nodes[pair.second];
    Held& out = measured[i];
    out.reverse.resize(specs_.size());
    out.results.reserve(specs_.size());
    // Once the path has failed, the pair's other probes would only wait out the same
    // deadline: they are recorded as not run, for the same reason. A pair with an end
    // found unreachable since the plan was made is not run at all.
    std::string path_failed;
    bool pair_failed = false;
    if (!client.reachable || !server.reachable) {
      path_failed = absl::StrCat(client.reachable ? server.name : client.name, " did not answer");
    }
    auto measure = [&](Node& from, Node& to, const v1::ProbeSpec& spec, v1::ProbeResult* result) {
      const std::string run_id = RunId(round_index, attempt, from.name, to.name, spec.kind());
      if (path_failed.empty()) {
        const LoadMeter::Ticket ticket = load_.Enter(absl::Now());
        *result = MeasurePair(agents_, from, to, spec, run_id, fleet_.max_gbps);
        load_.Leave(ticket, absl::Now(), result->outcome() == v1::PROBE_OK);
        out.tickets.emplace_back(result, ticket);
        if (Failed(*result) && !result->refused()) path_failed = result->reason();
      } else {
        result->set_kind(spec.kind());
        result->set_node(from.name);
        result->set_peer(to.name);
        result->set_outcome(v1::PROBE_FAILED);
        result->set_reason(absl::StrCat("not run: the path failed: ", path_failed));
      }
      result->set_round(round_index);
      result->set_attempt(attempt);
      result->set_rail(rail_);
      if (Failed(*result)) pair_failed = true;
    };
    for (size_t k = 0; k < specs_.size(); ++k) {
      out.results.emplace_back();
      // Not run this time: the kept result stands.
      if (only != nullptr && k < only->size() && !(*only)[k]) continue;
      measure(client, server, specs_[k], &out.results.back());
      if (k < reverse_.size() && reverse_[k]) measure(server, client, specs_[k], &out.reverse[k]);
    }
    if (pair_failed && i < kept) ++failed;
  });
  FinishRound(round_index, attempt, only, pairs, kept, measured);
  return failed.load();
}

}  // namespace fabricctl::controller::sweep
