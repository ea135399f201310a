#include "controller/sweep/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/logging.h"
#include "base/status_macros.h"
#include "controller/sweep/agent_client.h"
#include "controller/sweep/allreduce.h"
#include "controller/sweep/assemble.h"
#include "controller/sweep/companions.h"
#include "controller/sweep/context.h"
#include "controller/sweep/fleet.h"
#include "controller/sweep/incremental.h"
#include "controller/sweep/node_bandwidth.h"
#include "controller/sweep/plan.h"
#include "controller/sweep/rails.h"
#include "controller/sweep/retest_plan.h"
#include "controller/sweep/rounds.h"
#include "controller/sweep/specs.h"
#include "controller/sweep/trust.h"
#include "controller/verdict/analysis.h"
#include "controller/verdict/cabling.h"
#include "controller/verdict/earned.h"
#include "controller/verdict/flaps.h"
#include "controller/verdict/give_back.h"
#include "controller/verdict/rails.h"
#include "controller/verdict/reference_config.h"
#include "controller/verdict/regression.h"
#include "controller/verdict/slow_rail.h"
#include "google/protobuf/util/time_util.h"

namespace fabricctl::controller {
namespace {

using google::protobuf::util::TimeUtil;

v1::SweepInfo StartedInfo(int64_t id, absl::Time started, const sweep::Plan& plan,
                          const sweep::SweepSpecs& specs, const sweep::Fleet& fleet,
                          const v1::SweepRequest& request) {
  v1::SweepInfo info;
  info.set_sweep_id(id);
  info.set_state(v1::SWEEP_RUNNING);
  *info.mutable_started() = TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(started));
  info.set_pairing(plan.pairing);
  for (v1::ProbeKind kind : specs.kinds) info.add_probes(kind);
  if (specs.allreduce) info.add_probes(v1::ALLREDUCE);
  if (specs.gpu_copy) info.add_probes(v1::GPU_COPY);
  for (const auto& node : fleet.nodes) info.add_nodes(node->name);
  info.set_rounds(static_cast<uint32_t>(plan.rounds.size()));
  uint64_t planned = 0;
  for (const auto& round : plan.rounds) planned += round.size();
  const uint64_t live = fleet.Live().size();
  info.set_planned_pairs(planned);
  info.set_full_mesh_pairs(live * (live - (live > 0 ? 1 : 0)) / 2);
  info.set_baseline_sweep_id(request.baseline_sweep_id());
  return info;
}

// The headline bandwidth of every measured pair of every rail, for the comparison with a
// baseline.
std::vector<PairFigure> BaselineFigures(const sweep::Fleet& fleet,
                                        const std::vector<sweep::RailOutcome>& rails) {
  std::vector<PairFigure> out;
  for (const sweep::RailOutcome& rail : rails) {
    for (const PairInput& p : rail.input.pairs) {
      if (!std::isnan(p.forward.bw_gbps)) {
        out.push_back({fleet.Name(p.client), fleet.Name(p.server), p.forward.bw_gbps, rail.rail});
      }
      if (!std::isnan(p.reverse.bw_gbps)) {
        out.push_back({fleet.Name(p.server), fleet.Name(p.client), p.reverse.bw_gbps, rail.rail});
      }
    }
  }
  return out;
}

}  // namespace

namespace {

// sweep.max_per_identity, or its default where a configuration was not parsed (tests).
uint32_t PerIdentity(const v1::Config& config) {
  return config.sweep().has_max_per_identity() ? config.sweep().max_per_identity() : 64;
}

}  // namespace

SweepRunner::SweepRunner(Store* store, std::unique_ptr<sweep::AgentClient> agents,
                         SweepOptions options)
    : store_(store),
      agents_(std::move(agents)),
      options_(std::move(options)),
      queue_(PerIdentity(options_.config)) {
  MutexLock lock(&config_mu_);
  config_ = options_.config;
}

SweepRunner::~SweepRunner() = default;

void SweepRunner::SetConfig(v1::Config config) {
  queue_.SetPerIdentity(PerIdentity(config));
  MutexLock lock(&config_mu_);
  config_ = std::move(config);
}

v1::Config SweepRunner::Config() const {
  MutexLock lock(&config_mu_);
  return config_;
}

v1::History SweepRunner::HistoryPolicy() const { return Config().history(); }

