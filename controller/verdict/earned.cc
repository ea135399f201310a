#include "controller/verdict/earned.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

bool IsPairKind(v1::ProbeKind k) { return k >= v1::RDMA_WRITE_BW && k <= v1::TCP_LAT; }
bool IsBandwidthKind(v1::ProbeKind k) {
  return k == v1::RDMA_WRITE_BW || k == v1::RDMA_SEND_BW || k == v1::RDMA_READ_BW ||
         k == v1::TCP_BW;
}

// node -> rail -> pair kind -> the distinct peers it measured the node with, its pair judged.
using Coverage =
    std::map<std::string, std::map<std::string, std::map<v1::ProbeKind, std::set<std::string>>>>;

Coverage Measured(const v1::Report& report) {
  Coverage out;
  for (const v1::PairHealth& pair : report.health().pairs()) {
    if (pair.status() == v1::HEALTH_UNKNOWN || pair.status() == v1::HEALTH_STATUS_UNSPECIFIED)
      continue;  // not judged
    for (const v1::ProbeResult& r : pair.results()) {
      if (!IsPairKind(r.kind()) || r.outcome() != v1::PROBE_OK) continue;
      if (r.node().empty() || r.peer().empty() || r.node() == r.peer()) continue;
      const std::string& rail = r.rail().empty() ? pair.rail() : r.rail();
      out[r.node()][rail][r.kind()].insert(r.peer());
      out[r.peer()][rail][r.kind()].insert(r.node());
    }
  }
  return out;
}

// The judged nodes: those with a verdict (an unreachable one has none).
std::vector<std::string> Judged(const v1::Report& report) {
  std::vector<std::string> judged;
  for (const auto& node : report.health().nodes()) {
    if (node.status() != v1::HEALTH_UNKNOWN && node.status() != v1::HEALTH_STATUS_UNSPECIFIED)
      judged.push_back(node.node());
  }
  return judged;
}

// What one finding is, for telling the fleet's standing state: its kind, device and audit.
std::string What(const v1::Finding& f) {
  auto audit = f.evidence().find("audit");
  return absl::StrCat(f.kind(), "|", f.device(), "|",
                      audit == f.evidence().end() ? "" : audit->second);
}

// node -> the kinds of the warning or critical findings that concern it, but for the fleet's
// standing state: a configuration warning (not asking for a drain) that every judged node
// carries alike (the same kind on the same device, of the same audit), where at least
// kMinFleetForState nodes were judged.
std::map<std::string, std::set<std::string>> Concerned(const v1::Report& report) {
  const std::vector<std::string> judged = Judged(report);
  std::map<std::string, std::set<std::string>> carried;  // configuration warning -> nodes
  for (const v1::Finding& f : report.findings()) {
    if (!f.node().empty() && f.severity() == v1::SEVERITY_WARNING &&
        f.action() != v1::ACTION_DRAIN && report::IsConfigurationKind(f.kind())) {
      carried[What(f)].insert(f.node());
    }
  }
  std::map<std::string, std::set<std::string>> out;
  for (const v1::Finding& f : report.findings()) {
    auto c = carried.find(What(f));
    const bool fleet_state = judged.size() >= kMinFleetForState && c != carried.end() &&
                             c->second.size() >= judged.size();
    if (fleet_state) continue;
    for (const std::string& node : report::ConcernedNodes(f, judged)) out[node].insert(f.kind());
  }
  return out;
}

