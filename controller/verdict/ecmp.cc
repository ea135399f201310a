#include "controller/verdict/ecmp.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/verdict/robust_stats.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

// At most this many members are named in one sweep (each found on what the others left).
constexpr size_t kMaxEcmpFaults = 16;

// The flows of one pair and direction, with each flow's figure against the best of them.
struct Group {
  uint32_t pair = 0;
  std::vector<uint32_t> flows;  // indices into in.flows
};

struct Flows {
  std::vector<Group> groups;
  std::vector<uint32_t> group_of;               // per flow; UINT32_MAX: not judged
  std::vector<double> r;                        // per flow: ln(flow / its group's best)
  std::vector<std::vector<std::string>> links;  // per flow: the links between its routers
  double sigma = kMinLogSpread;
};

// "a - b", the two routers in name order: a link, whichever way a flow crossed it.
std::string LinkName(const std::string& a, const std::string& b) {
  return a < b ? absl::StrCat(a, " - ", b) : absl::StrCat(b, " - ", a);
}

Flows Prepare(const AnalysisInput& in) {
  Flows f;
  const size_t n = in.flows.size();
  f.group_of.assign(n, UINT32_MAX);
  f.r.assign(n, 0);
  f.links.resize(n);
  std::map<std::pair<uint32_t, bool>, std::vector<uint32_t>> by;
  for (uint32_t i = 0; i < n; ++i) {
    const FlowInput& x = in.flows[i];
    if (x.pair >= in.pairs.size() || !(x.bw_gbps > 0) || !std::isfinite(x.bw_gbps)) continue;
    by[{x.pair, x.reverse}].push_back(i);
  }
  std::vector<double> all;
  for (auto& [key, members] : by) {
    if (members.size() < 2) continue;
    float best = 0;
    for (uint32_t i : members) best = std::max(best, in.flows[i].bw_gbps);
    for (uint32_t i : members) {
      f.group_of[i] = static_cast<uint32_t>(f.groups.size());
      f.r[i] = std::log(static_cast<double>(in.flows[i].bw_gbps) / best);
      all.push_back(f.r[i]);
      const std::vector<int32_t>& hops = in.flows[i].hops;
      for (size_t h = 0; h + 1 < hops.size(); ++h) {
        if (hops[h] < 0 || hops[h + 1] < 0) continue;
        f.links[i].push_back(LinkName(in.routers[hops[h]], in.routers[hops[h + 1]]));
      }
    }
    f.groups.push_back({key.first, std::move(members)});
  }
  if (!all.empty()) {
    f.sigma = std::max(GoodSideSpread(all, Median(all), /*higher_is_better=*/true), kMinLogSpread);
  }
  return f;
}

bool Crosses(const Flows& f, uint32_t flow, const std::string& link) {
  const auto& l = f.links[flow];
  return std::find(l.begin(), l.end(), link) != l.end();
}

// One link judged: its unexplained flows' differences from their pairs' other flows.
struct LinkCase {
  std::vector<uint32_t> flows;  // its unexplained flows that have a comparison
  std::vector<double> d;        // each one's difference, on the log scale
  uint32_t slow = 0, pairs = 0, senders = 0;
  double effect = 0;  // the median difference
  bool faulty = false;
};

LinkCase JudgeLink(const AnalysisInput& in, const Flows& f, const std::string& link,
                   const std::vector<uint32_t>& on, const std::vector<char>& explained,
                   double bar) {
  LinkCase c;
  const double small = std::log(1 - in.thresholds.min_effect());
  std::set<uint32_t> pairs, senders;
  for (uint32_t i : on) {
    if (explained[i]) continue;
    std::vector<double> off;
    for (uint32_t j : f.groups[f.group_of[i]].flows) {
      if (!explained[j] && !Crosses(f, j, link)) off.push_back(f.r[j]);
    }
    if (off.empty()) continue;
    const double d = f.r[i] - Median(off);
    c.flows.push_back(i);
    c.d.push_back(d);
    if (d <= small) {
      ++c.slow;
      pairs.insert(in.flows[i].pair);
      const PairInput& p = in.pairs[in.flows[i].pair];
      senders.insert(in.flows[i].reverse ? p.server : p.client);  // who measured and traced it
    }
  }
  if (c.d.empty()) return c;
  c.pairs = static_cast<uint32_t>(pairs.size());
  c.senders = static_cast<uint32_t>(senders.size());
  c.effect = Median(c.d);
  const double n = static_cast<double>(c.d.size());
  const double noise = kMedianError * f.sigma * std::sqrt(2.0 / n);
  c.faulty = c.pairs >= 2 && c.senders >= 2 && 4 * c.slow >= 3 * c.d.size() && c.effect <= small &&
             c.effect <= -bar * noise;
  return c;
}