absl::StatusOr<Store::Pruned> SweepRunner::PruneHistory(const v1::History& policy) {
  const absl::Duration keep = absl::Seconds(policy.keep().seconds());
  const absl::Time before =
      keep > absl::ZeroDuration() ? options_.now() - keep : absl::InfinitePast();
  auto pruned = store_->PruneSweeps(before, policy.keep_sweeps());
  if (pruned.ok() && (pruned->sweeps > 0 || pruned->acceptances > 0)) {
    Logger("sweep")->info(
        "history: pruned {} sweeps ({} results) and {} acceptances older than {}{}", pruned->sweeps,
        pruned->results, pruned->acceptances,
        keep > absl::ZeroDuration() ? absl::FormatDuration(keep) : "any age",
        policy.keep_sweeps() > 0 ? absl::StrCat(" or beyond the newest ", policy.keep_sweeps())
                                 : "");
  }
  return pruned;
}

void SweepRunner::Shutdown() { shutdown_ = true; }

absl::StatusOr<v1::Report> SweepRunner::Run(
    const v1::SweepRequest& request, const std::vector<StoredNode>& registry,
    const std::function<void(const v1::SweepEvent&)>& progress,
    const std::function<bool()>& cancelled, const std::string& caller) {
  if (shutdown_) return absl::UnavailableError("the controller is shutting down");
  std::vector<std::string> names;
  for (const StoredNode& node : registry) names.push_back(node.inventory.node_name());
  const QueuedSweep sweep = QueuedSweep::Of(caller, request, names);
  // Queued for at most the request's `wait`, leaving the queue when its client goes away or
  // the controller stops.
  const absl::Duration wait = std::min(
      absl::Microseconds(TimeUtil::DurationToMicroseconds(request.wait())), absl::Hours(1));
  auto leave = [&]() -> absl::Status {
    if (shutdown_) return absl::UnavailableError("the controller is shutting down");
    if (cancelled && cancelled()) {
      return absl::CancelledError(
          "the client went away while its sweep waited for the running one");
    }
    return absl::OkStatus();
  };
  const absl::Time give_up = absl::Now() + wait;
  for (;;) {
    ASSIGN_OR_RETURN(SweepQueue::Place place, queue_.Enter(sweep, give_up, leave, wait));
    if (place.runs()) {
      if (place.nodes() == sweep.nodes) {
        absl::StatusOr<v1::Report> report = RunWatched(request, registry, progress, cancelled);
        place.result().Publish(report);
        return report;
      }
      // Waiting sweeps of overlapping nodes were merged into this one: one sweep over the
      // union, each client answered with its own nodes.
      v1::SweepRequest merged = request;
      merged.clear_nodes();
      for (const std::string& n : place.nodes()) merged.add_nodes(n);
      Logger("sweep")->info("{}'s sweep runs over {} nodes, merged with waiting sweeps of theirs",
                            caller, place.nodes().size());
      absl::StatusOr<v1::Report> report = RunWatched(merged, registry, progress, cancelled);
      place.result().Publish(report);
      if (!report.ok()) return report;
      return RestrictReport(*report, sweep.nodes);
    }
    // Another sweep covers this one: its result, for these nodes. One that its own client
    // cancelled answers nobody else: this one takes a place again.
    absl::StatusOr<v1::Report> report = place.result().Wait(leave);
    if (absl::IsCancelled(report.status()) && leave().ok()) continue;
    if (!report.ok()) return report.status();
    Logger("sweep")->info("sweep {}: its result answers {}'s request over {} of its nodes",
                          report->sweep().sweep_id(), caller, sweep.nodes.size());
    return RestrictReport(*report, sweep.nodes);
  }
}

absl::StatusOr<v1::Report> SweepRunner::RunWatched(
    const v1::SweepRequest& request, const std::vector<StoredNode>& registry,
    const std::function<void(const v1::SweepEvent&)>& progress,
    const std::function<bool()>& cancelled) {
  stopping_ = false;
  agents_->Resume();
  // Watches for the client going away and for the controller shutting down; every call to an
  // agent in flight is then cancelled.
  Mutex mu;
  bool done = false;  // guarded by mu
  std::atomic<bool> by_shutdown{false};
  std::thread watch([&] {
    MutexLock lock(&mu);
    while (!done) {
      if (shutdown_ || (cancelled && cancelled())) {
        by_shutdown = shutdown_.load();
        stopping_ = true;
        agents_->CancelAll();
        return;
      }
      mu.AwaitWithTimeout(&done, absl::Milliseconds(50));
    }
  });
  absl::StatusOr<v1::Report> report = RunStages(request, registry, progress);
  {
    MutexLock lock(&mu);
    done = true;
  }
  watch.join();
  if (stopping_) {
    (void)store_->MarkRunningInterrupted(options_.now());
    const char* why = by_shutdown ? "the controller is shutting down" : "its client went away";
    Logger("sweep")->warn("sweep cancelled: {}", why);
    return absl::CancelledError(absl::StrCat("the sweep was cancelled: ", why));
  }
  return report;
}

