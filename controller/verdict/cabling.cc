#include "controller/verdict/cabling.h"

#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/verdict/neighbours.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

// Rail index by leaf, and each rail's leaves, as the reachable references' neighbours show
// them; a rail is `judged` only when every reachable reference that has the rail's NIC shows a
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

RailLeaves LearnLeaves(const std::vector<const NodeFacts*>& refs,
                       const google::protobuf::RepeatedPtrField<v1::Rail>& rails,
                       const Neighbours& neighbours) {
  RailLeaves out;
  out.leaves.resize(rails.size());
  out.judged.assign(rails.size(), false);
  for (int r = 0; r < rails.size(); ++r) {
    bool every = true, any = false;
    for (const NodeFacts* ref : refs) {
      const Seen seen = neighbours.Of(*ref, rails[r].netdev(), &rails[r]);
      if (!seen.exists || seen.unknown) continue;
      if (seen.switch_name.empty()) {
        every = false;
        continue;
      }
      any = true;
      out.leaves[r].insert(seen.switch_name);
      out.rails_of_leaf[seen.switch_name].insert(r);
    }
    out.judged[r] = any && every;
  }
  return out;
}

// ", the same switch as its eth0 (rail0)" when the node's NIC of another judged rail is cabled to
// `seen` too and the references' rails never share a switch; "" otherwise.
std::string SharedWith(const NodeFacts& node,
                       const google::protobuf::RepeatedPtrField<v1::Rail>& rails, int r,
                       const std::string& seen, const RailLeaves& learned,
                       const Neighbours& neighbours) {
  if (!learned.disjoint()) return "";
  for (int q = 0; q < rails.size(); ++q) {
    if (q == r || !learned.judged[q]) continue;
    if (neighbours.Of(node, rails[q].netdev(), &rails[q]).switch_name == seen) {
      return absl::StrCat(", the same switch as its ", rails[q].netdev(), " (", rails[q].name(),
                          "), where the reference nodes' rails never share one");
    }
  }
  return "";
}

// What a finding says of an interface or HCA cabled to nothing seen: " has no LLDP neighbour
// (why)", " has no neighbour (neither LLDP nor ibnetdiscover shows one)", or, for a node the
// ibnetdiscover file does not show, that it should be taken again.
std::string NoNeighbour(const NodeFacts& node, const Seen& seen) {
  if (seen.source == "ibnetdiscover")
    return " has no neighbour (neither LLDP nor ibnetdiscover shows one)";
  if (seen.unknown) {
    return " has no LLDP neighbour, and topology.ibnetdiscover's file does not show this node "
           "(take "
           "it again once the node is cabled)";
  }
  const std::string why = node.inventory.lldp_unavailable_reason();
  return absl::StrCat(" has no LLDP neighbour", why.empty() ? "" : absl::StrCat(" (", why, ")"));
}

v1::Finding Miscabled(const NodeFacts& node, const v1::Rail& rail, const Seen& seen,
                      const std::string& detail, const std::set<std::string>& expected) {
  v1::Finding f = report::Make(report::kind::kMiscabled, node.name, detail);
  f.set_device(rail.netdev());
  f.set_rail(rail.name());
  (*f.mutable_evidence())["expected"] = absl::StrJoin(expected, ",");
  (*f.mutable_evidence())["seen"] = seen.switch_name.empty() ? "none" : seen.switch_name;
  if (!seen.source.empty()) (*f.mutable_evidence())["seen_by"] = seen.source;
  return f;
}

using Planned = std::map<std::string, std::map<std::string, const v1::Cable*>>;

// Whether a plan's line names `rail` on `node`: its interface, its rdma_device, or the HCA
// whose port carries its interface (a plan for an InfiniBand fabric names HCAs).
bool Names(const std::string& planned, const NodeFacts& node, const v1::Rail& rail) {
  return planned == rail.netdev() ||
         (!rail.rdma_device().empty()
              ? planned == rail.rdma_device()
              : planned == Neighbours::HcaName(node.inventory, rail.netdev()));
}

bool PlanNames(const Planned& planned, const NodeFacts& node, const v1::Rail& rail) {
  auto it = planned.find(node.name);
  if (it == planned.end()) return false;
  for (const auto& [name, cable] : it->second) {
    if (Names(name, node, rail)) return true;
  }
  return false;
}

