#include "controller/sweep/reference_config.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/sweep/inventory_diff.h"
#include "report/findings.h"

namespace fabricctl::controller::sweep {

std::vector<v1::Finding> ConfigAgainstReferences(const Fleet& fleet,
                                                 const std::set<std::string>& references) {
  std::vector<const Node*> refs;
  for (const auto& node : fleet.nodes) {
    if (node->reachable && references.count(node->name) > 0) refs.push_back(node.get());
  }
  std::vector<v1::Finding> out;
  if (refs.empty()) return out;
  for (const auto& node : fleet.nodes) {
    if (!node->reachable || references.count(node->name) > 0) continue;
    const Node* closest = nullptr;
    std::vector<std::string> fewest;
    for (const Node* ref : refs) {
      std::vector<std::string> differences = DifferencesFrom(ref->inventory, node->inventory);
      if (closest == nullptr || differences.size() < fewest.size()) {
        closest = ref;
        fewest = std::move(differences);
      }
    }
    if (fewest.empty()) continue;
    v1::Finding f = report::Make(report::kind::kConfigDrift, node->name,
                                 absl::StrCat(node->name, " differs from the reference node ",
                                              closest->name, ": ", absl::StrJoin(fewest, "; ")));
    (*f.mutable_evidence())["reference"] = closest->name;
    (*f.mutable_evidence())["differences"] = absl::StrCat(fewest.size());
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace fabricctl::controller::sweep
