#include "controller/verdict/fleet_split.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace fabricctl::controller {
namespace {

// Each node's second-best figure, NaN for a node with fewer than `min_figures`: its two best
// kept as the figures go by (a 4,096-node full sweep has 33 M figure ends; none is stored).
std::vector<double> Reaches(const AnalysisInput& in, const std::vector<char>& excluded,
                            size_t min_figures, double load_bar) {
  const float none = -std::numeric_limits<float>::infinity();
  std::vector<std::pair<float, float>> best(in.nodes.size(), {none, none});
  std::vector<size_t> count(in.nodes.size(), 0);
  auto add = [&](uint32_t node, float bw) {
    auto& [first, second] = best[node];
    if (bw > first) {
      second = first;
      first = bw;
    } else if (bw > second) {
      second = bw;
    }
    ++count[node];
  };
  for (size_t k = 0; k < in.pairs.size(); ++k) {
    const PairInput& p = in.pairs[k];
    if (p.status != PairStatus::kMeasured || excluded[k]) continue;
    for (const auto& d : p.Directions()) {
      const float bw = d.figures.bw_gbps, c = d.figures.concurrency;
      if (std::isnan(bw) || bw <= 0 || (c > 0 && c < load_bar)) continue;
      add(p.client, bw);
      add(p.server, bw);
    }
  }
  std::vector<double> reach(in.nodes.size(), std::nan(""));
  for (size_t i = 0; i < best.size(); ++i) {
    if (count[i] >= std::max<size_t>(2, min_figures)) reach[i] = best[i].second;
  }
  return reach;
}

// ScaledMad of `values` around their median; 0 for none.
double SpreadOf(const std::vector<double>& values) {
  return values.empty() ? 0 : ScaledMad(values, Median(values));
}

// The noise of the figures within each group (pairs with both ends in it), on a log scale: the
// larger of the two groups' spreads. A group's reaches alone would understate it (cut at their
// widest gap, each side is narrow by construction). NaN when no pair lies within a group.
double NoiseWithin(const AnalysisInput& in, const std::vector<char>& excluded,
                   const std::vector<char>& slow, double load_bar) {
  std::vector<double> logs[2];
  size_t pairs[2] = {0, 0};
  for (size_t k = 0; k < in.pairs.size(); ++k) {
    const PairInput& p = in.pairs[k];
    if (p.status != PairStatus::kMeasured || excluded[k] || slow[p.client] != slow[p.server])
      continue;
    const int group = slow[p.client] ? 1 : 0;
    const size_t before = logs[group].size();
    for (const auto& d : p.Directions()) {
      const float bw = d.figures.bw_gbps, c = d.figures.concurrency;
      if (!std::isnan(bw) && bw > 0 && !(c > 0 && c < load_bar))
        logs[group].push_back(std::log(bw));
    }
    pairs[group] += logs[group].size() > before;
  }
  // One pair's two directions are no estimate of a group's noise (they move together).
  if (pairs[0] < 2 || pairs[1] < 2) return std::nan("");
  return std::max(SpreadOf(logs[0]), SpreadOf(logs[1]));
}

}  // namespace

FleetSplit FindFleetSplit(const AnalysisInput& in, const std::vector<char>& excluded,
                          double load_bar) {
  FleetSplit split;
  split.slow.assign(in.nodes.size(), 0);
  const v1::Thresholds& t = in.thresholds;
  // Two figures per peer (both directions): a node needs min_node_pairs peers' worth.
  const std::vector<double> reach =
      Reaches(in, excluded, 2 * std::max<uint32_t>(1, t.min_node_pairs()), load_bar);
  std::vector<std::pair<double, uint32_t>> logs;  // ln(reach), node
  for (uint32_t i = 0; i < reach.size(); ++i) {
    if (!std::isnan(reach[i])) logs.emplace_back(std::log(reach[i]), i);
  }
  if (logs.size() < 4) return split;
  std::sort(logs.begin(), logs.end());
  size_t cut = 0;
  double gap = 0;
  split.judged = logs.size();
  for (size_t c = 2; c + 2 <= logs.size(); ++c) {
    // The fast group is no small minority: at least as large as the slow one, or a third of
    // the nodes (two faster hosts among many healthy ones are not the fleet's yardstick).
    const size_t fast = logs.size() - c;
    if (3 * fast < std::min(3 * c, logs.size())) continue;
    if (logs[c].first - logs[c - 1].first > gap) gap = logs[c].first - logs[c - 1].first, cut = c;
  }
  if (cut == 0) return split;
  std::vector<char> slow(in.nodes.size(), 0);
  std::vector<double> low, high;
  for (size_t k = 0; k < logs.size(); ++k) {
    (k < cut ? low : high).push_back(logs[k].first);
    slow[logs[k].second] = k < cut;
  }
  const double noise = NoiseWithin(in, excluded, slow, load_bar);
  const bool large = gap > -std::log(1 - t.min_effect());
  // A slow group below relative_bw of the fast one needs no estimate of the noise (as rule 2's
  // relative floor); a smaller gap must be beyond the noise measured within the groups.
  const bool decisive = gap > -std::log(t.relative_bw());
  const bool beyond_noise =
      decisive || (!std::isnan(noise) && (noise <= 0 || gap > t.max_robust_z() * noise));
  if (!large || !beyond_noise) return split;
  split.found = true;
  split.slow = std::move(slow);
  split.fast_reach_gbps = std::exp(Median(high));
  split.slow_reach_gbps = std::exp(Median(low));
  return split;
}

}  // namespace fabricctl::controller