// The interfaces of `node` that `planned` (node -> netdev -> cable) or a rail's leaf_pattern
// judges: the rails' rule learned from the references leaves them alone.
bool JudgedOtherwise(const Planned& planned, const NodeFacts& node, const v1::Rail& rail) {
  return !rail.leaf_pattern().empty() || PlanNames(planned, node, rail);
}

const v1::Rail* RailOf(const google::protobuf::RepeatedPtrField<v1::Rail>& rails,
                       const NodeFacts& node, const std::string& name) {
  for (const v1::Rail& rail : rails) {
    if (Names(name, node, rail)) return &rail;
  }
  return nullptr;
}

// `node`'s interface (or HCA) of one planned cable against its neighbour; nullopt when they
// agree.
std::optional<v1::Finding> AgainstCable(const NodeFacts& node, const v1::Cable& cable,
                                        const v1::Rail* rail, const Neighbours& neighbours) {
  const std::string planned = cable.port().empty()
                                  ? cable.switch_name()
                                  : absl::StrCat(cable.switch_name(), " port ", cable.port());
  const std::string itf_name =
      rail == nullptr ? cable.netdev() : absl::StrCat(cable.netdev(), " (", rail->name(), ")");
  const Seen seen = neighbours.Of(node, cable.netdev(), rail);
  std::string shown, detail;
  if (!seen.exists) {
    shown = "no interface";
    detail = absl::StrCat(node.name, " has no interface ", cable.netdev(),
                          "; the cabling plan cables it to ", planned);
  } else if (seen.switch_name.empty()) {
    detail = absl::StrCat(node.name, "'s ", itf_name, NoNeighbour(node, seen),
                          "; the cabling plan cables it to ", planned);
  } else if (seen.switch_name != cable.switch_name() ||
             (!cable.port().empty() && std::find(seen.port_names.begin(), seen.port_names.end(),
                                                 cable.port()) == seen.port_names.end())) {
    shown = absl::StrCat(seen.switch_name, " port ", seen.port);
    detail = absl::StrCat(node.name, "'s ", itf_name, " is cabled to ", shown,
                          seen.source == "LLDP" ? "" : " (" + seen.source + ")",
                          "; the cabling plan cables it to ", planned);
  } else {
    return std::nullopt;
  }
  v1::Finding f = report::Make(report::kind::kMiscabled, node.name, detail);
  f.set_device(cable.netdev());
  if (rail != nullptr) f.set_rail(rail->name());
  (*f.mutable_evidence())["expected"] = planned;
  (*f.mutable_evidence())["seen"] = shown.empty() ? "none" : shown;
  (*f.mutable_evidence())["source"] = "cabling plan";
  if (!seen.source.empty()) (*f.mutable_evidence())["seen_by"] = seen.source;
  return f;
}

// `node`'s NIC of `rail` against the rail's leaf_pattern; nullopt when it matches (or the node
// has no such NIC: config_drift's and the rail's to say).
std::optional<v1::Finding> AgainstPattern(const NodeFacts& node, const v1::Rail& rail,
                                          const Neighbours& neighbours) {
  const Seen seen = neighbours.Of(node, rail.netdev(), &rail);
  if (!seen.exists || seen.unknown) return std::nullopt;
  if (!seen.switch_name.empty() &&
      ::fnmatch(rail.leaf_pattern().c_str(), seen.switch_name.c_str(), 0) == 0)
    return std::nullopt;
  const std::string rule = absl::StrCat(rail.name(), "'s leaves match '", rail.leaf_pattern(), "'");
  const std::string itf = absl::StrCat(node.name, "'s ", rail.netdev(), " (", rail.name(), ")");
  const std::string detail = seen.switch_name.empty()
                                 ? absl::StrCat(itf, NoNeighbour(node, seen), "; ", rule)
                                 : absl::StrCat(itf, " is cabled to ", seen.switch_name, " (port ",
                                                seen.port, "); ", rule);
  v1::Finding f = Miscabled(node, rail, seen, detail, {rail.leaf_pattern()});
  (*f.mutable_evidence())["source"] = "leaf_pattern";
  return f;
}

