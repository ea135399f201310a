#include "controller/verdict/analysis.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "controller/verdict/passes.h"
#include "controller/verdict/fleet_split.h"
#include "controller/verdict/blame.h"
#include "controller/verdict/paths.h"
#include "controller/verdict/retests.h"
#include "controller/verdict/robust_stats.h"

namespace fabricctl::controller {
namespace {

// The fabric's typical figure and spread from per-node figures: the median over nodes of each
// node's own middle figure (`upper`: bandwidth, higher is better, and the better of an even
// count's two middles), and the good side's spread of every figure around it.
Reference TypicalOf(std::vector<std::vector<float>>& by_node, bool upper, NodeMedians* medians) {
  Reference ref;
  std::vector<double> node_middles;
  std::vector<double> all;
  for (size_t i = 0; i < by_node.size(); ++i) {
    if (by_node[i].empty()) continue;
    all.insert(all.end(), by_node[i].begin(), by_node[i].end());
    const float middle = MiddleOf(by_node[i], upper);
    if (medians) (*medians)[i] = middle;
    node_middles.push_back(middle);
  }
  if (node_middles.empty()) return ref;
  ref.typical = Median(node_middles);
  ref.spread = GoodSideSpread(all, ref.typical, /*higher_is_better=*/upper);
  ref.valid = true;
  return ref;
}

// Re-test agreement per node (RetestTally::Agree): eligible for blame when its re-tested pairs
// stayed bad at least as often as they recovered, twice when it has two bad pairs or more (all
// nodes, when re-tests are not required).
std::vector<bool> Eligible(const AnalysisInput& in, const std::vector<char>& bad,
                           const std::vector<char>& measured) {
  const size_t n = in.nodes.size();
  if (!in.require_retest) return std::vector<bool>(n, true);
  const std::vector<RetestTally> tally =
      TallyRetests(in, [&](size_t p) { return measured[p] != 0; }, [&](size_t p) { return bad[p] != 0; });
  std::vector<bool> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = tally[i].Agree();
  return out;
}

// The spread of the fast side of bandwidth figures (or of their logarithms).
double FastSpread(const std::vector<double>& values, double center) {
  return GoodSideSpread(values, center, /*higher_is_better=*/true);
}

// Whether each node stands out from the others in what it sends or what it receives: the
// (upper) median of its figures on that side, on a log scale, more than max_robust_z robust
// spreads below the nodes' median of those medians. A straggler is an outlier: in a fleet whose
// nodes differ by degrees, the slowest of a continuum is not one, whatever its share of slow
// pairs. Faults only slow figures down, so the spread comes from the fast side (the medians at
// or above the center: a few slow nodes in a small fleet do not widen it), and is never taken
// below what a median of the node's k figures varies by anyway (kMedianError x the figures' own
// fast-side spread / sqrt k). Below an absolute floor (`floor`, 0: none) that the rest of the
// fabric meets, a node needs no more: the expectation says what slow is. In a split fleet whose
// slow group is half the nodes or more, the slow group's nodes are no outliers (only the floor
// judges them), and the others are judged among themselves, on their figures with each other.
std::vector<bool> OutlierNodes(const AnalysisInput& in, const Judged& j, const AnalysisResult& r,
                               double typical, double floor) {
  const v1::Thresholds& t = in.thresholds;
  const size_t n = in.nodes.size();
  const bool majority_split = j.MajoritySplit();
  auto relative = [&](uint32_t i) { return !(majority_split && j.split.slow[i]); };
  // A relative node's figure with a slow-group peer is the split's, not its own.
  auto counts = [&](uint32_t node, uint32_t peer) { return !relative(node) || relative(peer); };
  std::vector<std::vector<float>> sends(n), receives(n);
  for (size_t k = 0; k < in.pairs.size(); ++k) {
    const PairInput& p = in.pairs[k];
    if (p.status != PairStatus::kMeasured || r.pairs[k].path >= 0) continue;
    for (const auto& d : p.Directions()) {
      const float bw = d.figures.bw_gbps;
      if (std::isnan(bw) || bw <= 0) continue;
      if (counts(d.from, d.to)) sends[d.from].push_back(bw);
      if (counts(d.to, d.from)) receives[d.to].push_back(bw);
    }
  }
  // The figures' own spread on a log scale, fast side (each direction is one send).
  std::vector<double> figure_logs;
  for (const auto& figures : sends) {
    for (float x : figures) {
      if (typical > 0) figure_logs.push_back(std::log(x / typical));
    }
  }
  const double figure_spread = FastSpread(figure_logs, 0);
  const size_t min_peers = std::max<uint32_t>(1, t.min_node_pairs());
  std::vector<bool> out(n, false);
  for (auto* side : {&sends, &receives}) {
    std::vector<double> logs(n, std::nan(""));
    std::vector<double> known;
    for (size_t i = 0; i < n; ++i) {
      if ((*side)[i].size() < min_peers) continue;
      // The better middle of an even count, as for the typical figure: a healthy node measured
      // with two peers, one of them the straggler, is not half slow.
      logs[i] = std::log(MiddleOf((*side)[i], /*upper=*/true));
      if (relative(i)) known.push_back(logs[i]);
    }
    if (known.empty()) continue;
    // The better middle: one slow node of an even count must not pull the center down.
    std::vector<double> ordered = known;
    std::sort(ordered.begin(), ordered.end());
    const double center = ordered[ordered.size() / 2];
    const double node_spread = FastSpread(known, center);
    for (size_t i = 0; i < n; ++i) {
      if (std::isnan(logs[i])) continue;
      const double spread = std::max(
          node_spread, kMedianError * figure_spread / std::sqrt(static_cast<double>((*side)[i].size())));
      out[i] = out[i] ||
               (relative(i) && (spread > 0 ? (logs[i] - center) / spread < -t.max_robust_z() : logs[i] < center)) ||
               (floor > 0 && std::exp(logs[i]) < floor);
    }
  }
  return out;
}

}  // namespace

bool Reference::Below(double x, const v1::Thresholds& t) const {
  if (!valid || std::isnan(x)) return false;
  if (x < typical * t.relative_bw()) return true;
  const bool outlier = spread <= 0 || (x - typical) / spread < -t.max_robust_z();
  return x < typical * (1 - t.min_effect()) && outlier;
}

bool Reference::Above(double x, double relative, double max_z) const {
  if (!valid || std::isnan(x)) return false;
  const bool outlier = spread <= 0 || (x - typical) / spread > max_z;
  return x > typical * relative && outlier;
}

double Judged::LinkOutlierBelow() const {
  return bw.typical * std::exp(-bw_link_z * bw_log_spread);
}

bool Judged::TailHigh(double p99, double relative) const {
  if (!tail.valid || std::isnan(p99) || tail.typical <= 0 || p99 <= relative * tail.typical) return false;
  return tail_log_spread <= 0 || std::log(p99 / tail.typical) > tail_z * tail_log_spread;
}

bool Judged::LinkEvidence(double x) const {
  if (std::isnan(x)) return false;
  if (!bw_floor_missed && x < link_floor) return true;
  return x < LinkOutlierBelow();
}

namespace {

// The floor a single figure is held to: the expected rate's, unless the fabric as a whole
// misses it (then it tells no pair from another).
double EffectiveFloor(const Judged& j) { return j.bw_floor_missed ? 0 : j.link_floor; }

// A figure taken with at least this share of a full round's probes running counts as taken
// under full load (a round missing a pair or two is still full).
constexpr double kFullLoadShare = 0.8;

// The least concurrency a figure may have been taken at to count towards the yardstick:
// kFullLoadShare x the upper quartile of the known figures' concurrency (0: every figure counts). The sweep's
// rounds are planned full; a figure taken with fewer probes running (its round's other pairs
// failed at once, a re-test, a localisation round) is judged against the yardstick but does
// not set it where that matters: when the lighter figures are better than the loaded ones by
// more than min_effect (medians), the fabric or its hosts slow under load, and the lighter
// ones would raise the yardstick and make every full round's figure look slow. Where they are
// no better, load makes no difference and every figure counts (a fault is not hidden by the
// rounds it happened to fall in). The quartile, not the median: when many rounds lost a pair
// to a dead agent, the full rounds may be the fewer.
double LoadBar(const std::vector<std::pair<float, float>>& figures, bool higher_is_better, double min_effect) {
  std::vector<float> loads;
  for (const auto& [value, c] : figures) loads.push_back(c);
  if (loads.empty()) return 0;
  const size_t q = loads.size() * 3 / 4;
  std::nth_element(loads.begin(), loads.begin() + q, loads.end());
  const double bar = kFullLoadShare * loads[q];
  std::vector<double> light, loaded;
  for (const auto& [value, c] : figures) (c < bar ? light : loaded).push_back(value);
  if (light.empty() || loaded.empty()) return 0;
  const double l = Median(light), f = Median(loaded);
  const bool lighter_better = higher_is_better ? l > f * (1 + min_effect) : l * (1 + min_effect) < f;
  return lighter_better ? bar : 0;
}

// The load bars of the sweep's bandwidth figures and of its latency figures (LoadBar).
std::pair<double, double> FullLoads(const AnalysisInput& in, const AnalysisResult& out) {
  std::vector<std::pair<float, float>> bw, lat;
  for (size_t k = 0; k < in.pairs.size(); ++k) {
    const PairInput& p = in.pairs[k];
    if (p.status != PairStatus::kMeasured || out.pairs[k].path >= 0) continue;
    for (const auto& d : p.Directions()) {
      if (!std::isnan(d.figures.bw_gbps) && d.figures.concurrency > 0) bw.push_back({d.figures.bw_gbps, d.figures.concurrency});
    }
    if (!std::isnan(p.lat_us) && p.lat_concurrency > 0) lat.push_back({p.lat_us, p.lat_concurrency});
  }
  const double effect = in.thresholds.min_effect();
  return {LoadBar(bw, /*higher_is_better=*/true, effect), LoadBar(lat, /*higher_is_better=*/false, effect)};
}

// Every measured direction is a figure of both its ends: the fabric's typical bandwidth and
// latency (from the figures taken under full load), each node's median and its robust z
// against the others', the expected floors.
void TypicalFigures(const AnalysisInput& in, Judged& j, AnalysisResult& out) {
  const size_t n = in.nodes.size();
  const auto& t = in.thresholds;
  const double bw_load = j.bw_load, lat_load = j.lat_load;
  // With the fleet split in two, the typical figure is the fast group's among itself.
  std::vector<std::vector<float>> bw_by_node(n), fast_by_node(n), lat_by_node(n);
  double best_bw = 0, best_lat = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < in.pairs.size(); ++k) {
    const PairInput& p = in.pairs[k];
    if (p.status != PairStatus::kMeasured) continue;
    // A pair a switch-level fault explains says nothing of the fabric's typical figure.
    for (const auto& d : p.Directions()) {
      const float bw = d.figures.bw_gbps, c = d.figures.concurrency;
      if (std::isnan(bw) || out.pairs[k].path >= 0) continue;
      best_bw = std::max(best_bw, static_cast<double>(bw));
      if (c > 0 && c < bw_load) continue;  // a lighter load than the yardstick's
      bw_by_node[p.client].push_back(bw);
      bw_by_node[p.server].push_back(bw);
      if (j.split.found && !j.split.slow[p.client] && !j.split.slow[p.server]) {
        fast_by_node[p.client].push_back(bw);
        fast_by_node[p.server].push_back(bw);
      }
    }
    if (!std::isnan(p.lat_us) && p.lat_us > 0) {
      best_lat = std::min(best_lat, static_cast<double>(p.lat_us));
      if (p.lat_concurrency > 0 && p.lat_concurrency < lat_load) continue;
      lat_by_node[p.client].push_back(p.lat_us);
      lat_by_node[p.server].push_back(p.lat_us);
    }
  }
  NodeMedians medians(n, std::nanf(""));
  j.bw = TypicalOf(bw_by_node, /*upper=*/true, &medians);
  if (const Reference fast = TypicalOf(fast_by_node, /*upper=*/true, nullptr); fast.valid) j.bw = fast;
  j.lat = TypicalOf(lat_by_node, /*upper=*/false, nullptr);
  if (j.bw.valid) {
    out.best_bw_gbps = static_cast<float>(best_bw);
    out.median_bw_gbps = static_cast<float>(j.bw.typical);
  }
  if (std::isfinite(best_lat)) out.best_lat_us = static_cast<float>(best_lat);
  // The expected rate: the RDMA port's for RDMA probes, expect.tcp_bw_gbps for tcp_bw.
  const double expected = in.bandwidth_is_rdma ? in.expect.link_rate_gbps() : in.expect.tcp_bw_gbps();
  j.link_floor = expected > 0 ? expected * t.min_bw_efficiency() : 0;
  // An absolute floor the typical figure itself misses cannot tell one pair from another.
  j.bw_floor_missed = j.link_floor > 0 && j.bw.valid && j.bw.typical < j.link_floor;
  j.lat_ceiling_missed = t.max_lat_us() > 0 && j.lat.valid && j.lat.typical > t.max_lat_us();
  // Robust z of each node's median against the others'.
  std::vector<double> node_medians;
  for (float m : medians) {
    if (!std::isnan(m)) node_medians.push_back(m);
  }
  const double med = Median(node_medians);
  const double mad = node_medians.size() >= 3 ? ScaledMad(node_medians, med) : 0;
  for (size_t i = 0; i < n; ++i) {
    out.nodes[i].median_bw_gbps = medians[i];
    if (!std::isnan(medians[i]) && mad > 0) {
      out.nodes[i].robust_z = static_cast<float>((medians[i] - med) / mad);
    }
  }
}

// The fabric's latency tails (Judged::tail): the pairs' median p99, and their spread around it
// on a log scale. A tail is a property of the path, not of a node's median: the pairs' own
// median, which a few long tails cannot move, is the reference. Pairs a switch-level fault
// explains (a congested uplink lengthens their tails) are left out.
void TailFigures(const AnalysisInput& in, Judged& j, const AnalysisResult& out) {
  std::vector<double> tails;
  for (size_t k = 0; k < in.pairs.size(); ++k) {
    const PairInput& p = in.pairs[k];
    if (p.status == PairStatus::kMeasured && out.pairs[k].path < 0 && !std::isnan(p.lat_p99_us) && p.lat_p99_us > 0) {
      tails.push_back(p.lat_p99_us);
    }
  }
  if (tails.empty()) return;
  j.tail.typical = Median(tails);
  j.tail.valid = true;
  std::vector<double> logs;
  for (double x : tails) logs.push_back(std::log(x / j.tail.typical));
  // Tails scatter upwards more than down: the larger of the two-sided spread and the high side's.
  j.tail_log_spread = std::max(ScaledMad(logs, 0), GoodSideSpread(logs, 0, /*higher_is_better=*/true));
  j.tail_z = ChanceBar(in.thresholds.max_robust_z(), logs.size());
}

// Each pair, each direction: slow against the typical figure or the floor, high latency
// (its median, or its p99 against the fabric's tails) against the typical latency or the
// ceiling, dead.
void JudgePairs(const AnalysisInput& in, Judged& j, AnalysisResult& out) {
  const size_t np = in.pairs.size();
  const auto& t = in.thresholds;
  const double floor = EffectiveFloor(j);
  const double ceiling = j.lat_ceiling_missed ? 0 : t.max_lat_us();
  auto slow = [&](float bw) { return j.bw.Below(bw, t) || (!std::isnan(bw) && bw < floor); };
  j.bw_bad.assign(np, 0);
  j.lat_bad.assign(np, 0);
  j.dead.assign(np, 0);
  j.bw_measured.assign(np, 0);
  j.lat_measured.assign(np, 0);
  j.path_measured.assign(np, 0);
  for (size_t p = 0; p < np; ++p) {
    const PairInput& pair = in.pairs[p];
    PairResult& r = out.pairs[p];
    j.path_measured[p] = pair.status == PairStatus::kMeasured || pair.status == PairStatus::kUnreachable;
    j.dead[p] = pair.status == PairStatus::kUnreachable;
    r.unreachable = j.dead[p];
    if (pair.status != PairStatus::kMeasured) continue;
    r.forward.slow = slow(pair.forward.bw_gbps);
    r.reverse.slow = slow(pair.reverse.bw_gbps);
    j.bw_bad[p] = r.forward.slow || r.reverse.slow || r.path >= 0;
    r.slow = j.bw_bad[p];
    // A pair a switch-level fault explains is no evidence about its ends or its link.
    j.bw_measured[p] = r.path < 0 && (!std::isnan(pair.forward.bw_gbps) || !std::isnan(pair.reverse.bw_gbps));
    if (j.bw_measured[p] && j.bw.valid && j.bw.typical > 0) {
      r.relative_bw = static_cast<float>(pair.WorseBw() / j.bw.typical);
    }
    j.lat_measured[p] = !std::isnan(pair.lat_us) && pair.lat_us > 0;
    j.lat_bad[p] = j.lat_measured[p] && (j.lat.Above(pair.lat_us, t.relative_lat(), t.max_robust_z()) ||
                                         (ceiling > 0 && pair.lat_us > ceiling));
    r.high_tail = j.lat_measured[p] && r.path < 0 && j.TailHigh(pair.lat_p99_us, t.relative_lat());
    j.lat_bad[p] = j.lat_bad[p] || r.high_tail;
    r.high_latency = j.lat_bad[p];
  }
}

// Who is at fault: bandwidth by direction (outliers among the nodes only), latency and dead
// paths by pair.
void BlameNodes(const AnalysisInput& in, Judged& j, const AnalysisResult& out) {
  const size_t n = in.nodes.size();
  const auto& t = in.thresholds;
  std::vector<Observation> bw_obs, lat_obs, dead_obs;
  // In a majority split with no floor to judge its slow group by, nobody can be blamed for the
  // slow group's directions: they would only count against the fast nodes beside them.
  const bool split_speaks = j.MajoritySplit() && EffectiveFloor(j) <= 0;
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    const PairInput& pair = in.pairs[p];
    if (j.bw_measured[p] && !(split_speaks && j.InSlowGroup(pair.client, pair.server))) {
      if (!std::isnan(pair.forward.bw_gbps)) bw_obs.push_back({pair.client, pair.server, out.pairs[p].forward.slow, true});
      if (!std::isnan(pair.reverse.bw_gbps)) bw_obs.push_back({pair.server, pair.client, out.pairs[p].reverse.slow, true});
    }
    if (j.lat_measured[p]) lat_obs.push_back({pair.client, pair.server, static_cast<bool>(j.lat_bad[p]), false});
    if (j.path_measured[p]) dead_obs.push_back({pair.client, pair.server, static_cast<bool>(j.dead[p]), false});
  }
  const uint32_t min_peers = std::max<uint32_t>(1, t.min_node_pairs());
  std::vector<bool> bw_eligible = Eligible(in, j.bw_bad, j.bw_measured);
  const std::vector<bool> outliers = OutlierNodes(in, j, out, j.bw.valid ? j.bw.typical : 0, EffectiveFloor(j));
  for (size_t i = 0; i < n; ++i) bw_eligible[i] = bw_eligible[i] && outliers[i];
  j.bw_blamed = LocaliseNodes(n, bw_obs, min_peers, bw_eligible);
  j.lat_blamed = LocaliseNodes(n, lat_obs, min_peers, Eligible(in, j.lat_bad, j.lat_measured));
  j.dead_blamed = LocaliseNodes(n, dead_obs, min_peers, Eligible(in, j.dead, j.path_measured));
}

