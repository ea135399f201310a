#include "controller/sweep/cabling.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/findings.h"

namespace fabricctl::controller::sweep {
namespace {

const v1::NetInterface* InterfaceNamed(const v1::NodeInventory& inventory,
                                       const std::string& name) {
  for (const auto& itf : inventory.interfaces()) {
    if (itf.name() == name) return &itf;
  }
  return nullptr;
}

// Rail index by leaf, and each rail's leaves, as the reachable references' LLDP shows them; a
// rail is `judged` only when every reachable reference that has the rail's interface shows a
// neighbour on it.
struct RailLeaves {
  std::vector<std::set<std::string>> leaves;
  std::vector<bool> judged;
  std::map<std::string, std::set<size_t>> rails_of_leaf;
  // No switch carries two rails' NICs of the references: a rail-optimised fabric.
  bool disjoint() const {
    for (const auto& [leaf, rails] : rails_of_leaf) {
      if (rails.size() > 1) return false;
    }
    return true;
  }
};

RailLeaves LearnLeaves(const std::vector<const Node*>& refs,
                       const google::protobuf::RepeatedPtrField<v1::Rail>& rails) {
  RailLeaves out;
  out.leaves.resize(rails.size());
  out.judged.assign(rails.size(), false);
  for (int r = 0; r < rails.size(); ++r) {
    bool every = true, any = false;
    for (const Node* ref : refs) {
      const v1::NetInterface* itf = InterfaceNamed(ref->inventory, rails[r].netdev());
      if (itf == nullptr) continue;
      const std::string& leaf = itf->lldp().system_name();
      if (leaf.empty()) {
        every = false;
        continue;
      }
      any = true;
      out.leaves[r].insert(leaf);
      out.rails_of_leaf[leaf].insert(r);
    }
    out.judged[r] = any && every;
  }
  return out;
}

// ", the same switch as its eth0 (rail0)" when the node's NIC of another judged rail is cabled to
// `seen` too and the references' rails never share a switch; "" otherwise.
std::string SharedWith(const Node& node, const google::protobuf::RepeatedPtrField<v1::Rail>& rails,
                       int r, const std::string& seen, const RailLeaves& learned) {
  if (!learned.disjoint()) return "";
  for (int q = 0; q < rails.size(); ++q) {
    if (q == r || !learned.judged[q]) continue;
    const v1::NetInterface* other = InterfaceNamed(node.inventory, rails[q].netdev());
    if (other != nullptr && other->lldp().system_name() == seen) {
      return absl::StrCat(", the same switch as its ", rails[q].netdev(), " (", rails[q].name(),
                          "), where the reference nodes' rails never share one");
    }
  }
  return "";
}

// The switch port as LLDP names it: its id, with its description where it has one.
std::string PortOf(const v1::LldpNeighbor& lldp) {
  if (lldp.port_id().empty())
    return lldp.port_description().empty() ? "unknown" : lldp.port_description();
  if (lldp.port_description().empty() || lldp.port_description() == lldp.port_id())
    return lldp.port_id();
  return absl::StrCat(lldp.port_id(), ", ", lldp.port_description());
}

v1::Finding Miscabled(const Node& node, const v1::Rail& rail, const std::string& seen,
                      const std::string& detail, const std::set<std::string>& expected) {
  v1::Finding f = report::Make(report::kind::kMiscabled, node.name, detail);
  f.set_device(rail.netdev());
  f.set_rail(rail.name());
  (*f.mutable_evidence())["expected"] = absl::StrJoin(expected, ",");
  (*f.mutable_evidence())["seen"] = seen.empty() ? "none" : seen;
  return f;
}

}  // namespace

std::vector<v1::Finding> CablingAgainstReferences(
    const Fleet& fleet, const google::protobuf::RepeatedPtrField<v1::Rail>& rails,
    const std::set<std::string>& references) {
  std::vector<const Node*> refs;
  for (const auto& node : fleet.nodes) {
    if (node->reachable && references.count(node->name) > 0) refs.push_back(node.get());
  }
  std::vector<v1::Finding> out;
  if (refs.empty() || rails.empty()) return out;
  const RailLeaves learned = LearnLeaves(refs, rails);
  for (const auto& node : fleet.nodes) {
    if (!node->reachable || references.count(node->name) > 0) continue;
    for (int r = 0; r < rails.size(); ++r) {
      if (!learned.judged[r]) continue;
      const v1::Rail& rail = rails[r];
      const v1::NetInterface* itf = InterfaceNamed(node->inventory, rail.netdev());
      if (itf == nullptr) continue;  // a missing NIC is config_drift's and the rail's to say
      const std::string& seen = itf->lldp().system_name();
      const std::string expected = absl::StrJoin(learned.leaves[r], " or ");
      if (seen.empty()) {
        const std::string why = node->inventory.lldp_unavailable_reason();
        out.push_back(Miscabled(
            *node, rail, seen,
            absl::StrCat(node->name, "'s ", rail.netdev(), " (", rail.name(),
                         ") has no LLDP neighbour", why.empty() ? "" : absl::StrCat(" (", why, ")"),
                         "; the reference nodes' ", rail.netdev(), " are cabled to ", expected),
            learned.leaves[r]));
        continue;
      }
      if (learned.leaves[r].count(seen) > 0) continue;
      // A switch the references show on another rail is that rail's; one they do not show may
      // be the new rack's own leaf of this rail (not judged), unless the node's NIC of another
      // rail is on it too where the references' rails never share a switch.
      std::string whose;
      if (auto it = learned.rails_of_leaf.find(seen); it != learned.rails_of_leaf.end()) {
        std::vector<std::string> names;
        for (size_t other : it->second) names.push_back(rails[other].name());
        whose = absl::StrCat(", a leaf of ", absl::StrJoin(names, " and "));
      } else {
        whose = SharedWith(*node, rails, r, seen, learned);
        if (whose.empty()) continue;
      }
      out.push_back(
          Miscabled(*node, rail, seen,
                    absl::StrCat(node->name, "'s ", rail.netdev(), " (", rail.name(),
                                 ") is cabled to ", seen, whose, " (port ", PortOf(itf->lldp()),
                                 "); ", rail.name(), "'s leaves are ", expected),
                    learned.leaves[r]));
    }
  }
  return out;
}

}  // namespace fabricctl::controller::sweep
