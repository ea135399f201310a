#include "controller/verdict/reference_config.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/verdict/inventory_diff.h"
#include "report/findings.h"

namespace fabricctl::controller {

namespace {

// How one part of a node's inventory stands against the references: how many differ from the
// node there, and what each value they hold instead is held by.
struct PartView {
  std::string part;
  std::string node_value;
  int differ = 0;
  std::map<std::string, std::vector<std::string>> held;  // a reference's value -> those refs
};

// The parts of `node` that more than half of `refs` hold otherwise, in the order found.
std::vector<PartView> MajorityDifferences(const NodeFacts& node,
                                          const std::vector<const NodeFacts*>& refs) {
  std::vector<PartView> parts;
  for (const NodeFacts* ref : refs) {
    for (InventoryDifference& d : DifferencesFrom(ref->inventory, node.inventory)) {
      auto it = std::find_if(parts.begin(), parts.end(),
                             [&](const PartView& p) { return p.part == d.part; });
      if (it == parts.end()) it = parts.insert(parts.end(), PartView{d.part, d.after, 0, {}});
      ++it->differ;
      it->held[d.before].push_back(ref->name);
    }
  }
  parts.erase(std::remove_if(parts.begin(), parts.end(),
                             [&](const PartView& p) {
                               return static_cast<size_t>(p.differ) * 2 <= refs.size();
                             }),
              parts.end());
  return parts;
}

// The value most of the differing references hold, and which of them hold it.
const std::pair<const std::string, std::vector<std::string>>& Commonest(const PartView& p) {
  auto best = p.held.begin();
  for (auto it = p.held.begin(); it != p.held.end(); ++it) {
    if (it->second.size() > best->second.size()) best = it;
  }
  return *best;
}

}  // namespace

std::vector<v1::Finding> ConfigAgainstReferences(const std::vector<NodeFacts>& nodes,
                                                 const std::set<std::string>& references) {
  std::vector<const NodeFacts*> refs;
  for (const NodeFacts& node : nodes) {
    if (node.reachable && references.count(node.name) > 0) refs.push_back(&node);
  }
  std::vector<v1::Finding> out;
  if (refs.empty()) return out;
  for (const NodeFacts& node : nodes) {
    if (!node.reachable || references.count(node.name) > 0) continue;
    // Against what most references have, part by part: one odd reference neither hides a
    // drift nor makes one, and references of two generations judge neither generation.
    const std::vector<PartView> parts = MajorityDifferences(node, refs);
    if (parts.empty()) continue;
    std::vector<std::string> lines;
    for (const PartView& p : parts) {
      const auto& [value, holders] = Commonest(p);
      lines.push_back(absl::StrCat(Describe({p.part, value, p.node_value}), " (", holders.size(),
                                   " of ", refs.size(), " references)"));
    }
    v1::Finding f = report::Make(report::kind::kConfigDrift, node.name,
                                 absl::StrCat(node.name, " differs from most of the ", refs.size(),
                                              " reference node(s): ", absl::StrJoin(lines, "; ")));
    auto& evidence = *f.mutable_evidence();
    evidence["reference"] = Commonest(parts.front()).second.front();
    evidence["references"] = absl::StrCat(refs.size());
    evidence["differences"] = absl::StrCat(parts.size());
    // Each part as the node and most references read it (fabricctl accept's HTML table).
    for (const PartView& p : parts) {
      const auto& [value, holders] = Commonest(p);
      evidence["node." + p.part] = p.node_value;
      evidence["reference." + p.part] = value;
      evidence["references_holding." + p.part] = absl::StrCat(holders.size());
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace fabricctl::controller
