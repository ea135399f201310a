#include "controller/verdict/analysis.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "controller/verdict/blame.h"
#include "controller/verdict/ecmp.h"
#include "controller/verdict/fleet_split.h"
#include "controller/verdict/passes.h"
#include "controller/verdict/paths.h"
#include "controller/verdict/retests.h"
#include "controller/verdict/robust_stats.h"

namespace fabricctl::controller {
namespace {

// The fabric's typical figure and spread from per-node figures: the median over nodes of each
// node's own middle figure (`upper`: bandwidth, higher is better, and the better of an even
// count's two middles), and the good side's spread of every figure around it.
Reference TypicalOf(std::vector<std::vector<float>>& by_node, bool upper,
                    std::vector<float>* medians) {
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
  const std::vector<RetestTally> tally = TallyRetests(
      in, [&](size_t p) { return measured[p] != 0; }, [&](size_t p) { return bad[p] != 0; });
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
std::vector<bool> OutlierNodes(const AnalysisInput& in, const PathFaults& paths,
                               const FleetSplit& split, double typical, double floor) {
  const v1::Thresholds& t = in.thresholds;
  const size_t n = in.nodes.size();
  const bool majority_split =
      split.found &&
      2 * static_cast<size_t>(std::count(split.slow.begin(), split.slow.end(), 1)) >= split.judged;
  auto relative = [&](uint32_t i) { return !(majority_split && split.slow[i]); };
  // A relative node's figure with a slow-group peer is the split's, not its own.
  auto counts = [&](uint32_t node, uint32_t peer) { return !relative(node) || relative(peer); };
  std::vector<std::vector<float>> sends(n), receives(n);
  for (size_t k = 0; k < in.pairs.size(); ++k) {
    const PairInput& p = in.pairs[k];
    if (p.status != PairStatus::kMeasured || paths.pair_fault[k] >= 0) continue;
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
      const double spread =
          std::max(node_spread, kMedianError * figure_spread /
                                    std::sqrt(static_cast<double>((*side)[i].size())));
      out[i] = out[i] ||
               (relative(i) && (spread > 0 ? (logs[i] - center) / spread < -t.max_robust_z()
                                           : logs[i] < center)) ||
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

double LinkNoise::OutlierBelow(double typical) const { return typical * std::exp(-z * log_spread); }

bool Tails::High(double p99, double relative) const {
  if (!reference.valid || std::isnan(p99) || reference.typical <= 0 ||
      p99 <= relative * reference.typical) {
    return false;
  }
  return log_spread <= 0 || std::log(p99 / reference.typical) > z * log_spread;
}

bool Judged::LinkEvidence(double x) const {
  if (std::isnan(x)) return false;
  if (!typical.bw_floor_missed && x < typical.link_floor) return true;
  return x < LinkOutlierBelow();
}

namespace {

// The least concurrency a figure may have been taken at to count towards the yardstick:
// kFullLoadShare x the upper quartile of the known figures' concurrency (0: every figure counts).
// The sweep's rounds are planned full; a figure taken with fewer probes running (its round's other
// pairs failed at once, a re-test, a localisation round) is judged against the yardstick but does
// not set it where that matters: when the lighter figures are better than the loaded ones by
// more than min_effect (medians), the fabric or its hosts slow under load, and the lighter
// ones would raise the yardstick and make every full round's figure look slow. Where they are
// no better, load makes no difference and every figure counts (a fault is not hidden by the
// rounds it happened to fall in). The quartile, not the median: when many rounds lost a pair
// to a dead agent, the full rounds may be the fewer.
double LoadBar(const std::vector<std::pair<float, float>>& figures, bool higher_is_better,
               double min_effect) {
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
  const bool lighter_better =
      higher_is_better ? l > f * (1 + min_effect) : l * (1 + min_effect) < f;
  return lighter_better ? bar : 0;
}

}  // namespace

// The load bars of the sweep's bandwidth figures and of its latency figures (LoadBar).
Loads FullLoads(const AnalysisInput& in, const PathFaults& paths) {
  std::vector<std::pair<float, float>> bw, lat;
  for (size_t k = 0; k < in.pairs.size(); ++k) {
    const PairInput& p = in.pairs[k];
    if (p.status != PairStatus::kMeasured || paths.pair_fault[k] >= 0) continue;
    for (const auto& d : p.Directions()) {
      if (!std::isnan(d.figures.bw_gbps) && d.figures.concurrency > 0)
        bw.push_back({d.figures.bw_gbps, d.figures.concurrency});
    }
    if (!std::isnan(p.lat_us) && p.lat_concurrency > 0)
      lat.push_back({p.lat_us, p.lat_concurrency});
  }
  const double effect = in.thresholds.min_effect();
  return Loads{LoadBar(bw, /*higher_is_better=*/true, effect),
               LoadBar(lat, /*higher_is_better=*/false, effect)};
}

// Every measured direction is a figure of both its ends: the fabric's typical bandwidth and
// latency (from the figures taken under full load), each node's median and its robust z
// against the others', the expected floors.
Typical TypicalFigures(const AnalysisInput& in, const PathFaults& paths, const Loads& loads,
                       const FleetSplit& split) {
  const size_t n = in.nodes.size();
  const auto& t = in.thresholds;
  Typical typical;
  // With the fleet split in two, the typical figure is the fast group's among itself.
  std::vector<std::vector<float>> bw_by_node(n), fast_by_node(n), lat_by_node(n);
  double best_bw = 0, best_lat = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < in.pairs.size(); ++k) {
    const PairInput& p = in.pairs[k];
    if (p.status != PairStatus::kMeasured) continue;
    // A pair a switch-level fault explains says nothing of the fabric's typical figure.
    for (const auto& d : p.Directions()) {
      const float bw = d.figures.bw_gbps, c = d.figures.concurrency;
      if (std::isnan(bw) || paths.pair_fault[k] >= 0) continue;
      best_bw = std::max(best_bw, static_cast<double>(bw));
      if (c > 0 && c < loads.bw) continue;  // a lighter load than the yardstick's
      bw_by_node[p.client].push_back(bw);
      bw_by_node[p.server].push_back(bw);
      if (split.found && !split.slow[p.client] && !split.slow[p.server]) {
        fast_by_node[p.client].push_back(bw);
        fast_by_node[p.server].push_back(bw);
      }
    }
    if (!std::isnan(p.lat_us) && p.lat_us > 0) {
      best_lat = std::min(best_lat, static_cast<double>(p.lat_us));
      if (p.lat_concurrency > 0 && p.lat_concurrency < loads.lat) continue;
      lat_by_node[p.client].push_back(p.lat_us);
      lat_by_node[p.server].push_back(p.lat_us);
    }
  }
  typical.node_median.assign(n, std::nanf(""));
  typical.node_z.assign(n, std::nanf(""));
  typical.bw = TypicalOf(bw_by_node, /*upper=*/true, &typical.node_median);
  if (const Reference fast = TypicalOf(fast_by_node, /*upper=*/true, nullptr); fast.valid)
    typical.bw = fast;
  typical.lat = TypicalOf(lat_by_node, /*upper=*/false, nullptr);
  if (typical.bw.valid) typical.best_bw = static_cast<float>(best_bw);
  if (std::isfinite(best_lat)) typical.best_lat = static_cast<float>(best_lat);
  // The expected rate: the RDMA port's for RDMA probes, expect.tcp_bw_gbps for tcp_bw.
  const double expected =
      in.bandwidth_is_rdma ? in.expect.link_rate_gbps() : in.expect.tcp_bw_gbps();
  typical.link_floor = expected > 0 ? expected * t.min_bw_efficiency() : 0;
  // An absolute floor the typical figure itself misses cannot tell one pair from another.
  typical.bw_floor_missed =
      typical.link_floor > 0 && typical.bw.valid && typical.bw.typical < typical.link_floor;
  typical.lat_ceiling_missed =
      t.max_lat_us() > 0 && typical.lat.valid && typical.lat.typical > t.max_lat_us();
  // Robust z of each node's median against the others'.
  std::vector<double> node_medians;
  for (float m : typical.node_median) {
    if (!std::isnan(m)) node_medians.push_back(m);
  }
  const double med = Median(node_medians);
  const double mad = node_medians.size() >= 3 ? ScaledMad(node_medians, med) : 0;
  for (size_t i = 0; i < n; ++i) {
    const float m = typical.node_median[i];
    if (!std::isnan(m) && mad > 0) typical.node_z[i] = static_cast<float>((m - med) / mad);
  }
  return typical;
}

// The fabric's latency tails: the pairs' median p99, and their spread around it on a log scale.
// A tail is a property of the path, not of a node's median: the pairs' own median, which a few
// long tails cannot move, is the reference. Pairs a switch-level fault explains (a congested
// uplink lengthens their tails) are left out.
Tails TailFigures(const AnalysisInput& in, const PathFaults& paths) {
  Tails out;
  std::vector<double> tails;
  for (size_t k = 0; k < in.pairs.size(); ++k) {
    const PairInput& p = in.pairs[k];
    if (p.status == PairStatus::kMeasured && paths.pair_fault[k] < 0 && !std::isnan(p.lat_p99_us) &&
        p.lat_p99_us > 0) {
      tails.push_back(p.lat_p99_us);
    }
  }
  if (tails.empty()) return out;
  out.reference.typical = Median(tails);
  out.reference.valid = true;
  std::vector<double> logs;
  for (double x : tails) logs.push_back(std::log(x / out.reference.typical));
  // Tails scatter upwards more than down: the larger of the two-sided spread and the high side's.
  out.log_spread = std::max(ScaledMad(logs, 0), GoodSideSpread(logs, 0, /*higher_is_better=*/true));
  out.z = ChanceBar(in.thresholds.max_robust_z(), logs.size());
  return out;
}

// Each pair, each direction: slow against the typical figure or the floor, high latency
// (its median, or its p99 against the fabric's tails) against the typical latency or the
// ceiling, dead.
PairFlags JudgePairs(const AnalysisInput& in, const PathFaults& paths, const Typical& typical,
                     const Tails& tails) {
  const size_t np = in.pairs.size();
  const auto& t = in.thresholds;
  const double floor = typical.EffectiveFloor();
  const double ceiling = typical.lat_ceiling_missed ? 0 : t.max_lat_us();
  auto slow = [&](float bw) { return typical.bw.Below(bw, t) || (!std::isnan(bw) && bw < floor); };
  PairFlags f;
  f.pairs.assign(np, PairResult());
  f.bw_bad.assign(np, 0);
  f.lat_bad.assign(np, 0);
  f.dead.assign(np, 0);
  f.bw_measured.assign(np, 0);
  f.lat_measured.assign(np, 0);
  f.path_measured.assign(np, 0);
  for (size_t p = 0; p < np; ++p) {
    const PairInput& pair = in.pairs[p];
    PairResult& r = f.pairs[p];
    r.path = paths.pair_fault[p];
    f.path_measured[p] =
        pair.status == PairStatus::kMeasured || pair.status == PairStatus::kUnreachable;
    f.dead[p] = pair.status == PairStatus::kUnreachable;
    r.unreachable = f.dead[p];
    if (pair.status != PairStatus::kMeasured) continue;
    r.forward.slow = slow(pair.forward.bw_gbps);
    r.reverse.slow = slow(pair.reverse.bw_gbps);
    f.bw_bad[p] = r.forward.slow || r.reverse.slow || r.path >= 0;
    r.slow = f.bw_bad[p];
    // A pair a switch-level fault explains is no evidence about its ends or its link.
    f.bw_measured[p] =
        r.path < 0 && (!std::isnan(pair.forward.bw_gbps) || !std::isnan(pair.reverse.bw_gbps));
    if (f.bw_measured[p] && typical.bw.valid && typical.bw.typical > 0) {
      r.relative_bw = static_cast<float>(pair.WorseBw() / typical.bw.typical);
    }
    f.lat_measured[p] = !std::isnan(pair.lat_us) && pair.lat_us > 0;
    f.lat_bad[p] =
        f.lat_measured[p] && (typical.lat.Above(pair.lat_us, t.relative_lat(), t.max_robust_z()) ||
                              (ceiling > 0 && pair.lat_us > ceiling));
    r.high_tail = f.lat_measured[p] && r.path < 0 && tails.High(pair.lat_p99_us, t.relative_lat());
    f.lat_bad[p] = f.lat_bad[p] || r.high_tail;
    r.high_latency = f.lat_bad[p];
  }
  return f;
}

// Who is at fault: bandwidth by direction (outliers among the nodes only), latency and dead
// paths by pair.
NodeBlame BlameNodes(const AnalysisInput& in, const PathFaults& paths, const FleetSplit& split,
                     const Typical& typical, const PairFlags& f) {
  const size_t n = in.nodes.size();
  const auto& t = in.thresholds;
  std::vector<Observation> bw_obs, lat_obs, dead_obs;
  const bool majority_split =
      split.found &&
      2 * static_cast<size_t>(std::count(split.slow.begin(), split.slow.end(), 1)) >= split.judged;
  auto in_slow_group = [&](uint32_t a, uint32_t b) {
    return split.found && (split.slow[a] || split.slow[b]);
  };
  // In a majority split with no floor to judge its slow group by, nobody can be blamed for the
  // slow group's directions: they would only count against the fast nodes beside them.
  const bool split_speaks = majority_split && typical.EffectiveFloor() <= 0;
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    const PairInput& pair = in.pairs[p];
    if (f.bw_measured[p] && !(split_speaks && in_slow_group(pair.client, pair.server))) {
      if (!std::isnan(pair.forward.bw_gbps))
        bw_obs.push_back({pair.client, pair.server, f.pairs[p].forward.slow, true});
      if (!std::isnan(pair.reverse.bw_gbps))
        bw_obs.push_back({pair.server, pair.client, f.pairs[p].reverse.slow, true});
    }
    if (f.lat_measured[p])
      lat_obs.push_back({pair.client, pair.server, static_cast<bool>(f.lat_bad[p]), false});
    if (f.path_measured[p])
      dead_obs.push_back({pair.client, pair.server, static_cast<bool>(f.dead[p]), false});
  }
  const uint32_t min_peers = std::max<uint32_t>(1, t.min_node_pairs());
  std::vector<bool> bw_eligible = Eligible(in, f.bw_bad, f.bw_measured);
  const std::vector<bool> outliers = OutlierNodes(
      in, paths, split, typical.bw.valid ? typical.bw.typical : 0, typical.EffectiveFloor());
  for (size_t i = 0; i < n; ++i) bw_eligible[i] = bw_eligible[i] && outliers[i];
  NodeBlame blame;
  blame.bw = Blame(n, bw_obs, min_peers, bw_eligible);
  blame.lat = Blame(n, lat_obs, min_peers, Eligible(in, f.lat_bad, f.lat_measured));
  blame.dead = Blame(n, dead_obs, min_peers, Eligible(in, f.dead, f.path_measured));
  return blame;
}

// The noise a single pair is judged against: the directions no blamed node explains, as the
// larger of the two-sided spread and the fast side's (re-tests raise only the low figures,
// the best attempt counting, which narrows the slow side of a noisy fabric).
LinkNoise LinkSpread(const AnalysisInput& in, const FleetSplit& split, const Typical& typical,
                     const PairFlags& f, const NodeBlame& blame) {
  LinkNoise noise;
  std::vector<double> logs;
  for (size_t p = 0; p < in.pairs.size() && typical.bw.valid && typical.bw.typical > 0; ++p) {
    const PairInput& pair = in.pairs[p];
    if (!f.bw_measured[p]) continue;
    for (const auto& d : pair.Directions()) {
      const float bw = d.figures.bw_gbps;
      if (std::isnan(bw) || bw <= 0 || Explains(blame.bw, {d.from, d.to, true, true}) ||
          (split.found && (split.slow[d.from] || split.slow[d.to]))) {
        continue;
      }
      logs.push_back(std::log(bw / typical.bw.typical));
    }
  }
  if (!logs.empty()) noise.log_spread = std::max(ScaledMad(logs, 0), FastSpread(logs, 0));
  noise.z = ChanceBar(in.thresholds.max_robust_z(), logs.size());
  return noise;
}

// Attempts that disagree: a direction whose best figure is not slow while its worst is slow and
// evidence on its own (Judged::LinkEvidence: far below typical for one measurement); unstable
// when its second worst is too (it fell back after recovering, not one passing event). Pairs
// explained otherwise (a switch-level fault, a split fleet's slow group) are left out. A node
// unstable with more than half its re-tested peers is the one that flaps (Blame).
// Loss makes TCP figures erratic: on a fabric that itself loses packets (its typical share of
// retransmitted segments at min_loss_rate or more), and on a lossy direction, attempts that
// disagree are the loss's doing (lossy_link says so), not a flap.
// Like with like: where lighter loads read faster on this fabric (Loads: a bar above 0), a best
// attempt taken below the bar (a re-test that ran alone beside full rounds) is the lighter
// load's doing, not a link that recovered; it disagrees with nothing.
Judged::Stability JudgeStability(const AnalysisInput& in, const Judged& j) {
  const auto& t = in.thresholds;
  const uint16_t needed = in.require_retest ? kUnstableAttempts : 2;
  Judged::Stability out;
  out.known.assign(in.pairs.size(), 0);
  out.disagrees.assign(in.pairs.size(), 0);
  out.unstable.assign(in.pairs.size(), 0);
  const bool fabric_loses = j.loss.known && j.loss.typical >= t.min_loss_rate();
  const Reference& bw = j.typical.bw;
  std::vector<Observation> observations;
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    const PairInput& pair = in.pairs[p];
    const PairResult& r = j.flags.pairs[p];
    if (!j.flags.bw_measured[p] || pair.attempts < 2 || j.InSlowGroup(pair.client, pair.server))
      continue;
    auto low = [&](float x) {
      return !std::isnan(x) && bw.valid && x < bw.typical * (1 - t.min_effect()) &&
             j.LinkEvidence(x);
    };
    const bool lossy_forward = j.loss.lossy[p][0], lossy_reverse = j.loss.lossy[p][1];
    auto loaded = [&](const DirectionInput& d) {
      return j.loads.bw <= 0 || d.concurrency <= 0 || d.concurrency >= j.loads.bw;
    };
    // The best attempt fine by both tests, and taken under like load: the attempts then truly
    // disagree.
    const bool forward_fine = !r.forward.slow && !low(pair.forward.bw_gbps) && !lossy_forward &&
                              !fabric_loses && loaded(pair.forward);
    const bool reverse_fine = !r.reverse.slow && !low(pair.reverse.bw_gbps) && !lossy_reverse &&
                              !fabric_loses && loaded(pair.reverse);
    out.disagrees[p] = (forward_fine && low(pair.forward.worst_gbps)) ||
                       (reverse_fine && low(pair.reverse.worst_gbps));
    out.unstable[p] = (forward_fine && low(pair.forward.next_worst_gbps)) ||
                      (reverse_fine && low(pair.reverse.next_worst_gbps));
    out.known[p] = pair.attempts >= needed;
    if (out.known[p])
      observations.push_back({pair.client, pair.server, static_cast<bool>(out.unstable[p]), false});
  }
  out.blamed = Blame(in.nodes.size(), observations, std::max<uint32_t>(1, t.min_node_pairs()),
                     std::vector<bool>(in.nodes.size(), true));
  return out;
}

namespace {

// What the passes found, pair by pair and node by node, before any finding is written.
AnalysisResult Assemble(const AnalysisInput& in, const Judged& j) {
  AnalysisResult out;
  out.paths = j.paths.faults;
  out.pairs = j.flags.pairs;
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    PairResult& r = out.pairs[p];
    r.forward.lossy = j.loss.lossy[p][0];
    r.reverse.lossy = j.loss.lossy[p][1];
    r.disagrees = j.stability.disagrees[p];
    r.unstable = j.stability.unstable[p];
  }
  out.nodes.resize(in.nodes.size());
  for (size_t i = 0; i < in.nodes.size(); ++i) {
    out.nodes[i].median_bw_gbps = j.typical.node_median[i];
    out.nodes[i].robust_z = j.typical.node_z[i];
    out.nodes[i].split_slow = j.split.found && j.split.slow[i];
  }
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    if (!j.flags.path_measured[p]) continue;
    ++out.nodes[in.pairs[p].client].pairs;
    ++out.nodes[in.pairs[p].server].pairs;
  }
  if (j.typical.bw.valid) {
    out.best_bw_gbps = j.typical.best_bw;
    out.median_bw_gbps = static_cast<float>(j.typical.bw.typical);
  }
  out.best_lat_us = j.typical.best_lat;
  if (j.typical.bw.valid) out.bw_log_spread = static_cast<float>(j.noise.log_spread);
  return out;
}

}  // namespace