// Adds `fault` for `pairs` to `paths`: the pairs point at it.
void Attach(PathFault fault, const std::set<uint32_t>& pairs, PathFaults& paths) {
  const auto index = static_cast<int32_t>(paths.faults.size());
  fault.pairs.assign(pairs.begin(), pairs.end());
  for (uint32_t p : pairs) paths.pair_fault[p] = index;
  paths.faults.push_back(std::move(fault));
}

// The traced members, greedily.
void TracedFaults(const AnalysisInput& in, const Flows& f, PathFaults& paths,
                  std::vector<char>& explained) {
  std::map<std::string, std::vector<uint32_t>> on;
  for (uint32_t i = 0; i < f.links.size(); ++i) {
    if (f.group_of[i] == UINT32_MAX) continue;
    for (const std::string& l : f.links[i]) on[l].push_back(i);
  }
  const double bar = ChanceBar(in.thresholds.max_robust_z(), std::max<size_t>(on.size(), 1));
  for (size_t round = 0; round < kMaxEcmpFaults; ++round) {
    std::string best;
    LinkCase best_case;
    for (const auto& [link, flows] : on) {
      LinkCase c = JudgeLink(in, f, link, flows, explained, bar);
      if (!c.faulty) continue;
      if (best.empty() || c.slow > best_case.slow ||
          (c.slow == best_case.slow && c.effect < best_case.effect)) {
        best = link;
        best_case = std::move(c);
      }
    }
    if (best.empty()) return;
    PathFault fault;
    fault.kind = PathFault::Kind::kEcmpLink;
    fault.level = in.levels.empty() ? "" : in.levels[0];
    // The links no flow tells from it: every unexplained flow that crosses one of the two and
    // not the other has a trace with a gap (which may hide that it crossed both).
    auto unexplained = [&](const std::vector<uint32_t>& flows) {
      std::set<uint32_t> out;
      for (uint32_t i : flows)
        if (!explained[i]) out.insert(i);
      return out;
    };
    const std::set<uint32_t> mine = unexplained(on.at(best));
    for (const auto& [link, flows] : on) {
      const std::set<uint32_t> theirs = unexplained(flows);
      std::vector<uint32_t> apart;
      std::set_symmetric_difference(mine.begin(), mine.end(), theirs.begin(), theirs.end(),
                                    std::back_inserter(apart));
      const bool alike =
          !theirs.empty() && std::none_of(apart.begin(), apart.end(),
                                          [&](uint32_t i) { return in.flows[i].complete; });
      if (link == best || alike) fault.links.push_back(link);
    }
    fault.slow_flows = best_case.slow;
    fault.flows = static_cast<uint32_t>(best_case.d.size());
    fault.flow_share = std::exp(best_case.effect);
    std::set<uint32_t> pairs;
    for (uint32_t i : best_case.flows) {
      explained[i] = 1;
      pairs.insert(in.flows[i].pair);
    }
    fault.measured = static_cast<uint32_t>(pairs.size());
    Attach(std::move(fault), pairs, paths);
  }
}

// Without traces: the paths between two groups whose pairs' flows disagree.
void UntracedFaults(const AnalysisInput& in, const Flows& f, PathFaults& paths,
                    const std::vector<char>& explained) {
  if (in.levels.empty()) return;
  const double small = std::log(1 - in.thresholds.min_effect());
  const double bar = ChanceBar(in.thresholds.max_robust_z(), std::max<size_t>(in.flows.size(), 1));
  struct Tally {
    uint32_t groups = 0, disagree = 0, slow_flows = 0, flows = 0;
    std::set<uint32_t> pairs, senders;
    std::vector<double> slow_r;
  };
  std::map<std::pair<std::string, std::string>, Tally> between;
  Tally within;
  for (const Group& g : f.groups) {
    const PairInput& p = in.pairs[g.pair];
    const std::string& a = in.nodes[p.client].place.empty() ? "" : in.nodes[p.client].place[0];
    const std::string& b = in.nodes[p.server].place.empty() ? "" : in.nodes[p.server].place[0];
    if (a.empty() || b.empty()) continue;
    bool traced = false;
    uint32_t slow = 0;
    std::vector<double> slow_r;
    for (uint32_t i : g.flows) {
      traced = traced || !f.links[i].empty() || explained[i];
      if (f.r[i] <= small && f.r[i] <= -bar * f.sigma) {
        ++slow;
        slow_r.push_back(f.r[i]);
      }
    }
    if (traced) continue;
    Tally& t = a == b ? within : between[std::minmax(a, b)];
    ++t.groups;
    t.flows += static_cast<uint32_t>(g.flows.size());
    if (slow == 0) continue;
    ++t.disagree;
    t.slow_flows += slow;
    t.pairs.insert(g.pair);
    t.senders.insert(in.flows[g.flows[0]].reverse ? p.server : p.client);
    t.slow_r.insert(t.slow_r.end(), slow_r.begin(), slow_r.end());
  }
  for (auto& [ends, t] : between) {
    const bool beyond_within =
        within.groups == 0 || t.disagree * within.groups >= 2 * within.disagree * t.groups;
    if (t.disagree < 2 || t.senders.size() < 2 || 2 * t.disagree < t.groups || !beyond_within)
      continue;
    PathFault fault;
    fault.kind = PathFault::Kind::kEcmpLink;
    fault.level = in.levels[0];
    fault.a = ends.first;
    fault.b = ends.second;
    fault.slow_flows = t.slow_flows;
    fault.flows = t.flows;
    fault.flow_share = std::exp(Median(t.slow_r));
    fault.measured = t.groups;
    Attach(std::move(fault), t.pairs, paths);
  }
}