// The node's pass from its coverage: every rail it is on covered by some pair kind with
// min_peers peers, and the kinds covered on every one of them.
v1::NodePass Covered(
    const v1::NodeHealth& node,
    const std::map<std::string, std::map<v1::ProbeKind, std::set<std::string>>>& rails,
    uint32_t min_peers) {
  v1::NodePass pass;
  std::set<std::string> required;
  for (const v1::RailState& r : node.rails()) {
    if (r.missing().empty()) required.insert(r.rail());
  }
  if (required.empty()) {
    for (const auto& [rail, kinds] : rails) required.insert(rail);
  }
  if (required.empty() || rails.empty()) {
    pass.set_why_not("no pair probe measured it");
    return pass;
  }
  std::set<v1::ProbeKind> everywhere;
  bool first = true;
  std::vector<std::string> short_of;
  for (const std::string& rail : required) {
    v1::RailPass* rp = pass.add_rails();
    rp->set_rail(rail);
    auto it = rails.find(rail);
    std::set<v1::ProbeKind> here;
    uint32_t fewest = 0, most = 0;
    if (it != rails.end()) {
      for (const auto& [kind, peers] : it->second) {
        const auto n = static_cast<uint32_t>(peers.size());
        most = std::max(most, n);
        if (n < min_peers) continue;
        here.insert(kind);
        rp->add_probes(kind);
        fewest = fewest == 0 ? n : std::min(fewest, n);
      }
    }
    rp->set_peers(here.empty() ? most : fewest);
    if (here.empty()) {
      short_of.push_back(absl::StrCat(rail.empty() ? "" : absl::StrCat("on ", rail, " "), "with ",
                                      most, " peer", most == 1 ? "" : "s"));
    }
    if (first) {
      everywhere = here;
      first = false;
    } else {
      std::set<v1::ProbeKind> both;
      for (v1::ProbeKind k : here) {
        if (everywhere.count(k) > 0) both.insert(k);
      }
      everywhere = std::move(both);
    }
  }
  for (v1::ProbeKind k : everywhere) pass.add_probes(k);
  if (!short_of.empty()) {
    pass.set_why_not(absl::StrCat("measured ", absl::StrJoin(short_of, ", "),
                                  ", fewer than known_good.min_peers (", min_peers, ")"));
  } else if (everywhere.empty()) {
    pass.set_why_not("no pair probe measured it with enough peers on every one of its rails");
  }
  return pass;
}

}  // namespace

void EarnPasses(uint32_t min_peers, v1::Report* report) {
  min_peers = std::max<uint32_t>(min_peers, 1);
  const Coverage measured = Measured(*report);
  const auto concerned = Concerned(*report);
  static const std::map<std::string, std::map<v1::ProbeKind, std::set<std::string>>> kNone;
  const auto& kinds = report->sweep().probes();
  auto bw = std::find_if(kinds.begin(), kinds.end(),
                         [](int k) { return IsBandwidthKind(static_cast<v1::ProbeKind>(k)); });
  const v1::ProbeKind bw_kind =
      bw == kinds.end() ? v1::PROBE_KIND_UNSPECIFIED : static_cast<v1::ProbeKind>(*bw);
  const v1::ProbeKind* bandwidth = bw == kinds.end() ? nullptr : &bw_kind;
  for (v1::NodeHealth& node : *report->mutable_health()->mutable_nodes()) {
    auto m = measured.find(node.node());
    v1::NodePass pass = Covered(node, m == measured.end() ? kNone : m->second, min_peers);
    auto c = concerned.find(node.node());
    if (c != concerned.end() && !c->second.empty()) {
      pass.set_ends(true);
      pass.set_why_not(absl::StrCat(absl::StrJoin(c->second, ", "), " concern",
                                    c->second.size() == 1 ? "s" : "", " it"));
    } else if (node.status() == v1::HEALTH_UNKNOWN ||
               node.status() == v1::HEALTH_STATUS_UNSPECIFIED) {
      pass.set_why_not("no verdict on it");
    } else if (node.status() == v1::HEALTH_CRITICAL) {
      // A critical node with no finding naming it still earns nothing: the verdict said so.
      pass.set_ends(true);
      pass.set_why_not("its verdict is critical");
    }
    pass.set_earned(pass.why_not().empty());
    if (!pass.earned()) pass.clear_probes();
    if (pass.earned() && bandwidth != nullptr) pass.set_bandwidth_probe(*bandwidth);
    *node.mutable_pass() = std::move(pass);
  }
}

bool PassCovers(const v1::NodePass& pass, const std::vector<v1::ProbeKind>& probes,
                const std::vector<std::string>& rails) {
  for (v1::ProbeKind k : probes) {
    if (IsPairKind(k) &&
        std::find(pass.probes().begin(), pass.probes().end(), k) == pass.probes().end())
      return false;
  }
  for (const std::string& rail : rails) {
    if (rail.empty()) continue;
    const bool has = std::any_of(pass.rails().begin(), pass.rails().end(),
                                 [&](const v1::RailPass& r) { return r.rail() == rail; });
    if (!has) return false;
  }
  return true;
}

}  // namespace fabricctl::controller
