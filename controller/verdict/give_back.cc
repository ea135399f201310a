#include "controller/verdict/give_back.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

absl::Duration After(const v1::Undrain& undrain) {
  return absl::Seconds(undrain.after().seconds()) + absl::Nanoseconds(undrain.after().nanos());
}

// Kinds raised by the node's audits (its configuration, a port or PCIe link, counters,
// optics): a drain for one is given back only by a sweep whose audits ran on the node.
bool AuditKind(const std::string& kind) {
  namespace k = report::kind;
  static const std::set<std::string> kHardware = {k::kLinkDown,     k::kLinkRateDegraded,
                                                  k::kPcieDegraded, k::kCounterErrors,
                                                  k::kOpticsAlarm,  k::kOpticsWarning};
  return report::IsConfigurationKind(kind) || kHardware.count(kind) > 0;
}

bool WatchRan(const v1::NodeHealth& node) {
  return std::any_of(node.audits().begin(), node.audits().end(), [](const v1::AuditResult& a) {
    return a.audit() == "link_watch" && a.outcome() == v1::AUDIT_RAN;
  });
}

// Its audits ran (one at least, beside the link watch) and none failed.
bool AuditsPassed(const v1::NodeHealth& node) {
  bool ran = false;
  for (const v1::AuditResult& a : node.audits()) {
    if (a.audit() == "link_watch") continue;
    if (a.outcome() == v1::AUDIT_FAILED) return false;
    ran = ran || a.outcome() == v1::AUDIT_RAN;
  }
  return ran;
}

// Re-measured what the drain was for: the sweep earned the node a pass (a pair probe measured
// it with enough peers on every rail, no finding concerns it: controller/verdict/earned.h),
// its link watch ran (and so was quiet: a flap or errors would concern it), and where the
// drain was for what an audit finds, its audits ran and passed. A node with no verdict, or
// whose watch did not answer (off, or its agent just restarted), is not given back.
bool Remeasured(const v1::NodeHealth& node, const std::string& kinds) {
  if (!node.pass().earned() || !WatchRan(node)) return false;
  for (absl::string_view kind : absl::StrSplit(kinds, ',', absl::SkipEmpty())) {
    if (AuditKind(std::string(kind)) && !AuditsPassed(node)) return false;
  }
  return true;
}

std::string ProbeNames(const v1::NodePass& pass) {
  std::vector<std::string> names;
  for (int k : pass.probes()) names.push_back(absl::AsciiStrToLower(v1::ProbeKind_Name(k)));
  return absl::StrJoin(names, ",");
}

// "3" (one path, no rails), or each rail's: "rail0:3,rail1:2".
std::string RailPeers(const v1::NodePass& pass) {
  std::vector<std::string> rails;
  for (const v1::RailPass& r : pass.rails()) {
    rails.push_back(r.rail().empty() ? absl::StrCat(r.peers())
                                     : absl::StrCat(r.rail(), ":", r.peers()));
  }
  return absl::StrJoin(rails, ",");
}

}  // namespace

void GiveBack(const v1::Undrain& undrain, const std::vector<Drain>& drained, absl::Time now,
              v1::Report* report) {
  if (!undrain.enabled() || report->sweep().state() != v1::SWEEP_COMPLETED) return;
  std::map<std::string, const Drain*> by_node;
  for (const Drain& d : drained) by_node[d.node] = &d;
  const auto& again = report->summary().drain();
  for (const v1::NodeHealth& node : report->health().nodes()) {
    auto it = by_node.find(node.node());
    if (it == by_node.end() || !Remeasured(node, it->second->kinds)) continue;
    if (std::find(again.begin(), again.end(), node.node()) != again.end()) continue;
    const Drain& d = *it->second;
    if (now - d.since < After(undrain)) continue;
    const int64_t minutes = absl::ToInt64Minutes(now - d.since);
    v1::Finding f = report::Make(
        report::kind::kDrainGivenBack, node.node(),
        absl::StrCat(node.node(), ": drained by sweep ", d.sweep_id, " (",
                     d.kinds.empty() ? "its findings" : d.kinds, ") ", minutes, " min ago; sweep ",
                     report->sweep().sweep_id(), " re-measured it (", ProbeNames(node.pass()),
                     " with ", RailPeers(node.pass()),
                     " peers) and passed it, its link watch quiet: give it back"));
    (*f.mutable_evidence())["drained_in_sweep"] = absl::StrCat(d.sweep_id);
    (*f.mutable_evidence())["drained_unix_s"] = absl::StrCat(absl::ToUnixSeconds(d.since));
    (*f.mutable_evidence())["drained_for"] = d.kinds;
    (*f.mutable_evidence())["passed_in_sweep"] = absl::StrCat(report->sweep().sweep_id());
    (*f.mutable_evidence())["probes"] = ProbeNames(node.pass());
    (*f.mutable_evidence())["rail_peers"] = RailPeers(node.pass());
    *report->add_findings() = std::move(f);
    report->mutable_sweep()->set_findings_count(report->sweep().findings_count() + 1);
    report->mutable_summary()->add_given_back(node.node());
  }
}

}  // namespace fabricctl::controller
