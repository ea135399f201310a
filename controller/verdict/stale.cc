#include "controller/verdict/stale.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/verdict/earned.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

// Why a node is not fresh; empty when it is.
std::string Stale(const Standing& s, const StaleAsk& ask) {
  if (!s.online) return "not online";
  if (!s.passed) return "never passed";
  if (!s.good) return "its pass was lost";
  if (ask.now - s.passed_at > ask.max_age) return "its pass is older than the max age";
  if (!PassCovers(s.coverage, ask.probes, ask.rails))
    return "its pass did not cover this sweep's probes and rails";
  return "";
}

v1::Finding Skipped(const Standing& s, absl::Time now) {
  const int64_t minutes = absl::ToInt64Minutes(now - s.passed_at);
  v1::Finding f = report::Make(
      report::kind::kKnownGood, s.node,
      absl::StrCat("known-good: sweep ", s.sweep_id, " passed it ", minutes,
                   " min ago, covering what this sweep measures, and nothing changed on it "
                   "since; not measured again"));
  (*f.mutable_evidence())["passed_in_sweep"] = absl::StrCat(s.sweep_id);
  (*f.mutable_evidence())["passed_unix_s"] = absl::StrCat(absl::ToUnixSeconds(s.passed_at));
  return f;
}

std::string Decision(const StalePlan& plan, size_t wanted_refs, size_t fresh) {
  if (plan.stale.empty()) {
    return absl::StrCat("every node known-good within the max age (", plan.skipped.size(),
                        "): nothing measured");
  }
  std::string line = absl::StrCat(plan.stale.size(), " stale node(s) measured beside ",
                                  plan.references.size(), " known-good reference(s)");
  if (!plan.references.empty())
    absl::StrAppend(&line, " (", absl::StrJoin(plan.references, ","), ")");
  if (plan.references.size() < wanted_refs) {
    absl::StrAppend(&line, ", fewer than the ", wanted_refs, " asked for: the request holds ",
                    fresh, " known-good node(s)");
  }
  absl::StrAppend(&line, "; ", plan.skipped.size(), " vouched for");
  return line;
}

}  // namespace

std::vector<std::string> StalePlan::Measure() const {
  if (stale.empty()) return {};
  std::vector<std::string> out = stale;
  out.insert(out.end(), references.begin(), references.end());
  return out;
}

StalePlan PlanStale(const StaleAsk& ask, const std::vector<Standing>& standing) {
  std::map<std::string, const Standing*> by_name;
  for (const Standing& s : standing) by_name[s.node] = &s;
  std::vector<std::string> names = ask.nodes;
  if (names.empty()) {
    for (const auto& [name, s] : by_name) names.push_back(name);
  }
  StalePlan plan;
  std::vector<const Standing*> fresh;
  for (const std::string& name : names) {
    auto it = by_name.find(name);
    if (it != by_name.end() && Stale(*it->second, ask).empty()) {
      fresh.push_back(it->second);
    } else {
      plan.stale.push_back(name);
    }
  }
  const size_t fresh_count = fresh.size();
  const size_t wanted = std::min(std::max(kMinReferences, plan.stale.size()), kMaxReferences);
  if (!plan.stale.empty()) {
    // The most recently passed make the references: their passes are the newest.
    std::stable_sort(fresh.begin(), fresh.end(),
                     [](const auto* a, const auto* b) { return a->passed_at > b->passed_at; });
    const size_t n = std::min(wanted, fresh.size());
    for (size_t i = 0; i < n; ++i) plan.references.push_back(fresh[i]->node);
    fresh.erase(fresh.begin(), fresh.begin() + static_cast<std::ptrdiff_t>(n));
  }
  std::sort(fresh.begin(), fresh.end(),
            [](const auto* a, const auto* b) { return a->node < b->node; });
  for (const auto* s : fresh) plan.skipped.push_back(Skipped(*s, ask.now));
  plan.decision = Decision(plan, wanted, fresh_count);
  return plan;
}

}  // namespace fabricctl::controller
