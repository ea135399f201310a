#include "controller/sweep/assemble.h"

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "base/version.h"
#include "controller/sweep/rails.h"
#include "controller/verdict/breaker.h"
#include "google/protobuf/util/time_util.h"
#include "report/builder.h"
#include "report/findings.h"

namespace fabricctl::controller::sweep {
namespace {

v1::HealthStatus ToHealth(Verdict v) {
  switch (v) {
    case Verdict::kOk:
      return v1::HEALTH_OK;
    case Verdict::kWarning:
      return v1::HEALTH_WARNING;
    case Verdict::kCritical:
      return v1::HEALTH_CRITICAL;
    case Verdict::kUnknown:
      return v1::HEALTH_UNKNOWN;
  }
  return v1::HEALTH_UNKNOWN;
}

}  // namespace

namespace {

// A node's status over its rails: the worst of the rails it is on; its median the slowest's.
void AddNodes(const SweepOutcome& outcome, const v1::Config& config,
              report::ReportBuilder& builder) {
  const Placement placement(config);
  const Fleet& fleet = *outcome.fleet;
  for (uint32_t i = 0; i < fleet.nodes.size(); ++i) {
    Verdict verdict = Verdict::kOk;
    bool judged = false;
    const NodeResult* slowest = nullptr;
    for (const RailOutcome& rail : *outcome.rails) {
      if (i < rail.absent.size() && rail.absent[i]) {  // rail_missing: critical
        verdict = Verdict::kCritical;
        judged = true;
        continue;
      }
      const NodeResult& result = rail.analysis.nodes[i];
      // kUnknown (not measured) ranks below a verdict, above OK.
      auto rank = [](Verdict v) {
        return v == Verdict::kUnknown ? 1 : v == Verdict::kOk ? 0 : int(v) + 1;
      };
      if (!judged || rank(result.verdict) > rank(verdict)) verdict = result.verdict;
      judged = true;
      if (!std::isnan(result.median_bw_gbps) &&
          (slowest == nullptr || result.median_bw_gbps < slowest->median_bw_gbps)) {
        slowest = &result;
      }
    }
    v1::NodeHealth* nh =
        builder.AddNode(fleet.Name(i), ToHealth(judged ? verdict : Verdict::kUnknown));
    std::string placed_by;
    for (const auto& [k, v] : placement.LabelsOf(*fleet.nodes[i], &placed_by))
      (*nh->mutable_labels())[k] = v;
    nh->set_placed_by(placed_by);
    if (slowest != nullptr) nh->set_median_bw_gbps(slowest->median_bw_gbps);
    if (slowest != nullptr && !std::isnan(slowest->robust_z)) nh->set_robust_z(slowest->robust_z);
    for (const RailOutcome& rail : *outcome.rails) {
      for (const v1::Rail& configured : config.rails()) {
        if (configured.name() != rail.rail || !fleet.nodes[i]->reachable) continue;
        *nh->add_rails() = RailStateOf(fleet.nodes[i]->inventory, configured,
                                       i < rail.absent_reason.size() ? rail.absent_reason[i] : "");
      }
    }
    // The findings of the rules on inventories raise its status as its audits do: a node they
    // flag is not healthy, and not known-good.
    for (const v1::Finding& f : outcome.inventory_findings) {
      if (f.node() == fleet.Name(i))
        nh->set_status(report::Worse(nh->status(), report::HealthFor(f.severity())));
    }
    auto audits = fleet.audits.find(i);
    if (audits != fleet.audits.end()) builder.AddAudits(nh, audits->second);
  }
}

void AddPairs(const Fleet& fleet, const RailOutcome& rail, report::ReportBuilder& builder) {
  const AnalysisInput& in = rail.input;
  for (size_t i = 0; i < rail.pairs.size(); ++i) {
    const PairRun& run = *rail.pairs[i];
    v1::PairHealth* ph = builder.AddPair();
    ph->set_node(fleet.Name(run.client));
    ph->set_peer(fleet.Name(run.server));
    ph->set_rail(rail.rail);
    ph->set_status(ToHealth(rail.analysis.pairs[i].verdict));
    if (!std::isnan(in.pairs[i].forward.bw_gbps)) ph->set_bw_gbps(in.pairs[i].forward.bw_gbps);
    if (!std::isnan(in.pairs[i].reverse.bw_gbps))
      ph->set_bw_reverse_gbps(in.pairs[i].reverse.bw_gbps);
    if (!std::isnan(in.pairs[i].lat_us)) ph->set_lat_us(in.pairs[i].lat_us);
    const float relative = rail.analysis.pairs[i].relative_bw;
    if (!std::isnan(relative)) ph->set_relative_bw(relative);
    ph->set_attempts(run.attempts);
    for (const auto& r : run.results) *ph->add_results() = r;
    for (const auto& r : run.reverse) {
      if (r.kind() != v1::PROBE_KIND_UNSPECIFIED) *ph->add_results() = r;
    }
  }
}

}  // namespace

std::vector<RailFigure> RailFigures(const Fleet& fleet, const v1::Config& config,
                                    const std::vector<RailPlan>& rails,
                                    const std::vector<RailOutcome>& outcomes) {
  std::vector<RailFigure> out;
  for (size_t r = 0; r < rails.size() && r < outcomes.size(); ++r) {
    RailFigure f;
    f.rail = rails[r].name;
    f.netdev = rails[r].netdev;
    f.typical_gbps = outcomes[r].analysis.median_bw_gbps;
    f.log_spread = outcomes[r].analysis.bw_log_spread;
    std::map<double, int> rates;
    for (const v1::Rail& configured : config.rails()) {
      if (configured.name() != rails[r].name) continue;
      for (uint32_t i = 0; i < fleet.nodes.size(); ++i) {
        if (!fleet.nodes[i]->reachable || (i < rails[r].absent.size() && rails[r].absent[i]))
          continue;
        const v1::RailState nic = RailStateOf(fleet.nodes[i]->inventory, configured, "");
        const double rate = nic.rate_gbps() > 0 ? nic.rate_gbps() : nic.speed_mbps() / 1000.0;
        if (rate > 0) ++rates[rate];
      }
    }
    int most = 0;
    for (const auto& [rate, n] : rates) {
      if (n > most) f.nominal_gbps = rate, most = n;
    }
    out.push_back(std::move(f));
  }
  return out;
}

v1::Report AssembleReport(const SweepOutcome& outcome, const v1::Config& config,
                          const v1::SweepInfo& info, absl::Time started, absl::Time finished) {
  report::ReportBuilder builder("sweep", absl::StrCat("fabric-controller ", kVersion));
  builder.SetConfig(config);
  builder.AddFindings(outcome.findings);
  builder.AddFindings(outcome.inventory_findings);
  v1::HealthMap* health = builder.mutable_health();
  std::vector<double> typical;
  double best = std::nan("");
  for (const RailOutcome& rail : *outcome.rails) {
    if (!rail.rail.empty()) health->add_rails(rail.rail);
    if (!std::isnan(rail.analysis.median_bw_gbps)) typical.push_back(rail.analysis.median_bw_gbps);
    if (!std::isnan(rail.analysis.best_bw_gbps) && !(rail.analysis.best_bw_gbps <= best)) {
      best = rail.analysis.best_bw_gbps;
    }
  }
  if (!std::isnan(best)) health->set_best_bw_gbps(best);
  if (!typical.empty()) health->set_median_bw_gbps(Median(typical));
  for (const RingRun& rr : *outcome.rings) *health->add_collectives() = rr.outcome.collective;
  for (const v1::RailSummary& s : outcome.rail_summaries) *health->add_rail_summaries() = s;
  *health->mutable_levels() = config.topology().levels();
  AddNodes(outcome, config, builder);
  for (const RailOutcome& rail : *outcome.rails) AddPairs(*outcome.fleet, rail, builder);
  v1::SweepInfo done = info;
  done.set_state(v1::SWEEP_COMPLETED);
  *done.mutable_finished() =
      google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(finished));
  v1::Report report = builder.Finish(finished, finished - started, "", &done);
  ApplyBreaker(config.breaker(), outcome.vouched_nodes, outcome.earlier, &report);
  v1::Summary* summary = report.mutable_summary();
  summary->set_retest_rounds(outcome.retests.rounds);
  summary->set_retested_pairs(outcome.retests.pairs);
  summary->set_retests_skipped(outcome.retests.skipped());
  *summary->mutable_retest_budget() = google::protobuf::util::TimeUtil::MicrosecondsToDuration(
      absl::ToInt64Microseconds(outcome.retests.budget));
  return report;
}

}  // namespace fabricctl::controller::sweep