// The rules, in order: each pass reads the input and what the passes before it found.
Judged Judge(const AnalysisInput& in) {
  Judged j;
  j.paths = FindPathFaults(in);  // what switches explain comes first: it is no host's fault
  AddEcmpFaults(in, j.paths);    // and a member of an equal-cost group before its paths
  std::vector<char> explained(in.pairs.size());
  for (size_t p = 0; p < in.pairs.size(); ++p) explained[p] = j.paths.pair_fault[p] >= 0;
  j.loads = FullLoads(in, j.paths);
  j.split = FindFleetSplit(in, explained, j.loads.bw);
  j.typical = TypicalFigures(in, j.paths, j.loads, j.split);
  j.tails = TailFigures(in, j.paths);
  j.flags = JudgePairs(in, j.paths, j.typical, j.tails);
  j.blame = BlameNodes(in, j.paths, j.split, j.typical, j.flags);
  j.noise = LinkSpread(in, j.split, j.typical, j.flags, j.blame);
  j.loss = JudgeLoss(in, j.paths);
  j.stability = JudgeStability(in, j);
  j.reference = JudgeAgainstReferences(in, j);
  return j;
}

AnalysisResult Analyze(const AnalysisInput& in) {
  const Judged judged = Judge(in);
  AnalysisResult out = Assemble(in, judged);
  AddNodeFindings(in, judged, out);
  AddReferenceFindings(in, judged, out);
  AddPairFindings(in, judged, out);
  AddLossFindings(in, judged, out);
  AddPathFindings(in, judged, out);
  AddFabricFindings(in, judged, out);
  return out;
}

}  // namespace fabricctl::controller
