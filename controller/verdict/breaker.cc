#include "controller/verdict/breaker.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/findings.h"

namespace fabricctl::controller {

bool HoldsDrains(const v1::DrainBreaker& breaker, size_t drain, size_t judged) {
  return breaker.max_share() < 1 && drain > breaker.min_nodes() &&
         static_cast<double>(drain) > breaker.max_share() * static_cast<double>(judged);
}

namespace {

// The breaker open: no finding asks for a drain any more (each says the breaker held it), and
// one drain_breaker_open names the nodes it would have drained.
void HoldDrains(const std::set<std::string>& drain, size_t judged, const v1::DrainBreaker& breaker,
                const EarlierDrains& earlier, v1::Report& report) {
  for (v1::Finding& f : *report.mutable_findings()) {
    if (f.action() != v1::ACTION_DRAIN) continue;
    f.set_action(v1::ACTION_INVESTIGATE);
    (*f.mutable_evidence())["drain_held"] = "breaker";
  }
  const std::string names = absl::StrJoin(drain, ",");
  std::set<std::string> all = drain;
  all.insert(earlier.drained.begin(), earlier.drained.end());
  const std::string with_earlier =
      earlier.verdicts == 0
          ? ""
          : absl::StrFormat(
                " (with the %zu drained by the %zu verdicts within breaker.window: "
                "%zu)",
                earlier.drained.size(), earlier.verdicts, all.size());
  v1::Finding f = report::Make(
      report::kind::kDrainBreakerOpen, "",
      absl::StrFormat("this verdict would drain %zu of the %zu nodes judged (%s)%s, more than "
                      "breaker.max_share %.0f %% and breaker.min_nodes %u allow: nobody more is "
                      "drained; so many nodes failing at once points at the fabric or the "
                      "configuration (an expectation, a spine), not at that many hosts",
                      drain.size(), judged, names, with_earlier, 100 * breaker.max_share(),
                      breaker.min_nodes()));
  (*f.mutable_evidence())["would_drain"] = names;
  (*f.mutable_evidence())["judged"] = absl::StrCat(judged);
  if (earlier.verdicts > 0) {
    (*f.mutable_evidence())["drained_within_window"] = absl::StrJoin(earlier.drained, ",");
  }
  *report.add_findings() = std::move(f);
}

}  // namespace

void ApplyBreaker(const v1::DrainBreaker& breaker, uint32_t vouched, const EarlierDrains& earlier,
                  v1::Report* report) {
  const std::set<std::string> drain(report->summary().drain().begin(),
                                    report->summary().drain().end());
  if (!breaker.has_max_share() || drain.empty()) return;
  // With the verdicts within breaker.window: their nodes and drains join this one's.
  std::set<std::string> judged_nodes = earlier.judged, would_drain = earlier.drained;
  for (const auto& node : report->health().nodes()) judged_nodes.insert(node.node());
  would_drain.insert(drain.begin(), drain.end());
  const size_t judged = judged_nodes.size() + vouched;
  if (!HoldsDrains(breaker, would_drain.size(), judged)) return;
  HoldDrains(drain, judged, breaker, earlier, *report);
  report->mutable_summary()->clear_drain();
  report->mutable_summary()->set_worst_severity(v1::SEVERITY_CRITICAL);
  if (report->has_sweep()) {
    report->mutable_sweep()->set_worst_severity(v1::SEVERITY_CRITICAL);
    report->mutable_sweep()->set_findings_count(static_cast<uint32_t>(report->findings_size()));
  }
}

}  // namespace fabricctl::controller
