#include "cli/acceptance.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "base/exit_code.h"
#include "report/findings.h"

namespace fabricctl::cli {
namespace {

bool Raised(const v1::Finding& f) {
  return f.severity() == v1::SEVERITY_WARNING || f.severity() == v1::SEVERITY_CRITICAL;
}

// One finding across the passes: the first instance, and how many passes raised it.
struct Seen {
  v1::Finding finding;
  int passes = 0;
};
using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;

Key KeyOf(const v1::Finding& f) { return {f.kind(), f.node(), f.peer(), f.rail(), f.device()}; }

// What makes two nodes' findings the same state: the kind, on the same device, of the same audit.
std::string Alike(const v1::Finding& f) {
  auto audit = f.evidence().find("audit");
  return absl::StrCat(f.kind(), "|", f.device(), "|",
                      audit == f.evidence().end() ? "" : audit->second);
}

// Pairs' figures gathered over the passes.
struct Samples {
  std::vector<double> bw_gbps, lat_us;
};
// One rail's: the pairs between references, and each new node's with its partners (the
// references, or the other nodes without them).
struct RailSamples {
  Samples between;
  std::map<std::string, Samples> with;
  std::map<std::string, std::set<std::string>> partners;
};

void AddPair(const v1::PairHealth& p, Samples& s) {
  if (p.has_bw_gbps() && std::isfinite(p.bw_gbps())) s.bw_gbps.push_back(p.bw_gbps());
  if (p.has_bw_reverse_gbps() && std::isfinite(p.bw_reverse_gbps()))
    s.bw_gbps.push_back(p.bw_reverse_gbps());
  if (p.has_lat_us() && std::isfinite(p.lat_us())) s.lat_us.push_back(p.lat_us());
}

// The median as the controller's verdict takes it: the mean of the middle two of an even count.
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// Each new node's Figures (Acceptance.NodeVerdict.figures), one per rail of the passes.
void AddFigures(const std::set<std::string>& fresh, const std::set<std::string>& refs,
                const std::vector<v1::Report>& passes, v1::Acceptance& out) {
  std::vector<std::string> rails;  // in the order the passes name them
  std::map<std::string, RailSamples> by_rail;
  auto add_rail = [&](const std::string& rail) {
    if (std::find(rails.begin(), rails.end(), rail) == rails.end()) rails.push_back(rail);
  };
  for (const v1::Report& report : passes) {
    if (report.health().rails().empty()) add_rail("");
    for (const std::string& rail : report.health().rails()) add_rail(rail);
    for (const v1::PairHealth& p : report.health().pairs()) {
      RailSamples& r = by_rail[p.rail()];
      if (refs.count(p.node()) > 0 && refs.count(p.peer()) > 0) {
        AddPair(p, r.between);
        continue;
      }
      auto add = [&](const std::string& node, const std::string& partner) {
        if (fresh.count(node) == 0 || (!refs.empty() && refs.count(partner) == 0)) return;
        AddPair(p, r.with[node]);
        r.partners[node].insert(partner);
      };
      add(p.node(), p.peer());
      add(p.peer(), p.node());
    }
  }
  for (v1::Acceptance::NodeVerdict& verdict : *out.mutable_nodes()) {
    for (const std::string& rail : rails) {
      RailSamples& r = by_rail[rail];
      const Samples& s = r.with[verdict.node()];
      v1::Acceptance::Figures* f = verdict.add_figures();
      f->set_rail(rail);
      if (!s.bw_gbps.empty()) f->set_bw_gbps(Median(s.bw_gbps));
      if (!s.lat_us.empty()) f->set_lat_us(Median(s.lat_us));
      if (!r.between.bw_gbps.empty()) f->set_reference_bw_gbps(Median(r.between.bw_gbps));
      if (!r.between.lat_us.empty()) f->set_reference_lat_us(Median(r.between.lat_us));
      f->set_partners(static_cast<uint32_t>(r.partners[verdict.node()].size()));
    }
  }
}

}  // namespace

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

std::string CheckOf(const std::string& kind) {
  if (kind == report::kind::kMiscabled) return "cabling";
  if (kind == report::kind::kNodeUnreachable) return "reachable";
  if (report::IsConfigurationKind(kind)) return "configuration";
  return "fabric";
}

v1::Acceptance Judge(const std::vector<std::string>& new_nodes,
                     const std::vector<std::string>& references,
                     const std::vector<v1::Report>& passes) {
  const std::set<std::string> fresh(new_nodes.begin(), new_nodes.end());
  const std::set<std::string> refs(references.begin(), references.end());
  std::map<Key, Seen> seen;
  std::vector<Key> order;
  for (const v1::Report& report : passes) {
    std::set<Key> this_pass;
    for (const v1::Finding& f : report.findings()) {
      if (!Raised(f) || !this_pass.insert(KeyOf(f)).second) continue;
      auto [it, added] = seen.try_emplace(KeyOf(f), Seen{f, 0});
      if (added) order.push_back(KeyOf(f));
      ++it->second.passes;
    }
  }
  // The configuration kinds every reference shows: the fleet's state, which a new node
  // joining it may share.
  std::map<std::string, std::set<std::string>> refs_with;
  for (const Key& key : order) {
    const v1::Finding& f = seen[key].finding;
    if (refs.count(f.node()) > 0) refs_with[Alike(f)].insert(f.node());
  }
  auto shared = [&](const v1::Finding& f) {
    return !refs.empty() && CheckOf(f.kind()) == "configuration" &&
           refs_with[Alike(f)].size() == refs.size();
  };
  v1::Acceptance out;
  for (const std::string& r : references) out.add_reference_nodes(r);
  std::map<std::string, std::map<std::string, std::vector<v1::Finding>>> failed;  // node, check
  for (const Key& key : order) {
    Seen& s = seen[key];
    (*s.finding.mutable_evidence())["passes"] = absl::StrCat(s.passes, " of ", passes.size());
    const std::string check = CheckOf(s.finding.kind());
    bool named = false;
    for (const std::string* end : {&s.finding.node(), &s.finding.peer()}) {
      if (fresh.count(*end) == 0) continue;
      named = true;
      if (shared(s.finding)) {
        *out.add_shared_findings() = s.finding;
        continue;
      }
      failed[*end][check].push_back(s.finding);
    }
    if (named) continue;
    if (refs.count(s.finding.node()) > 0 || refs.count(s.finding.peer()) > 0) {
      *out.add_reference_findings() = s.finding;
    } else {
      *out.add_other_findings() = s.finding;
    }
  }
  for (const std::string& name : new_nodes) {
    v1::Acceptance::NodeVerdict* verdict = out.add_nodes();
    verdict->set_node(name);
    verdict->set_accepted(failed[name].empty());
    for (const char* check : {"reachable", "configuration", "cabling", "fabric"}) {
      v1::Acceptance::Check* c = verdict->add_checks();
      c->set_name(check);
      const auto& findings = failed[name][check];
      c->set_passed(findings.empty());
      for (const v1::Finding& f : findings) *c->add_findings() = f;
    }
  }
  AddFigures(fresh, refs, passes, out);
  return out;
}

int AcceptanceExitCode(const v1::Acceptance& acceptance) {
  for (const auto& node : acceptance.nodes()) {
    if (!node.accepted()) return kExitCritical;
  }
  // No pass, or one cut short: what was not measured accepts nobody.
  if (!acceptance.incomplete().empty() || acceptance.sweep_ids().empty()) return kExitUnknown;
  // A reference's own configuration findings are the fleet's state; its fabric findings make
  // the figures new nodes were judged against suspect, and a finding about no single node (a
  // path, a switch) is the fabric's.
  int code = kExitOk;
  for (const auto* list : {&acceptance.reference_findings(), &acceptance.other_findings()}) {
    for (const v1::Finding& f : *list) {
      if (list == &acceptance.reference_findings() && CheckOf(f.kind()) == "configuration")
        continue;
      code =
          std::max<int>(code, f.severity() == v1::SEVERITY_CRITICAL ? kExitCritical : kExitWarning);
    }
  }
  return code;
}

}  // namespace fabricctl::cli