// Whose leaf `seen` is, for a NIC of rail `r` on a switch that is none of its rail's leaves: ", a
// leaf of rail1" when the references show it on another rail; SharedWith's words, or "" (not
// judged: it may be the new rack's own leaf of this rail) when they do not show it.
std::string WhoseLeaf(const NodeFacts& node,
                      const google::protobuf::RepeatedPtrField<v1::Rail>& rails, int r,
                      const std::string& seen, const RailLeaves& learned,
                      const Neighbours& neighbours) {
  if (auto it = learned.rails_of_leaf.find(seen); it != learned.rails_of_leaf.end()) {
    std::vector<std::string> names;
    for (size_t other : it->second) names.push_back(rails[other].name());
    return absl::StrCat(", a leaf of ", absl::StrJoin(names, " and "));
  }
  return SharedWith(node, rails, r, seen, learned, neighbours);
}

// The rails without a leaf_pattern, against the leaves the references show them on; see
// CablingOfNewNodes.
std::vector<v1::Finding> AgainstReferences(
    const std::vector<NodeFacts>& nodes, const google::protobuf::RepeatedPtrField<v1::Rail>& rails,
    const std::set<std::string>& references, const Planned& planned, const Neighbours& neighbours) {
  std::vector<const NodeFacts*> refs;
  for (const NodeFacts& node : nodes) {
    if (node.reachable && references.count(node.name) > 0) refs.push_back(&node);
  }
  std::vector<v1::Finding> out;
  if (refs.empty() || rails.empty()) return out;
  const RailLeaves learned = LearnLeaves(refs, rails, neighbours);
  for (const NodeFacts& node : nodes) {
    if (!node.reachable || references.count(node.name) > 0) continue;
    for (int r = 0; r < rails.size(); ++r) {
      if (!learned.judged[r] || JudgedOtherwise(planned, node, rails[r])) continue;
      const v1::Rail& rail = rails[r];
      const Seen seen = neighbours.Of(node, rail.netdev(), &rail);
      // A missing NIC is config_drift's and the rail's to say; a node the ibnetdiscover file
      // predates, nobody's.
      if (!seen.exists || seen.unknown) continue;
      const std::string itf = absl::StrCat(node.name, "'s ", rail.netdev(), " (", rail.name(), ")");
      const std::string expected = absl::StrJoin(learned.leaves[r], " or ");
      if (seen.switch_name.empty()) {
        out.push_back(
            Miscabled(node, rail, seen,
                      absl::StrCat(itf, NoNeighbour(node, seen), "; the reference nodes' ",
                                   rail.netdev(), " are cabled to ", expected),
                      learned.leaves[r]));
        continue;
      }
      if (learned.leaves[r].count(seen.switch_name) > 0) continue;
      const std::string whose = WhoseLeaf(node, rails, r, seen.switch_name, learned, neighbours);
      if (whose.empty()) continue;
      out.push_back(
          Miscabled(node, rail, seen,
                    absl::StrCat(itf, " is cabled to ", seen.switch_name, whose, " (port ",
                                 seen.port, "); ", rail.name(), "'s leaves are ", expected),
                    learned.leaves[r]));
    }
  }
  return out;
}

}  // namespace

std::vector<v1::Finding> CablingOfNewNodes(const std::vector<NodeFacts>& nodes,
                                           const v1::Config& config,
                                           const std::set<std::string>& references) {
  if (references.empty()) return {};
  const Neighbours neighbours(config.topology());
  Planned planned;
  for (const v1::Cable& cable : config.topology().cables()) {
    planned[cable.node()][cable.netdev()] = &cable;
  }
  std::vector<v1::Finding> out;
  for (const NodeFacts& node : nodes) {
    if (!node.reachable || references.count(node.name) > 0) continue;
    if (auto it = planned.find(node.name); it != planned.end()) {
      for (const auto& [netdev, cable] : it->second) {
        if (auto f = AgainstCable(node, *cable, RailOf(config.rails(), node, netdev), neighbours)) {
          out.push_back(std::move(*f));
        }
      }
    }
    for (const v1::Rail& rail : config.rails()) {
      if (rail.leaf_pattern().empty() || PlanNames(planned, node, rail)) continue;
      if (auto f = AgainstPattern(node, rail, neighbours)) out.push_back(std::move(*f));
    }
  }
  for (auto& f : AgainstReferences(nodes, config.rails(), references, planned, neighbours)) {
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace fabricctl::controller
