#ifndef FABRICCTL_CONTROLLER_VERDICT_PASSES_H_
#define FABRICCTL_CONTROLLER_VERDICT_PASSES_H_

// The analysis as passes over plain data. Each pass is a function from the input and the
// earlier passes' outputs to an output type of its own; Judge (analysis.cc) runs them in the
// order of the rules, and the findings are written last, from what the passes found
// (findings.cc, loss.cc, path_findings.cc), never while judging. The verdict package's own:
// nothing outside controller/verdict includes this.
//
// The order, and what each pass answers:
//   1. PathFaults     which switch element (a path, an uplink, a switch) explains slow pairs
//   2. Loads          which figures were taken under a full round's load (like with like)
//   3. FleetSplit     whether the fleet is two fleets (fleet_split.h)
//   4. Typical        the fabric's typical bandwidth and latency, their spread, the floors
//   5. Tails          the fabric's typical latency tail and its spread
//   6. PairFlags      each pair's directions slow, its latency high, its path dead
//   7. NodeBlame      which nodes the bad pairs point at, and on which side
//   8. LinkNoise      the noise one link's figure is judged against
//   9. Loss           which directions and nodes retransmit far more than the fabric
//  10. Stability      which pairs' attempts disagree, and which nodes flap
//  11. Reference      which nodes fall below the reference nodes' figure (reference.h)
#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "controller/verdict/analysis.h"
#include "controller/verdict/fleet_split.h"
#include "controller/verdict/paths.h"
#include "controller/verdict/reference.h"