namespace {

// The most a probe of this configuration may claim: from the fastest expected link rate, or
// the ceiling where a node has no expectation.
// The verdicts remembered for breaker.window, at most: one a second for a day.
constexpr size_t kMaxRememberedVerdicts = 86400;

absl::Duration BreakerWindow(const v1::Config& config) {
  return absl::Seconds(config.breaker().window().seconds()) +
         absl::Nanoseconds(config.breaker().window().nanos());
}

double MaxExpectedGbps(const v1::Config& config) {
  double rate = config.expect().link_rate_gbps();
  for (const auto& profile : config.profiles()) {
    if (rate <= 0) break;
    rate = profile.expect().link_rate_gbps() > 0 ? std::max(rate, profile.expect().link_rate_gbps())
                                                 : 0;
  }
  return sweep::MaxPlausibleGbps(rate);
}

}  // namespace

EarlierDrains SweepRunner::DrainsWithin(absl::Duration window, absl::Time now) const {
  EarlierDrains earlier;
  if (window <= absl::ZeroDuration()) return earlier;
  MutexLock lock(&drains_mu_);
  for (const Drained& d : recent_drains_) {
    if (d.finished < now - window) continue;
    ++earlier.verdicts;
    earlier.drained.insert(d.drained.begin(), d.drained.end());
    earlier.judged.insert(d.judged.begin(), d.judged.end());
  }
  return earlier;
}

void SweepRunner::RememberDrains(const v1::Report& report, absl::Duration window, absl::Time now) {
  if (window <= absl::ZeroDuration()) return;
  Drained d{now, {report.summary().drain().begin(), report.summary().drain().end()}, {}};
  for (const auto& node : report.health().nodes()) d.judged.push_back(node.node());
  MutexLock lock(&drains_mu_);
  recent_drains_.push_back(std::move(d));
  // Bounded by the window, and by count (a verdict a second for a day at most).
  while (!recent_drains_.empty() && (recent_drains_.front().finished < now - window ||
                                     recent_drains_.size() > kMaxRememberedVerdicts)) {
    recent_drains_.pop_front();
  }
}

void SweepRunner::CheckNodes(const v1::SweepRequest& request, const sweep::SweepSpecs& specs,
                             sweep::Fleet& fleet) {
  // Who answers: a node that does not costs one deadline here and is left out of the plan.
  sweep::CheckReachable(*agents_, fleet, options_.inventory_timeout);
  // One node (a one-node Slurm job, a lone GPU server) is judged by its own checks: its audits,
  // and its GPUs' all-reduce when asked; the pair probes say why they did not run.
  const bool one_node = fleet.nodes.size() == 1;
  if (request.audits() || one_node) {
    sweep::RunNodeAudits(*agents_, fleet, options_.inventory_timeout * 2);
  }
  if (specs.gpu_copy) {
    const absl::Duration spec_timeout =
        absl::Seconds(specs.gpu_copy_spec.timeout().seconds()) + absl::Seconds(30);
    sweep::RunGpuCopies(*agents_, fleet, specs.gpu_copy_spec,
                        std::max(spec_timeout, options_.inventory_timeout) + absl::Seconds(30));
  }
  if (one_node && !specs.kinds.empty() && fleet.nodes[0]->reachable) {
    v1::AuditResult pairs;
    pairs.set_audit("pair probes");
    pairs.set_outcome(v1::AUDIT_SKIPPED);
    pairs.set_reason(absl::StrCat("a pair probe needs two nodes; this sweep has one (",
                                  fleet.nodes[0]->name, "): judged by its audits",
                                  specs.allreduce ? ", its all-reduce" : "",
                                  specs.gpu_copy ? ", its gpu_copy" : ""));
    fleet.audits[0].push_back(std::move(pairs));
  }
}