// The noise a single pair is judged against: the directions no blamed node explains, as the
// larger of the two-sided spread and the fast side's (re-tests raise only the low figures,
// the best attempt counting, which narrows the slow side of a noisy fabric).
void LinkSpread(const AnalysisInput& in, Judged& j) {
  std::vector<double> logs;
  for (size_t p = 0; p < in.pairs.size() && j.bw.valid && j.bw.typical > 0; ++p) {
    const PairInput& pair = in.pairs[p];
    if (!j.bw_measured[p]) continue;
    for (const auto& d : pair.Directions()) {
      const float bw = d.figures.bw_gbps;
      if (std::isnan(bw) || bw <= 0 || Explains(j.bw_blamed, {d.from, d.to, true, true}) ||
          j.InSlowGroup(d.from, d.to)) {
        continue;
      }
      logs.push_back(std::log(bw / j.bw.typical));
    }
  }
  if (!logs.empty()) j.bw_log_spread = std::max(ScaledMad(logs, 0), FastSpread(logs, 0));
  j.bw_link_z = ChanceBar(in.thresholds.max_robust_z(), logs.size());
}

// Attempts that disagree: a direction whose best figure is not slow while its worst is slow and
// evidence on its own (Judged::LinkEvidence: far below typical for one measurement); unstable
// when its second worst is too (it fell back after recovering, not one passing event). Pairs
// explained otherwise (a switch-level fault, a split fleet's slow group) are left out. A node
// unstable with more than half its re-tested peers is the one that flaps (LocaliseNodes).
// Loss makes TCP figures erratic: on a fabric that itself loses packets (its typical share of
// retransmitted segments at min_loss_rate or more), and on a lossy direction, attempts that
// disagree are the loss's doing (lossy_link says so), not a flap.
void JudgeStability(const AnalysisInput& in, Judged& j, AnalysisResult& out) {
  const auto& t = in.thresholds;
  const uint16_t needed = in.require_retest ? kUnstableAttempts : 2;
  j.stability_known.assign(in.pairs.size(), 0);
  const bool fabric_loses = j.loss_known && j.typical_loss >= t.min_loss_rate();
  std::vector<Observation> observations;
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    const PairInput& pair = in.pairs[p];
    PairResult& r = out.pairs[p];
    if (!j.bw_measured[p] || pair.attempts < 2 || j.InSlowGroup(pair.client, pair.server)) continue;
    auto low = [&](float x) {
      return !std::isnan(x) && j.bw.valid && x < j.bw.typical * (1 - t.min_effect()) && j.LinkEvidence(x);
    };
    // The best attempt fine by both tests: the attempts then truly disagree.
    const bool forward_fine = !r.forward.slow && !low(pair.forward.bw_gbps) && !r.forward.lossy && !fabric_loses;
    const bool reverse_fine = !r.reverse.slow && !low(pair.reverse.bw_gbps) && !r.reverse.lossy && !fabric_loses;
    r.disagrees = (forward_fine && low(pair.forward.worst_gbps)) || (reverse_fine && low(pair.reverse.worst_gbps));
    r.unstable = (forward_fine && low(pair.forward.next_worst_gbps)) || (reverse_fine && low(pair.reverse.next_worst_gbps));
    j.stability_known[p] = pair.attempts >= needed;
    if (j.stability_known[p]) {
      observations.push_back({pair.client, pair.server, r.unstable, false});
    }
  }
  j.unstable_blamed = LocaliseNodes(in.nodes.size(), observations, std::max<uint32_t>(1, t.min_node_pairs()),
                                    std::vector<bool>(in.nodes.size(), true));
}

}  // namespace

