#include "controller/sweep/rounds.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/logging.h"
#include "google/protobuf/util/time_util.h"
#include "probes/catalogue.h"

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

bool Better(const v1::ProbeResult& candidate, const v1::ProbeResult& kept) {
  if (kept.outcome() != v1::PROBE_OK) return candidate.outcome() == v1::PROBE_OK;
  if (candidate.outcome() != v1::PROBE_OK) return false;
  if (!std::isnan(HeadlineBw(kept))) return HeadlineBw(candidate) > HeadlineBw(kept);
  if (!std::isnan(HeadlineLat(kept))) return HeadlineLat(candidate) < HeadlineLat(kept);
  return false;
}

v1::ProbeResult MeasurePair(AgentClient& agents, Node& client, Node& server,
                            const v1::ProbeSpec& spec, const std::string& run_id) {
  v1::ProbeResult result;
  result.set_kind(spec.kind());
  result.set_node(client.name);
  result.set_peer(server.name);
  *result.mutable_started() = TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(absl::Now()));
  const absl::Duration timeout =
      absl::Microseconds(TimeUtil::DurationToMicroseconds(spec.timeout()));
  auto fail = [&](Node& who, const char* half, const absl::Status& s) {
    if (IsTransportFailure(s)) who.transport_failures = true;
    result.set_outcome(absl::IsDeadlineExceeded(s) ? v1::PROBE_TIMEOUT : v1::PROBE_FAILED);
    result.set_reason(absl::StrCat(half, " on ", who.name, ": ", s.message()));
    return result;
  };

  v1::StartProbeServerRequest start;
  *start.mutable_spec() = spec;
  start.set_run_id(run_id);
  start.set_peer(client.name);
  auto started = agents.StartProbeServer(server.address, start, kStartTimeout);
  if (!started.ok()) return fail(server, "server half", started.status());

  v1::RunProbeClientRequest run;
  *run.mutable_spec() = spec;
  run.set_run_id(run_id);
  run.set_peer(server.name);
  *run.mutable_server() = started->endpoint();
  auto ran = agents.RunProbeClient(client.address, run, timeout + kRpcSlack);

  v1::StopProbeServerRequest stop;
  stop.set_run_id(run_id);
  absl::Status stopped = agents.StopProbeServer(server.address, stop, kStopTimeout);
  if (IsTransportFailure(stopped)) server.transport_failures = true;

  if (!ran.ok()) return fail(client, "client half", ran.status());
  v1::ProbeResult measured = ran->result();
  measured.set_node(client.name);
  measured.set_peer(server.name);
  *measured.mutable_started() = result.started();
  return measured;
}

RoundRunner::RoundRunner(AgentClient& agents, Store& store, int64_t sweep_id, Fleet& fleet,
                         std::vector<v1::ProbeSpec> specs, uint32_t max_parallel_pairs,
                         ProgressFn progress)
    : agents_(agents),
      store_(store),
      sweep_id_(sweep_id),
      fleet_(fleet),
      specs_(std::move(specs)),
      max_parallel_pairs_(std::max<uint32_t>(1, max_parallel_pairs)),
      progress_(std::move(progress)) {}

void RoundRunner::Save(uint32_t round, uint32_t attempt, const v1::ProbeResult& result) {
  if (auto s = store_.InsertResult(sweep_id_, round, attempt, result); !s.ok()) {
    Logger("sweep")->error("sweep {}: cannot store a result: {}", sweep_id_, std::string(s.message()));
  }
}

void RoundRunner::StoreExtra(const v1::ProbeResult& result) { Save(next_round_++, 1, result); }

void RoundRunner::Keep(const Pair& pair, std::vector<v1::ProbeResult> results) {
  std::lock_guard<std::mutex> lock(mu_);
  PairRun& run = pairs_[KeyOf(pair.first, pair.second)];
  run.client = pair.first;
  run.server = pair.second;
  ++run.attempts;
  if (run.results.empty()) {
    run.results = std::move(results);
    return;
  }
  for (size_t k = 0; k < results.size(); ++k) {
    if (Better(results[k], run.results[k])) run.results[k] = std::move(results[k]);
  }
}

uint32_t RoundRunner::MeasureRound(const Round& round, uint32_t attempt) {
  const uint32_t round_index = next_round_++;
  std::atomic<uint32_t> failed{0};
  for (size_t begin = 0; begin < round.size(); begin += max_parallel_pairs_) {
    const size_t end = std::min(round.size(), begin + max_parallel_pairs_);
    std::vector<std::thread> threads;
    for (size_t i = begin; i < end; ++i) {
      threads.emplace_back([&, pair = round[i]] {
        Node& client = *fleet_.nodes[pair.first];
        Node& server = *fleet_.nodes[pair.second];
        std::vector<v1::ProbeResult> results;
        for (const v1::ProbeSpec& spec : specs_) {
          const std::string run_id =
              absl::StrCat("s", sweep_id_, "-r", round_index, "-a", attempt, "-", client.name, "-",
                           server.name, "-", probes::FindProbeInfo(spec.kind())->name);
          v1::ProbeResult result = MeasurePair(agents_, client, server, spec, run_id);
          result.set_round(round_index);
          result.set_attempt(attempt);
          Save(round_index, attempt, result);
          if (Failed(result)) ++failed;
          results.push_back(std::move(result));
        }
        Keep(pair, std::move(results));
      });
    }
    for (auto& t : threads) t.join();
  }
  return failed.load();
}

void RoundRunner::Run(const std::vector<Round>& rounds, uint32_t attempt, const char* phase) {
  for (uint32_t r = 0; r < rounds.size(); ++r) {
    const uint32_t failed = MeasureRound(rounds[r], attempt);
    if (!progress_) continue;
    v1::SweepEvent event;
    auto* e = event.mutable_round();
    e->set_round(r + 1);
    e->set_rounds(static_cast<uint32_t>(rounds.size()));
    e->set_pairs(static_cast<uint32_t>(rounds[r].size()));
    e->set_pairs_failed(failed);
    e->set_phase(phase);
    progress_(event);
  }
}

void RoundRunner::Retest(uint32_t retests, absl::Duration inventory_timeout) {
  CheckReachable(agents_, fleet_, inventory_timeout, /*only_suspect=*/true);
  for (uint32_t attempt = 2; attempt <= 1 + retests; ++attempt) {
    std::vector<Pair> failing;
    for (const auto& [key, run] : pairs_) {
      if (!fleet_.nodes[run.client]->reachable || !fleet_.nodes[run.server]->reachable) continue;
      if (std::any_of(run.results.begin(), run.results.end(), Failed)) {
        failing.push_back({run.client, run.server});
      }
    }
    if (failing.empty()) break;
    Run(PackRounds(failing), attempt, "retest");
    CheckReachable(agents_, fleet_, inventory_timeout, /*only_suspect=*/true);
  }
}

}  // namespace fabricctl::controller::sweep