void SweepRunner::ConfirmLocalised(sweep::SweepContext& sweep) {
  const v1::Config& config = sweep.config;
  sweep::RailRunners& runners = sweep.runners;
  sweep::RetestStats& stats = sweep.retests;
  const uint32_t retests = config.sweep().retests();
  if (retests == 0 || stopping_) return;
  std::vector<std::vector<Round>> by_rail(runners.size());
  size_t rounds = 0;
  for (size_t r = 0; r < runners.size(); ++r) {
    std::vector<const sweep::PairRun*> ordered;
    const AnalysisInput in = sweep::BuildRailInput(sweep.fleet, sweep.specs, config, sweep.rails[r],
                                                   runners.rail(r), &ordered);
    size_t deciding = 0;
    std::vector<Pair> pairs = sweep::RetestPairs(sweep.fleet, in, ordered, nullptr, &deciding);
    pairs.resize(std::min(pairs.size(), deciding));
    // Only what was measured once: the re-test passes had the others.
    std::set<Pair> once;
    for (const sweep::PairRun* run : ordered) {
      if (run->attempts < 2) once.insert({run->client, run->server});
    }
    pairs.erase(std::remove_if(pairs.begin(), pairs.end(),
                               [&](const Pair& p) { return once.count(p) == 0; }),
                pairs.end());
    by_rail[r] = PackRounds(pairs);
    rounds = std::max(rounds, by_rail[r].size());
  }
  if (rounds == 0) return;
  const absl::Time start = absl::Now();
  const size_t ran = runners.Run(by_rail, 2 + retests, "retest",
                                 {nullptr, start + (stats.budget - stats.spent), rounds});
  stats.spent += absl::Now() - start;
  stats.Count(by_rail, ran);
}

absl::Status SweepRunner::Measure(sweep::SweepContext& sweep) {
  const v1::Config& config = sweep.config;
  sweep::Fleet& fleet = sweep.fleet;
  sweep::RailRunners& runners = sweep.runners;
  const absl::Time measuring = absl::Now();
  runners.RunAll(sweep.plan.rounds, 1, "measure");
  Retest(sweep, absl::Now() - measuring);
  if (stopping_) return absl::CancelledError("cancelled");
  // The collectives run over the first rail's runner (their results are the node's, not a rail's).
  if (sweep.specs.allreduce) sweep.rings = sweep::PlanRings(sweep.request, config, fleet);
  for (size_t g = 0; g < sweep.rings.size() && !stopping_; ++g) {
    auto spec = sweep::AllreduceSpec(sweep.request, config, sweep.specs.pair_timeout,
                                     sweep.rings[g].nccl, sweep.rings[g].rdma);
    if (!spec.ok()) return spec.status();
    sweep::RunRing(*agents_, sweep, *spec, g);
  }
  if (!sweep.rings.empty())
    sweep::CheckReachable(*agents_, fleet, options_.inventory_timeout, true);
  // Localise what the analysis so far cannot place, on each rail: as many rounds as a node
  // needs peers to be judged (min_node_pairs) always run, with the good nodes taken in turn
  // that is about every end's; later ones spend what is left of the re-tests' budget.
  std::vector<std::vector<Round>> by_rail(runners.size());
  for (size_t r = 0; r < runners.size(); ++r) {
    AnalysisInput in =
        sweep::BuildRailInput(fleet, sweep.specs, config, sweep.rails[r], runners.rail(r));
    by_rail[r] = PackRounds(sweep::LocalisationPairs(fleet, in, Analyze(in), runners.rail(r)));
  }
  sweep::RetestStats& stats = sweep.retests;
  const absl::Time start = absl::Now();
  const size_t ran = runners.Run(by_rail, 1, "localise",
                                 {nullptr, start + (stats.budget - stats.spent),
                                  std::max<uint32_t>(1, config.thresholds().min_node_pairs())});
  stats.spent += absl::Now() - start;
  stats.Count(by_rail, ran);
  if (ran > 0) ConfirmLocalised(sweep);
  if (stopping_) return absl::CancelledError("cancelled");
  return absl::OkStatus();
}

