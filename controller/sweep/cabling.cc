#include "controller/sweep/cabling.h"

#include <fnmatch.h>

#include <map>
#include <optional>

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

// The interfaces of `node` that `planned` (node -> netdev -> cable) or a rail's leaf_pattern
// judges: the rails' rule learned from the references leaves them alone.
bool JudgedOtherwise(const std::map<std::string, std::map<std::string, const v1::Cable*>>& planned,
                     const std::string& node, const v1::Rail& rail) {
  auto it = planned.find(node);
  return !rail.leaf_pattern().empty() ||
         (it != planned.end() && it->second.count(rail.netdev()) > 0);
}

const v1::Rail* RailOf(const google::protobuf::RepeatedPtrField<v1::Rail>& rails,
                       const std::string& netdev) {
  for (const v1::Rail& rail : rails) {
    if (rail.netdev() == netdev) return &rail;
  }
  return nullptr;
}

// Whether LLDP's view of the switch port is `port`: its id or its description.
bool SamePort(const v1::LldpNeighbor& lldp, const std::string& port) {
  return lldp.port_id() == port || lldp.port_description() == port;
}

// `node`'s interface of one planned cable against its LLDP neighbour; nullopt when they agree.
std::optional<v1::Finding> AgainstCable(const Node& node, const v1::Cable& cable,
                                        const v1::Rail* rail) {
  const std::string planned = cable.port().empty()
                                  ? cable.switch_name()
                                  : absl::StrCat(cable.switch_name(), " port ", cable.port());
  const std::string itf_name =
      rail == nullptr ? cable.netdev() : absl::StrCat(cable.netdev(), " (", rail->name(), ")");
  const v1::NetInterface* itf = InterfaceNamed(node.inventory, cable.netdev());
  std::string seen, detail;
  if (itf == nullptr) {
    seen = "no interface";
    detail = absl::StrCat(node.name, " has no interface ", cable.netdev(),
                          "; the cabling plan cables it to ", planned);
  } else if (itf->lldp().system_name().empty()) {
    const std::string why = node.inventory.lldp_unavailable_reason();
    detail = absl::StrCat(node.name, "'s ", itf_name, " has no LLDP neighbour",
                          why.empty() ? "" : absl::StrCat(" (", why, ")"),
                          "; the cabling plan cables it to ", planned);
  } else if (itf->lldp().system_name() != cable.switch_name() ||
             (!cable.port().empty() && !SamePort(itf->lldp(), cable.port()))) {
    seen = absl::StrCat(itf->lldp().system_name(), " port ", PortOf(itf->lldp()));
    detail = absl::StrCat(node.name, "'s ", itf_name, " is cabled to ", seen,
                          "; the cabling plan cables it to ", planned);
  } else {
    return std::nullopt;
  }
  v1::Finding f = report::Make(report::kind::kMiscabled, node.name, detail);
  f.set_device(cable.netdev());
  if (rail != nullptr) f.set_rail(rail->name());
  (*f.mutable_evidence())["expected"] = planned;
  (*f.mutable_evidence())["seen"] = seen.empty() ? "none" : seen;
  (*f.mutable_evidence())["source"] = "cabling plan";
  return f;
}

// `node`'s NIC of `rail` against the rail's leaf_pattern; nullopt when it matches (or the node
// has no such NIC: config_drift's and the rail's to say).
std::optional<v1::Finding> AgainstPattern(const Node& node, const v1::Rail& rail) {
  const v1::NetInterface* itf = InterfaceNamed(node.inventory, rail.netdev());
  if (itf == nullptr) return std::nullopt;
  const v1::LldpNeighbor& lldp = itf->lldp();
  const std::string& seen = lldp.system_name();
  if (!seen.empty() && ::fnmatch(rail.leaf_pattern().c_str(), seen.c_str(), 0) == 0)
    return std::nullopt;
  const std::string rule = absl::StrCat(rail.name(), "'s leaves match '", rail.leaf_pattern(), "'");
  std::string detail;
  if (seen.empty()) {
    const std::string why = node.inventory.lldp_unavailable_reason();
    detail =
        absl::StrCat(node.name, "'s ", rail.netdev(), " (", rail.name(), ") has no LLDP neighbour",
                     why.empty() ? "" : absl::StrCat(" (", why, ")"), "; ", rule);
  } else {
    detail = absl::StrCat(node.name, "'s ", rail.netdev(), " (", rail.name(), ") is cabled to ",
                          seen, " (port ", PortOf(lldp), "); ", rule);
  }
  v1::Finding f = Miscabled(node, rail, seen, detail, {rail.leaf_pattern()});
  (*f.mutable_evidence())["source"] = "leaf_pattern";
  return f;
}

// The rails without a leaf_pattern, against the leaves the references show them on; see
// CablingOfNewNodes.
std::vector<v1::Finding> AgainstReferences(
    const Fleet& fleet, const google::protobuf::RepeatedPtrField<v1::Rail>& rails,
    const std::set<std::string>& references,
    const std::map<std::string, std::map<std::string, const v1::Cable*>>& planned) {
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
      if (!learned.judged[r] || JudgedOtherwise(planned, node->name, rails[r])) continue;
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

}  // namespace

std::vector<v1::Finding> CablingOfNewNodes(const Fleet& fleet, const v1::Config& config,
                                           const std::set<std::string>& references) {
  if (references.empty()) return {};
  std::map<std::string, std::map<std::string, const v1::Cable*>> planned;
  for (const v1::Cable& cable : config.topology().cables()) {
    planned[cable.node()][cable.netdev()] = &cable;
  }
  std::vector<v1::Finding> out;
  for (const auto& node : fleet.nodes) {
    if (!node->reachable || references.count(node->name) > 0) continue;
    if (auto it = planned.find(node->name); it != planned.end()) {
      for (const auto& [netdev, cable] : it->second) {
        if (auto f = AgainstCable(*node, *cable, RailOf(config.rails(), netdev))) {
          out.push_back(std::move(*f));
        }
      }
    }
    for (const v1::Rail& rail : config.rails()) {
      if (rail.leaf_pattern().empty() || planned[node->name].count(rail.netdev()) > 0) continue;
      if (auto f = AgainstPattern(*node, rail)) out.push_back(std::move(*f));
    }
  }
  for (auto& f : AgainstReferences(fleet, config.rails(), references, planned)) {
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace fabricctl::controller::sweep
