#include "controller/sweep/incremental.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/version.h"
#include "controller/sweep/specs.h"
#include "google/protobuf/util/time_util.h"
#include "report/builder.h"

namespace fabricctl::controller::sweep {
namespace {

using google::protobuf::util::TimeUtil;

constexpr absl::Duration kMaxAge = absl::Hours(24 * 366);

std::vector<Standing> Standings(const std::vector<StoredNode>& registry,
                                const std::vector<Store::KnownGood>& known_good,
                                const std::vector<bool>& online) {
  std::map<std::string, const Store::KnownGood*> passes;
  for (const auto& k : known_good) passes[k.node] = &k;
  std::vector<Standing> out;
  for (size_t i = 0; i < registry.size(); ++i) {
    Standing s;
    s.node = registry[i].inventory.node_name();
    s.online = i < online.size() && online[i];
    auto it = passes.find(s.node);
    if (it != passes.end()) {
      s.passed = true;
      s.good = it->second->Good();
      s.sweep_id = it->second->sweep_id;
      s.passed_at = it->second->passed;
      s.coverage = it->second->coverage;
    }
    out.push_back(std::move(s));
  }
  return out;
}

// The rails the sweep measures: those it names, else every configured one.
std::vector<std::string> Rails(const v1::SweepRequest& request, const v1::Config& config) {
  std::vector<std::string> rails(request.rails().begin(), request.rails().end());
  if (rails.empty()) {
    for (const auto& r : config.rails()) rails.push_back(r.name());
  }
  return rails;
}

}  // namespace

absl::StatusOr<Incremental> NarrowToStale(const v1::SweepRequest& asked, const v1::Config& config,
                                          const std::vector<StoredNode>& registry,
                                          const std::vector<Store::KnownGood>& known_good,
                                          const std::vector<bool>& online, absl::Time now) {
  const absl::Duration max_age =
      absl::Microseconds(TimeUtil::DurationToMicroseconds(asked.max_age()));
  if (max_age < absl::ZeroDuration() || max_age > kMaxAge)
    return absl::InvalidArgumentError("max_age: must be between 0s and a year");
  ASSIGN_OR_RETURN(const SweepSpecs specs, ResolveSpecs(asked, config));
  StaleAsk ask;
  ask.nodes.assign(asked.nodes().begin(), asked.nodes().end());
  ask.max_age = max_age;
  ask.now = now;
  ask.probes = specs.kinds;
  ask.rails = Rails(asked, config);
  Incremental out;
  out.plan = PlanStale(ask, Standings(registry, known_good, online));
  out.request = asked;
  out.request.clear_max_age();
  out.request.clear_nodes();
  for (const std::string& name : out.plan.Measure()) out.request.add_nodes(name);
  // The references judge the stale nodes (below_reference, config_drift, miscabled), beside
  // any the caller named that is measured.
  std::set<std::string> refs(out.plan.references.begin(), out.plan.references.end());
  const std::set<std::string> measured(out.request.nodes().begin(), out.request.nodes().end());
  for (const std::string& r : asked.reference_nodes()) {
    if (measured.count(r) > 0 && refs.size() < kMaxReferences) refs.insert(r);
  }
  out.request.clear_reference_nodes();
  for (const std::string& r : refs) out.request.add_reference_nodes(r);
  out.request.set_vouched_nodes(asked.vouched_nodes() +
                                static_cast<uint32_t>(out.plan.skipped.size()));
  return out;
}

std::map<std::string, float> StoredReferenceFigures(const Store& store, const SweepSpecs& specs) {
  std::map<std::string, float> out;
  if (specs.bw_index < 0 || specs.references.empty()) return out;
  const v1::ProbeKind bw = specs.kinds[specs.bw_index];
  auto known_good = store.ListKnownGood(
      std::vector<std::string>(specs.references.begin(), specs.references.end()));
  if (!known_good.ok()) return out;
  for (const Store::KnownGood& k : *known_good) {
    if (!k.Good() || k.coverage.bandwidth_probe() != bw || !k.figures.has_median_bw_gbps())
      continue;
    out[k.node] = static_cast<float>(k.figures.median_bw_gbps());
  }
  return out;
}

v1::Report VouchedReport(const StalePlan& plan, absl::Time now) {
  report::ReportBuilder builder("sweep", absl::StrCat("fabric-controller ", kVersion));
  builder.AddFindings(plan.skipped);
  v1::Report report = builder.Finish(now, absl::ZeroDuration());
  report.mutable_sweep()->set_state(v1::SWEEP_COMPLETED);
  report.mutable_sweep()->set_max_age_decision(plan.decision);
  return report;
}

void NoteDecision(const StalePlan& plan, v1::Report* report) {
  for (const v1::Finding& f : plan.skipped) *report->add_findings() = f;
  report->mutable_sweep()->set_max_age_decision(plan.decision);
}

}  // namespace fabricctl::controller::sweep