v1::Report SweepRunner::MakeReport(sweep::SweepContext& sweep) {
  const v1::Config& config = sweep.config;
  const sweep::Fleet& fleet = sweep.fleet;
  const std::vector<sweep::RailPlan>& rails = sweep.rails;
  // Each rail judged on its own, then the rails' verdicts combined (CombineRails).
  std::vector<sweep::RailOutcome> outcomes(rails.size());
  std::vector<RailVerdict> verdicts;
  for (size_t r = 0; r < rails.size(); ++r) {
    sweep::RailOutcome& o = outcomes[r];
    o.rail = rails[r].name;
    o.absent = rails[r].absent;
    o.absent_reason = rails[r].absent_reason;
    o.input = sweep::BuildRailInput(fleet, sweep.specs, config, rails[r], sweep.runners.rail(r),
                                    &o.pairs);
    o.analysis = Analyze(o.input);
    RailVerdict v{rails[r].name, rails[r].netdev, o.analysis.findings, {}, {}};
    for (uint32_t i = 0; i < rails[r].absent.size(); ++i) {
      if (rails[r].absent[i]) v.absent[fleet.Name(i)] = rails[r].absent_reason[i];
      if (!rails[r].absent[i] && o.analysis.nodes[i].verdict != Verdict::kOk)
        v.unhealthy.insert(fleet.Name(i));
    }
    verdicts.push_back(std::move(v));
  }
  sweep::SweepOutcome outcome{&fleet, &outcomes, &sweep.rings, CombineRails(verdicts),
                              sweep.retests};
  // Then the rails against each other: a rail whose every NIC is slow is no host's fault.
  if (rails.size() > 1) {
    RailComparison compared =
        CompareRails(sweep::RailFigures(fleet, config, rails, outcomes), config.thresholds());
    for (auto& f : compared.findings) outcome.findings.push_back(std::move(f));
    outcome.rail_summaries = std::move(compared.summaries);
  }
  // New nodes against the reference nodes' inventories: what a figure cannot say (a GPU gone, a
  // version behind, an MTU); and their cabling: against the plan, the rails' leaf patterns, or
  // the references' leaves.
  const std::vector<NodeFacts> facts = fleet.Facts();
  outcome.inventory_findings = ConfigAgainstReferences(facts, sweep.specs.references);
  for (auto& f : CablingOfNewNodes(facts, config, sweep.specs.references))
    outcome.inventory_findings.push_back(std::move(f));
  const AnalysisInput& first = outcomes[0].input;
  for (sweep::RingRun& rr : sweep.rings) {
    for (const PairInput& pair : first.pairs) {
      const auto& ring = rr.ring;
      if (!std::isnan(pair.forward.bw_gbps) && std::count(ring.begin(), ring.end(), pair.client) &&
          std::count(ring.begin(), ring.end(), pair.server)) {
        rr.outcome.pairwise_gbps.push_back(pair.forward.bw_gbps);
      }
    }
    for (auto& f : JudgeAllreduce(rr.outcome, config.thresholds())) outcome.findings.push_back(f);
  }
  if (sweep.request.baseline_sweep_id() != 0) {
    for (auto& f : Regressions(sweep.baseline, sweep.request.baseline_sweep_id(),
                               BaselineFigures(fleet, outcomes), config.thresholds().relative_bw(),
                               first.bandwidth_probe)) {
      outcome.findings.push_back(f);
    }
  }
  if (!sweep.node_bandwidth.empty()) {
    std::vector<std::string> names;
    for (uint32_t i = 0; i < fleet.nodes.size(); ++i) names.push_back(fleet.Name(i));
    std::vector<v1::Finding> limited =
        JudgeNodeBandwidth(sweep.node_bandwidth, names, config.thresholds());
    SubsumeByNodeBandwidth(limited, &outcome.findings);
    for (auto& f : limited) outcome.inventory_findings.push_back(std::move(f));
  }
  outcome.vouched_nodes = sweep.specs.vouched_nodes;
  outcome.earlier = DrainsWithin(BreakerWindow(config), options_.now());
  return sweep::AssembleReport(outcome, config, sweep.info, sweep.started, options_.now());
}

void SweepRunner::GiveDrainsBack(const v1::Undrain& undrain, int64_t sweep_id, v1::Report* report) {
  auto drained = store_->ListDrained();
  if (!drained.ok()) {
    Logger("sweep")->warn("sweep {}: gives no drain back: {}", sweep_id,
                          std::string(drained.status().message()));
    return;
  }
  std::vector<Drain> drains;
  for (const Store::Drained& d : *drained) drains.push_back({d.node, d.sweep_id, d.since, d.kinds});
  GiveBack(undrain, drains, options_.now(), report);
}

