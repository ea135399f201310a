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
    std::vector<InventoryDifference> fewest;
    for (const Node* ref : refs) {
      std::vector<InventoryDifference> differences =
          DifferencesFrom(ref->inventory, node->inventory);
      if (closest == nullptr || differences.size() < fewest.size()) {
        closest = ref;
        fewest = std::move(differences);
      }
    }
    if (fewest.empty()) continue;
    std::vector<std::string> lines;
    for (const InventoryDifference& d : fewest) lines.push_back(Describe(d));
    v1::Finding f = report::Make(report::kind::kConfigDrift, node->name,
                                 absl::StrCat(node->name, " differs from the reference node ",
                                              closest->name, ": ", absl::StrJoin(lines, "; ")));
    auto& evidence = *f.mutable_evidence();
    evidence["reference"] = closest->name;
    evidence["differences"] = absl::StrCat(fewest.size());
    // Each part as the two read it, for a table of the differences (fabricctl accept's HTML).
    for (const InventoryDifference& d : fewest) {
      evidence["node." + d.part] = d.after;
      evidence["reference." + d.part] = d.before;
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace fabricctl::controller::sweep
