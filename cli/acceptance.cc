#include "cli/acceptance.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace fabricctl::cli {

std::vector<std::string> AutoReferences(
    const std::vector<std::string>& new_nodes, const v1::ListNodesResponse& registry,
    const google::protobuf::RepeatedPtrField<v1::NodeLabels>& placed) {
  const std::set<std::string> fresh(new_nodes.begin(), new_nodes.end());
  std::map<std::string, const v1::NodeLabels*> site;
  for (const v1::NodeLabels& entry : placed) site[entry.node()] = &entry;
  auto labels_of = [&](const std::string& name) {
    static const google::protobuf::Map<std::string, std::string> kNone;
    auto it = site.find(name);
    return it == site.end() ? kNone : it->second->labels();
  };
  std::set<std::pair<std::string, std::string>> new_labels;
  for (const std::string& name : new_nodes) {
    for (const auto& [key, value] : labels_of(name)) new_labels.insert({key, value});
  }
  struct Candidate {
    std::string name;
    bool shares = false;
    int64_t passed_s = 0;
  };
  std::vector<Candidate> candidates;
  for (const auto& node : registry.nodes()) {
    const std::string& name = node.inventory().node_name();
    if (fresh.count(name) > 0 || node.state() != v1::NODE_ONLINE || !node.has_known_good() ||
        node.known_good().has_lost()) {
      continue;
    }
    Candidate c{name, false, node.known_good().passed().seconds()};
    for (const auto& [key, value] : labels_of(name))
      c.shares = c.shares || new_labels.count({key, value}) > 0;
    candidates.push_back(std::move(c));
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(b.shares, b.passed_s, a.name) < std::tie(a.shares, a.passed_s, b.name);
  });
  std::vector<std::string> out;
  for (size_t i = 0; i < candidates.size() && i < kAutoReferences; ++i)
    out.push_back(candidates[i].name);
  return out;
}

absl::Status CheckReferences(const std::vector<std::string>& references,
                             const std::vector<std::string>& new_nodes,
                             const v1::ListNodesResponse& registry,
                             std::vector<std::string>* warnings) {
  const std::set<std::string> fresh(new_nodes.begin(), new_nodes.end());
  std::map<std::string, const v1::NodeStatus*> by_name;
  for (const auto& node : registry.nodes()) by_name[node.inventory().node_name()] = &node;
  for (const std::string& name : references) {
    if (fresh.count(name) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--reference: ", name, " is also among --nodes (a new node)"));
    }
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--reference: ", name, " is not registered"));
    }
    const v1::NodeStatus& node = *it->second;
    if (!node.has_known_good() || node.known_good().has_lost()) {
      warnings->push_back(
          absl::StrCat("reference ", name, " is not known-good",
                       node.known_good().lost_why().empty()
                           ? ""
                           : absl::StrCat(" (", node.known_good().lost_why(), ")")));
    }
  }
  return absl::OkStatus();
}

}  // namespace fabricctl::cli
