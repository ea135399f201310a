#include "controller/sweep/node_bandwidth.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "controller/sweep/rails.h"

namespace fabricctl::controller::sweep {
namespace {

// At most this many of the plan's rounds (each runs once per rail and once for all rails).
constexpr size_t kMaxRounds = 4;

// A direction of a pair: sender, receiver.
using Direction = std::pair<uint32_t, uint32_t>;

// Each direction's bandwidth on one rail.
std::map<Direction, float> FiguresOf(const RoundRunner& runner) {
  std::map<Direction, float> out;
  for (const auto& [key, run] : runner.pairs()) {
    if (!run.results.empty()) out[{run.client, run.server}] = HeadlineBw(run.results[0]);
    if (!run.reverse.empty()) out[{run.server, run.client}] = HeadlineBw(run.reverse[0]);
  }
  return out;
}

// The plan's first rounds, until every node has two peers (or kMaxRounds).
std::vector<Round> Rounds(const Plan& plan) {
  std::vector<Round> out;
  std::map<uint32_t, std::set<uint32_t>> peers;
  for (const Round& round : plan.rounds) {
    if (out.size() == kMaxRounds) break;
    bool enough = !out.empty();
    for (const auto& [node, theirs] : peers) enough = enough && theirs.size() >= 2;
    if (enough) break;
    out.push_back(round);
    for (const auto& [a, b] : round) {
      peers[a].insert(b);
      peers[b].insert(a);
    }
  }
  return out;
}

struct Sums {
  double gbps = 0;
  size_t rails = 0;
};

void Add(const std::map<Direction, float>& figures, std::map<Direction, Sums>& sums) {
  for (const auto& [direction, gbps] : figures) {
    if (std::isnan(gbps)) continue;
    sums[direction].gbps += gbps;
    ++sums[direction].rails;
  }
}

// Whether the node-bandwidth stage was asked (the request, else sweep.node_bandwidth), and where
// it was but cannot run (fewer than two rails to load at once, no bandwidth probe, no pairs),
// why.
struct NodeBandwidthPlan {
  bool asked = false;
  std::string why_not;
  bool runs() const { return asked && why_not.empty(); }
};

NodeBandwidthPlan PlanNodeBandwidth(const SweepContext& sweep) {
  NodeBandwidthPlan plan;
  plan.asked = sweep.request.has_node_bandwidth() ? sweep.request.node_bandwidth()
                                                  : sweep.config.sweep().node_bandwidth();
  if (!plan.asked) return plan;
  if (sweep.rails.size() < 2) {
    plan.why_not = absl::StrCat("node bandwidth not measured: ", sweep.rails.size(),
                                " rail(s); the stage loads two or more at once");
  } else if (sweep.specs.bw_index < 0) {
    plan.why_not = "node bandwidth not measured: the sweep runs no bandwidth probe";
  } else if (sweep.plan.rounds.empty()) {
    plan.why_not = "node bandwidth not measured: no pairs to measure";
  }
  return plan;
}

}  // namespace

std::string RunNodeBandwidth(AgentClient& agents, SweepContext& sweep,
                             const RoundSettings& settings) {
  const NodeBandwidthPlan plan = PlanNodeBandwidth(sweep);
  if (!plan.runs()) return plan.why_not;
  if (settings.stop != nullptr && settings.stop->load())
    return "node bandwidth not measured: the sweep was stopped";
  sweep.node_bandwidth = MeasureNodeBandwidth(agents, sweep, settings);
  const std::vector<NodeBandwidthPair>& pairs = sweep.node_bandwidth;
  const size_t rails = sweep.rails.size();
  if (pairs.empty()) return "node bandwidth: no pair measured on every rail, alone and at once";
  std::set<uint32_t> nodes;
  for (const NodeBandwidthPair& p : pairs) {
    nodes.insert(p.client);
    nodes.insert(p.server);
  }
  return absl::StrCat("node bandwidth: ", nodes.size(), " node(s) in ", pairs.size(),
                      " pair direction(s), each of ", rails, " rails alone and all at once");
}

std::vector<NodeBandwidthPair> MeasureNodeBandwidth(AgentClient& agents, SweepContext& sweep,
                                                    RoundSettings settings) {
  const std::vector<Round> rounds = Rounds(sweep.plan);
  std::vector<RailPlan> rails = sweep.rails;
  for (RailPlan& r : rails) r.specs = {r.specs[sweep.specs.bw_index]};
  settings.reverse = {true};  // both ways: a node may be short in what it sends or receives
  std::map<Direction, Sums> alone, together;
  for (const RailPlan& rail : rails) {  // each rail alone, one after another
    const std::vector<RailPlan> one = {rail};
    RailRunners runner(agents, sweep.fleet, one, settings);
    runner.RunAll(rounds, 1, "node bandwidth");
    Add(FiguresOf(runner.rail(0)), alone);
  }
  RailRunners all(agents, sweep.fleet, rails, settings);  // every rail at once
  all.RunAll(rounds, 1, "node bandwidth");
  for (size_t r = 0; r < rails.size(); ++r) Add(FiguresOf(all.rail(r)), together);
  std::vector<NodeBandwidthPair> out;
  for (const auto& [direction, a] : alone) {
    auto t = together.find(direction);
    // Only sums of the same rails: every rail measured alone and at once.
    if (t == together.end() || a.rails != rails.size() || t->second.rails != rails.size()) continue;
    out.push_back({direction.first, direction.second, a.gbps, t->second.gbps,
                   static_cast<uint32_t>(rails.size())});
  }
  return out;
}

}  // namespace fabricctl::controller::sweep