Judged Judge(const AnalysisInput& in, AnalysisResult& out) {
  Judged j;
  PathLocalisation paths = LocalisePaths(in);
  out.paths = std::move(paths.faults);
  std::vector<char> explained(in.pairs.size());
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    out.pairs[p].path = paths.pair_fault[p];
    explained[p] = paths.pair_fault[p] >= 0;
  }
  std::tie(j.bw_load, j.lat_load) = FullLoads(in, out);
  j.split = FindFleetSplit(in, explained, j.bw_load);
  TypicalFigures(in, j, out);
  TailFigures(in, j, out);
  JudgePairs(in, j, out);
  BlameNodes(in, j, out);
  LinkSpread(in, j);
  JudgeLoss(in, j, out);
  JudgeStability(in, j, out);
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    if (!j.path_measured[p]) continue;
    ++out.nodes[in.pairs[p].client].pairs;
    ++out.nodes[in.pairs[p].server].pairs;
  }
  for (size_t i = 0; i < in.nodes.size() && j.split.found; ++i) out.nodes[i].split_slow = j.split.slow[i];
  return j;
}

AnalysisResult Analyze(const AnalysisInput& in) {
  AnalysisResult out;
  out.nodes.resize(in.nodes.size());
  out.pairs.resize(in.pairs.size());
  const Judged judged = Judge(in, out);
  AddNodeFindings(in, judged, out);
  AddPairFindings(in, judged, out);
  AddLossFindings(in, judged, out);
  AddPathFindings(in, judged, out);
  AddFabricFindings(in, judged, out);
  return out;
}

}  // namespace fabricctl::controller
