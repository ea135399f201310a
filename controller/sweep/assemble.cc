#include "controller/sweep/assemble.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/version.h"
#include "google/protobuf/util/time_util.h"
#include "report/builder.h"

namespace fabricctl::controller::sweep {
namespace {

v1::HealthStatus ToHealth(Verdict v) {
  switch (v) {
    case Verdict::kOk: return v1::HEALTH_OK;
    case Verdict::kWarning: return v1::HEALTH_WARNING;
    case Verdict::kCritical: return v1::HEALTH_CRITICAL;
    case Verdict::kUnknown: return v1::HEALTH_UNKNOWN;
  }
  return v1::HEALTH_UNKNOWN;
}

}  // namespace

v1::Report AssembleReport(const SweepOutcome& outcome, const v1::Config& config,
                          const v1::SweepInfo& info, absl::Time started, absl::Time finished) {
  const Fleet& fleet = *outcome.fleet;
  const AnalysisResult& analysis = *outcome.analysis;
  const AnalysisInput& in = *outcome.input;
  report::ReportBuilder builder("sweep", absl::StrCat("fabric-controller ", kVersion));
  builder.SetConfig(config);
  builder.AddFindings(analysis.findings);
  builder.AddFindings(outcome.more_findings);
  v1::HealthMap* health = builder.mutable_health();
  if (!std::isnan(analysis.best_bw_gbps)) health->set_best_bw_gbps(analysis.best_bw_gbps);
  for (const RingRun& rr : *outcome.rings) *health->add_collectives() = rr.outcome.collective;
  if (!std::isnan(analysis.median_bw_gbps)) health->set_median_bw_gbps(analysis.median_bw_gbps);
  *health->mutable_levels() = config.topology().levels();
  const Placement placement(config);
  for (uint32_t i = 0; i < fleet.nodes.size(); ++i) {
    const NodeResult& result = analysis.nodes[i];
    v1::NodeHealth* nh = builder.AddNode(fleet.Name(i), ToHealth(result.verdict));
    for (const auto& [k, v] : placement.LabelsOf(*fleet.nodes[i])) (*nh->mutable_labels())[k] = v;
    if (!std::isnan(result.median_bw_gbps)) nh->set_median_bw_gbps(result.median_bw_gbps);
    if (!std::isnan(result.robust_z)) nh->set_robust_z(result.robust_z);
    auto audits = fleet.audits.find(i);
    if (audits != fleet.audits.end()) builder.AddAudits(nh, audits->second);
  }
  const std::vector<const PairRun*>& pairs = *outcome.pairs;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const PairRun& run = *pairs[i];
    v1::PairHealth* ph = builder.AddPair();
    ph->set_node(fleet.Name(run.client));
    ph->set_peer(fleet.Name(run.server));
    ph->set_status(ToHealth(analysis.pairs[i].verdict));
    if (!std::isnan(in.pairs[i].bw_gbps)) ph->set_bw_gbps(in.pairs[i].bw_gbps);
    if (!std::isnan(in.pairs[i].bw_reverse_gbps)) ph->set_bw_reverse_gbps(in.pairs[i].bw_reverse_gbps);
    if (!std::isnan(in.pairs[i].lat_us)) ph->set_lat_us(in.pairs[i].lat_us);
    if (!std::isnan(analysis.pairs[i].relative_bw)) ph->set_relative_bw(analysis.pairs[i].relative_bw);
    ph->set_attempts(run.attempts);
    for (const auto& r : run.results) *ph->add_results() = r;
    for (const auto& r : run.reverse) {
      if (r.kind() != v1::PROBE_KIND_UNSPECIFIED) *ph->add_results() = r;
    }
  }
  v1::SweepInfo done = info;
  done.set_state(v1::SWEEP_COMPLETED);
  *done.mutable_finished() = google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(
      absl::ToUnixMicros(finished));
  return builder.Finish(finished, finished - started, "", &done);
}

}  // namespace fabricctl::controller::sweep
