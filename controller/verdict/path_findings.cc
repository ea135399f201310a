// The findings of switch-level faults: a path between two groups, a group's uplink, a group's
// switch. Each names the groups (and their members), the criterion and the pairs it explains.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/verdict/ecmp.h"
#include "controller/verdict/passes.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

// At most this many pairs are listed in a finding's text (all are counted).
constexpr size_t kListedPairs = 6;
// At most this many members' switch ports are listed in a finding's evidence.
constexpr size_t kListedPorts = 64;

std::string Num(double v) { return absl::StrFormat("%.2f", v); }

std::string Members(const AnalysisInput& in, const std::vector<uint32_t>& members) {
  std::vector<std::string> names;
  for (uint32_t i : members) names.push_back(in.nodes[i].name);
  return absl::StrJoin(names, ",");
}

// "leaf leaf-1" for a topology group, "the group node-1,node-2,node-3" for an inferred one.
std::string GroupName(const PathFault& f, const std::string& group) {
  return f.level.empty() ? absl::StrCat("the group ", group) : absl::StrCat(f.level, " ", group);
}

// The worse direction of a pair, as "a -> b 0.21 Gb/s".
std::string WorstDirection(const AnalysisInput& in, const PairInput& p) {
  const bool reverse = !std::isnan(p.reverse.bw_gbps) &&
                       (std::isnan(p.forward.bw_gbps) || p.reverse.bw_gbps < p.forward.bw_gbps);
  const uint32_t from = reverse ? p.server : p.client, to = reverse ? p.client : p.server;
  return absl::StrCat(in.nodes[from].name, " -> ", in.nodes[to].name, " ",
                      Num(reverse ? p.reverse.bw_gbps : p.forward.bw_gbps), " Gb/s");
}

std::string ListedPairs(const AnalysisInput& in, const PathFault& f) {
  std::vector<std::string> listed;
  for (size_t k = 0; k < f.pairs.size() && k < kListedPairs; ++k)
    listed.push_back(WorstDirection(in, in.pairs[f.pairs[k]]));
  std::string text = absl::StrJoin(listed, ", ");
  if (f.pairs.size() > kListedPairs)
    absl::StrAppend(&text, ", and ", f.pairs.size() - kListedPairs, " more");
  return text;
}

// What the fault is and what it is not, in words.
std::string What(const PathFault& f, const std::string& a, const std::string& b) {
  switch (f.kind) {
    case PathFault::Kind::kPath:
      return absl::StrCat(f.pairs.size(), " of ", f.measured, " measured pairs between ", a,
                          " and ", b,
                          " are slow while the pairs within each are fine: what joins them (",
                          f.level.empty() ? "a switch, an uplink or a cable between the groups"
                                          : "their uplinks or the switches between them",
                          ") is at fault, not the hosts");
    case PathFault::Kind::kUplink:
      return absl::StrCat(
          f.pairs.size(), " of ", f.measured, " measured pairs from ", a, " to other ", f.level,
          "s are slow, most of them to each of the others, "
          "while the pairs within it are fine: its uplink is at fault, not its hosts");
    case PathFault::Kind::kSwitch:
      return absl::StrCat(f.pairs.size(), " of ", f.measured, " measured pairs of ", a,
                          "'s nodes are slow, each node's mostly, to each other as well as to "
                          "other groups: the switch they share is at fault");
    case PathFault::Kind::kAbove:
      return absl::StrCat(f.pairs.size(), " of ", f.measured, " measured pairs between the ",
                          f.level, "s ", f.b, f.a.empty() ? "" : absl::StrCat(" (under ", f.a, ")"),
                          " are slow, every two of them mostly, while the pairs within each are "
                          "fine: the switches above them (the spine) are at fault, not the hosts");
    case PathFault::Kind::kEcmpLink:
      break;  // EcmpFinding
  }
  return "";
}

v1::Finding PathFinding(const AnalysisInput& in, const PathFault& f) {
  if (f.kind == PathFault::Kind::kEcmpLink) return EcmpFinding(in, f);
  const char* kind = f.kind == PathFault::Kind::kPath ? report::kind::kSlowPath
                     : f.kind == PathFault::Kind::kUplink
                         ? report::kind::kSlowUplink
                         : report::kind::kSlowSwitch;  // a switch or the ones above
  const std::string a = GroupName(f, f.a), b = GroupName(f, f.b);
  std::string detail = absl::StrFormat(
      "%s: %s (%s median %s Gb/s against %s Gb/s typical within %s; slow is %.0f %% below that "
      "and beyond %.1f robust deviations of it)%s: %s. No host is blamed for these pairs",
      in.bandwidth_probe, What(f, a, b), in.bandwidth_probe, Num(f.slow_median_gbps),
      Num(f.reference_gbps), f.level.empty() ? "a group" : absl::StrCat("a ", f.level),
      in.thresholds.min_effect() * 100, in.thresholds.max_robust_z(),
      f.stayed > 0 ? absl::StrCat(", ", f.stayed, " re-tested pair(s) stayed slow") : "",
      ListedPairs(in, f));
  if (f.level.empty())
    absl::StrAppend(&detail,
                    "; groups found from the figures: set topology.levels to name the switches");
  v1::Finding finding = report::Make(kind, "", std::move(detail));
  finding.set_device(f.kind == PathFault::Kind::kPath ? absl::StrCat(f.a, " <-> ", f.b)
                     : f.kind == PathFault::Kind::kAbove
                         ? (f.a.empty() ? absl::StrCat("above ", f.b) : f.a)
                         : f.a);
  auto& e = *finding.mutable_evidence();
  e["level"] = f.level.empty() ? "inferred" : f.level;
  e["group"] = f.a;
  e["members"] = Members(in, f.members_a);
  if (f.kind == PathFault::Kind::kPath) {
    e["peer_group"] = f.b;
    e["peer_members"] = Members(in, f.members_b);
  }
  // Where the members are cabled, for the person at the switch: "node-1 swp1, node-2 swp2".
  std::vector<std::string> ports;
  for (const auto* members : {&f.members_a, &f.members_b}) {
    for (uint32_t i : *members) {
      if (!in.nodes[i].switch_port.empty() && ports.size() < kListedPorts) {
        ports.push_back(absl::StrCat(in.nodes[i].name, " ", in.nodes[i].switch_port));
      }
    }
  }
  if (!ports.empty()) e["switch_ports"] = absl::StrJoin(ports, ", ");
  e["slow_pairs"] = absl::StrCat(f.pairs.size());
  e["measured_pairs"] = absl::StrCat(f.measured);
  e["slow_median_gbps"] = Num(f.slow_median_gbps);
  e["typical_within_gbps"] = Num(f.reference_gbps);
  return finding;
}

}  // namespace

void AddPathFindings(const AnalysisInput& in, const Judged& /*j*/, AnalysisResult& out) {
  for (const PathFault& f : out.paths) out.findings.push_back(PathFinding(in, f));
}

}  // namespace fabricctl::controller