absl::StatusOr<v1::Report> SweepRunner::RunStages(
    const v1::SweepRequest& request, const std::vector<StoredNode>& registry,
    const std::function<void(const v1::SweepEvent&)>& progress) {
  const v1::Config config = Config();  // a reload during the sweep applies to the next one
  const absl::Time started = options_.now();
  ASSIGN_OR_RETURN(sweep::SweepSpecs specs, sweep::ResolveSpecs(request, config));
  specs.stored_gbps = sweep::StoredReferenceFigures(*store_, specs);
  ASSIGN_OR_RETURN(sweep::Fleet fleet, sweep::SelectNodes(request, registry));
  fleet.max_gbps = MaxExpectedGbps(config);
  v1::Report baseline;
  if (request.baseline_sweep_id() != 0) {
    auto found = store_->GetReport(request.baseline_sweep_id());
    if (!found.ok())
      return absl::InvalidArgumentError(absl::StrCat("--baseline: ", found.status().message()));
    baseline = *std::move(found);
  }
  CheckNodes(request, specs, fleet);
  ASSIGN_OR_RETURN(sweep::Plan plan, sweep::PlanRounds(request, config, fleet, started));
  if (specs.kinds.empty() || fleet.nodes.size() == 1) plan.rounds.clear();  // no pairs to measure
  ASSIGN_OR_RETURN(const std::vector<sweep::RailPlan> rails,
                   sweep::PlanRails(request, config, specs, fleet));

  ASSIGN_OR_RETURN(const int64_t sweep_id, store_->CreateSweep(request, started));
  const v1::SweepInfo info = StartedInfo(sweep_id, started, plan, specs, fleet, request);
  if (progress) {
    v1::SweepEvent event;
    *event.mutable_started() = info;
    progress(event);
  }
  Logger("sweep")->info("sweep {}: {} nodes ({} reachable), {} rounds, probes {}", sweep_id,
                        fleet.nodes.size(), fleet.Live().size(), plan.rounds.size(),
                        specs.specs.size());
  const sweep::RoundSettings settings{store_,
                                      sweep_id,
                                      specs.ReverseFlags(config.sweep().both_directions()),
                                      options_.max_parallel_pairs,
                                      progress,
                                      &stopping_,
                                      options_.inventory_timeout,
                                      options_.measure_load};
  sweep::RailRunners runners(*agents_, fleet, rails, settings);
  const sweep::ProgressFn progress_fn = progress;
  sweep::SweepContext sweep{request,
                            config,
                            specs,
                            fleet,
                            plan,
                            rails,
                            runners,
                            progress_fn,
                            info,
                            started,
                            std::move(baseline)};
  RETURN_IF_ERROR(Measure(sweep));
  // Every rail of a node at once, against each alone (docs/sweep.md "Every rail at once").
  const std::string node_bandwidth = sweep::RunNodeBandwidth(*agents_, sweep, settings);
  // What the links did meanwhile: a flap during a slow measurement explains it.
  if (!stopping_) sweep::AskLinkWatch(*agents_, fleet, options_.inventory_timeout);
  v1::Report report = MakeReport(sweep);
  report.mutable_sweep()->set_node_bandwidth(node_bandwidth);
  RememberDrains(report, BreakerWindow(config), options_.now());
  NoteFlaps(fleet.WatchFindings(), &report);
  // What the measurements earned each node (known-good), once every finding is in.
  if (report.sweep().state() == v1::SWEEP_COMPLETED)
    EarnPasses(config.known_good().min_peers(), &report);
  if (config.undrain().enabled()) GiveDrainsBack(config.undrain(), sweep_id, &report);
  // A full disk (or any store failure) now loses the history's copy, not the verdict: the
  // report still goes to the client, and the sweep stays as far as it was written (the next
  // start marks it interrupted).
  if (auto s = store_->FinishSweep(sweep_id, report); !s.ok()) {
    Logger("sweep")->error("sweep {}: the report is not stored ({}); its verdict is still returned",
                           sweep_id, std::string(s.message()));
  } else if (config.undrain().enabled()) {
    // Only while the site gives drains back: turned on later, it knows no older drain.
    if (auto d = store_->RecordDrains(sweep_id, report); !d.ok()) {
      Logger("sweep")->error("sweep {}: its drains are not recorded to give back: {}", sweep_id,
                             std::string(d.message()));
    }
  }
  Logger("sweep")->info("sweep {}: done in {}, {} findings", sweep_id,
                        absl::FormatDuration(options_.now() - started), report.findings_size());
  return report;
}

}  // namespace fabricctl::controller
