#include "cli/known_good.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/time_util.h"
#include "report/findings.h"

namespace fabricctl::cli {
namespace {

absl::Time FromProto(const google::protobuf::Timestamp& t) {
  return absl::FromUnixMicros(google::protobuf::util::TimeUtil::TimestampToMicroseconds(t));
}

bool Fresh(const v1::NodeStatus& node, absl::Duration max_age, absl::Time now) {
  if (node.state() != v1::NODE_ONLINE || !node.has_known_good()) return false;
  const v1::KnownGood& k = node.known_good();
  return !k.has_lost() && now - FromProto(k.passed()) <= max_age;
}

v1::Finding Skipped(const v1::NodeStatus& node, absl::Time now) {
  const v1::KnownGood& k = node.known_good();
  const int64_t minutes = absl::ToInt64Minutes(now - FromProto(k.passed()));
  v1::Finding f =
      report::Make(report::kind::kKnownGood, node.inventory().node_name(),
                   absl::StrCat("known-good: sweep ", k.sweep_id(), " passed it ", minutes,
                                " min ago and nothing changed on it since; not measured again"));
  (*f.mutable_evidence())["passed_in_sweep"] = absl::StrCat(k.sweep_id());
  (*f.mutable_evidence())["passed_unix_s"] =
      absl::StrCat(absl::ToUnixSeconds(FromProto(k.passed())));
  return f;
}

}  // namespace

std::vector<std::string> StalePlan::Measure() const {
  if (stale.empty()) return {};
  std::vector<std::string> out = stale;
  out.insert(out.end(), references.begin(), references.end());
  return out;
}

StalePlan PlanStale(const std::vector<std::string>& wanted, const v1::ListNodesResponse& nodes,
                    absl::Duration max_age, absl::Time now) {
  std::map<std::string, const v1::NodeStatus*> by_name;
  for (const auto& node : nodes.nodes()) by_name[node.inventory().node_name()] = &node;
  std::vector<std::string> names = wanted;
  if (names.empty()) {
    for (const auto& [name, node] : by_name) names.push_back(name);
  }
  StalePlan plan;
  std::vector<const v1::NodeStatus*> fresh;
  for (const std::string& name : names) {
    auto it = by_name.find(name);
    if (it != by_name.end() && Fresh(*it->second, max_age, now)) {
      fresh.push_back(it->second);
    } else {
      plan.stale.push_back(name);
    }
  }
  if (!plan.stale.empty()) {
    // The most recently passed make the references: their figures are the newest known-good.
    std::stable_sort(fresh.begin(), fresh.end(), [](const auto* a, const auto* b) {
      return FromProto(a->known_good().passed()) > FromProto(b->known_good().passed());
    });
    const size_t n = std::min(kReferences, fresh.size());
    for (size_t i = 0; i < n; ++i) plan.references.push_back(fresh[i]->inventory().node_name());
    fresh.erase(fresh.begin(), fresh.begin() + static_cast<std::ptrdiff_t>(n));
  }
  std::sort(fresh.begin(), fresh.end(), [](const auto* a, const auto* b) {
    return a->inventory().node_name() < b->inventory().node_name();
  });
  for (const auto* node : fresh) plan.skipped.push_back(Skipped(*node, now));
  return plan;
}

}  // namespace fabricctl::cli