// Drops the path faults left with fewer than two pairs, and renumbers what points at faults.
void DropExplainedPaths(PathFaults& paths, size_t first_ecmp) {
  std::vector<uint32_t> count(paths.faults.size(), 0);
  for (int32_t k : paths.pair_fault)
    if (k >= 0) ++count[k];
  std::vector<int32_t> renumber(paths.faults.size(), -1);
  std::vector<PathFault> kept;
  for (size_t k = 0; k < paths.faults.size(); ++k) {
    if (k < first_ecmp && count[k] < 2) continue;
    renumber[k] = static_cast<int32_t>(kept.size());
    PathFault& fault = paths.faults[k];
    if (k < first_ecmp) {  // its pairs: those still its own
      std::vector<uint32_t> own;
      for (uint32_t p : fault.pairs)
        if (paths.pair_fault[p] == static_cast<int32_t>(k)) own.push_back(p);
      fault.pairs = std::move(own);
    }
    kept.push_back(std::move(fault));
  }
  for (int32_t& k : paths.pair_fault)
    if (k >= 0) k = renumber[k];
  paths.faults = std::move(kept);
}

std::string Num(double v) { return absl::StrFormat("%.2f", v); }

}  // namespace

void AddEcmpFaults(const AnalysisInput& in, PathFaults& paths) {
  if (in.flows.empty()) return;
  const Flows f = Prepare(in);
  if (f.groups.empty()) return;
  const size_t first = paths.faults.size();
  std::vector<char> explained(in.flows.size(), 0);
  TracedFaults(in, f, paths, explained);
  UntracedFaults(in, f, paths, explained);
  if (paths.faults.size() > first) DropExplainedPaths(paths, first);
}

v1::Finding EcmpFinding(const AnalysisInput& in, const PathFault& f) {
  const bool traced = !f.links.empty();
  const std::string where =
      traced ? absl::StrJoin(f.links, " or ")
             : absl::StrCat("the paths between ", f.level, " ", f.a, " and ", f.level, " ", f.b);
  std::string detail = absl::StrFormat(
      "%s: %u of %u flows %s are slow, at a median %s of the same pairs' other flows (slow is "
      "%.0f %% below them and beyond the flows' noise), over %u pair(s): %s %s at fault, one "
      "member of the equal-cost paths, not the hosts. No host is blamed for these pairs",
      in.bandwidth_probe, f.slow_flows, f.flows,
      traced ? absl::StrCat("that crossed ", where) : absl::StrCat("between ", f.a, " and ", f.b),
      Num(f.flow_share), in.thresholds.min_effect() * 100, f.measured, where,
      traced ? (f.links.size() > 1 ? "(the flows measured cross each of these together) is" : "is")
             : "(the traces named no router: one of them) are");
  v1::Finding finding = report::Make(report::kind::kSlowEcmpLink, "", std::move(detail));
  finding.set_device(traced ? absl::StrJoin(f.links, ", ") : absl::StrCat(f.a, " <-> ", f.b));
  auto& e = *finding.mutable_evidence();
  if (traced) e["links"] = absl::StrJoin(f.links, ", ");
  if (!traced) {
    e["group"] = f.a;
    e["peer_group"] = f.b;
  }
  std::set<std::string> members;  // the pairs' ends: measured across it, not at line rate
  for (uint32_t p : f.pairs) {
    members.insert(in.nodes[in.pairs[p].client].name);
    members.insert(in.nodes[in.pairs[p].server].name);
  }
  e["members"] = absl::StrJoin(members, ",");
  e["slow_flows"] = absl::StrCat(f.slow_flows);
  e["flows"] = absl::StrCat(f.flows);
  e["flow_share"] = Num(f.flow_share);
  e["pairs"] = absl::StrCat(f.pairs.size());
  e["traced"] = traced ? "yes" : "no";
  return finding;
}

}  // namespace fabricctl::controller
