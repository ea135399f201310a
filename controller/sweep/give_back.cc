#include "controller/sweep/give_back.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "report/findings.h"

namespace fabricctl::controller::sweep {
namespace {

absl::Duration After(const v1::Undrain& undrain) {
  return absl::Seconds(undrain.after().seconds()) + absl::Nanoseconds(undrain.after().nanos());
}

// Passed: judged healthy, no finding of warning or worse naming it (as the node or the peer of a
// pair), with its link watch run. A node with no verdict (unreachable), or whose watch did not
// answer (off, or its agent just restarted), is not given back on this sweep.
bool Passed(const v1::NodeHealth& node, const v1::Report& report) {
  if (node.status() != v1::HEALTH_OK) return false;
  for (const v1::Finding& f : report.findings()) {
    if (f.severity() >= v1::SEVERITY_WARNING &&
        (f.node() == node.node() || f.peer() == node.node()))
      return false;
  }
  return std::any_of(node.audits().begin(), node.audits().end(), [](const v1::AuditResult& a) {
    return a.audit() == "link_watch" && a.outcome() == v1::AUDIT_RAN;
  });
}

}  // namespace

void GiveBack(const v1::Undrain& undrain, const std::vector<Store::Drained>& drained,
              absl::Time now, v1::Report* report) {
  if (!undrain.enabled() || report->sweep().state() != v1::SWEEP_COMPLETED) return;
  std::map<std::string, const Store::Drained*> by_node;
  for (const Store::Drained& d : drained) by_node[d.node] = &d;
  const auto& again = report->summary().drain();
  for (const v1::NodeHealth& node : report->health().nodes()) {
    auto it = by_node.find(node.node());
    if (it == by_node.end() || !Passed(node, *report)) continue;
    if (std::find(again.begin(), again.end(), node.node()) != again.end()) continue;
    const Store::Drained& d = *it->second;
    if (now - d.since < After(undrain)) continue;
    const int64_t minutes = absl::ToInt64Minutes(now - d.since);
    v1::Finding f = report::Make(
        report::kind::kDrainGivenBack, node.node(),
        absl::StrCat(node.node(), ": drained by sweep ", d.sweep_id, " (",
                     d.kinds.empty() ? "its findings" : d.kinds, ") ", minutes,
                     " min ago; this sweep passed it, its link watch quiet: give it back"));
    (*f.mutable_evidence())["drained_in_sweep"] = absl::StrCat(d.sweep_id);
    (*f.mutable_evidence())["drained_unix_s"] = absl::StrCat(absl::ToUnixSeconds(d.since));
    (*f.mutable_evidence())["drained_for"] = d.kinds;
    *report->add_findings() = std::move(f);
    report->mutable_sweep()->set_findings_count(report->sweep().findings_count() + 1);
    report->mutable_summary()->add_given_back(node.node());
  }
}

}  // namespace fabricctl::controller::sweep