namespace fabricctl::controller {

// A typical figure and its robust spread.
struct Reference {
  bool valid = false;
  double typical = 0;
  double spread = 0;  // GoodSideSpread (fast bandwidth, low latency)
  // Bandwidth below the thresholds: relative_bw of typical, or min_effect below typical and a
  // robust outlier.
  bool Below(double x, const v1::Thresholds& t) const;
  // Latency above `relative` x typical and a robust outlier.
  bool Above(double x, double relative, double max_z) const;
};

// 2. Like with like: figures taken at a lighter load than these set no yardstick (0: all do).
struct Loads {
  double bw = 0, lat = 0;
};
Loads FullLoads(const AnalysisInput& in, const PathFaults& paths);

// 4. The fabric's typical figures, and each node's against them.
struct Typical {
  Reference bw, lat;
  // min_bw_efficiency x the expected rate: expect.link_rate_gbps (RDMA) or tcp_bw_gbps (tcp_bw).
  double link_floor = 0;
  // The typical figure itself misses the absolute floor (or latency ceiling): every pair misses
  // it alike, so it blames no node or link; one fabric_degraded finding says so.
  bool bw_floor_missed = false, lat_ceiling_missed = false;
  // Each node's median bandwidth and its robust z against the others'.
  std::vector<float> node_median, node_z;
  float best_bw = std::numeric_limits<float>::quiet_NaN();
  float best_lat = std::numeric_limits<float>::quiet_NaN();
  // The floor a single figure is held to: the expected rate's, unless the fabric as a whole
  // misses it (then it tells no pair from another).
  double EffectiveFloor() const { return bw_floor_missed ? 0 : link_floor; }
};
Typical TypicalFigures(const AnalysisInput& in, const PathFaults& paths, const Loads& loads,
                       const FleetSplit& split);

// 5. Latency tails: the typical p99 (the pairs' median), and the spread of ln(p99 / typical) over
// the pairs (two-sided, or the high side's where that is larger: tails scatter upwards), with
// the z beyond which one pair's tail stands out (ChanceBar).
struct Tails {
  Reference reference;
  double log_spread = 0, z = 0;
  // A p99 above relative_lat x the typical one and beyond z spreads on the log scale.
  bool High(double p99, double relative) const;
};
Tails TailFigures(const AnalysisInput& in, const PathFaults& paths);

// 6. Each pair's own flags (PairResult's forward/reverse slow, slow, relative_bw, high_latency,
// high_tail, unreachable), and which of them count as evidence.
struct PairFlags {
  std::vector<PairResult> pairs;
  std::vector<char> bw_bad, lat_bad, dead;                     // per pair
  std::vector<char> bw_measured, lat_measured, path_measured;  // per pair
};
PairFlags JudgePairs(const AnalysisInput& in, const PathFaults& paths, const Typical& typical,
                     const Tails& tails);

// 7. The nodes blamed: bandwidth by direction (outliers among the nodes only), latency and dead
// paths by pair.
struct NodeBlame {
  std::vector<Side> bw, lat, dead;
};
NodeBlame BlameNodes(const AnalysisInput& in, const PathFaults& paths, const FleetSplit& split,
                     const Typical& typical, const PairFlags& flags);

// 8. Spread of ln(figure / typical) over the directions no blamed node explains (ScaledMad
// around 0, or of the fast side's alone where that is larger: bandwidth noise is a ratio, so a
// single pair is judged on a log scale), and the z bar one pair's figure must pass (ChanceBar).
struct LinkNoise {
  double log_spread = 0, z = 0;
  // The figure below which one direction is an outlier on the log scale.
  double OutlierBelow(double typical) const;
};
LinkNoise LinkSpread(const AnalysisInput& in, const FleetSplit& split, const Typical& typical,
                     const PairFlags& flags, const NodeBlame& blame);

// 9. Loss (loss.cc): the fabric's typical retransmitted share (the median direction's), the share
// a direction must reach to be lossy, each direction's flag, and the nodes whose directions to
// most peers are lossy, on the side(s) they are.
struct Loss {
  bool known = false;
  double typical = 0, bar = 0;
  std::vector<std::array<bool, 2>> lossy;  // per pair: forward, reverse
  std::vector<Side> blamed;
  // By receiving node: the directions that would be lossy but for its own drops, which
  // account for them (ReceiverDropped): the sender and the share. Not lossy, not the links'.
  std::vector<std::vector<std::pair<uint32_t, double>>> host_drops;
};
Loss JudgeLoss(const AnalysisInput& in, const PathFaults& paths);

// All the passes' outputs, in their order: what the findings are written from.
struct Judged {
  PathFaults paths;
  Loads loads;
  FleetSplit split;
  Typical typical;
  Tails tails;
  PairFlags flags;
  NodeBlame blame;
  LinkNoise noise;
  Loss loss;
  // 10. Stability: each pair's attempts disagree / unstable (PairResult), which pairs were
  // re-tested often enough to say (attempts >= kUnstableAttempts with re-tests on), and the
  // nodes unstable with most of their re-tested peers (their NIC flaps).
  struct Stability {
    std::vector<char> known, disagrees, unstable;  // per pair
    std::vector<Side> blamed;
  } stability;
  ReferenceJudgement reference;

  bool InSlowGroup(uint32_t a, uint32_t b) const {
    return split.found && (split.slow[a] || split.slow[b]);
  }
  // The slow group is half the judged nodes or more: its nodes are no outliers.
  bool MajoritySplit() const {
    return split.found &&
           2 * static_cast<size_t>(std::count(split.slow.begin(), split.slow.end(), 1)) >=
               split.judged;
  }
  // Whether one direction's figure, already slow, is evidence against its link on its own:
  // below the link rate's floor, or a robust outlier on the log scale.
  bool LinkEvidence(double bw) const;
  double LinkOutlierBelow() const { return noise.OutlierBelow(typical.bw.typical); }
};
Judged::Stability JudgeStability(const AnalysisInput& in, const Judged& j);

// Every pass, in order (analysis.cc).
Judged Judge(const AnalysisInput& in);

// The findings, from what the passes found, into `out` (its pairs and nodes filled from the
// passes already): findings.cc, path_findings.cc, loss.cc.
void AddNodeFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out);
void AddPairFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out);
// slow_path, slow_uplink and slow_switch for AnalysisResult::paths (path_findings.cc).
void AddPathFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out);
void AddFabricFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out);
void AddLossFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_PASSES_H_
