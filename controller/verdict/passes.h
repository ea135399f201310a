#ifndef FABRICCTL_CONTROLLER_VERDICT_PASSES_H_
#define FABRICCTL_CONTROLLER_VERDICT_PASSES_H_

// The analysis's steps, shared between analysis.cc (judging the figures) and
// analysis_findings.cc (writing the findings). Not for use outside these two files.

#include <algorithm>
#include <vector>

#include "controller/verdict/analysis.h"
#include "controller/verdict/fleet_split.h"

namespace fabricctl::controller {

// The fabric's typical figure and its robust spread.
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

using NodeMedians = std::vector<float>;

// The figures judged: references, per-pair flags and the nodes blamed.
struct Judged {
  // A fleet in two groups by reach (fleet_split.h); its slow group's figures are the split's
  // evidence, not a link's, and the typical bandwidth is the fast group's.
  FleetSplit split;
  bool InSlowGroup(uint32_t a, uint32_t b) const {
    return split.found && (split.slow[a] || split.slow[b]);
  }
  // The slow group is half the judged nodes or more: its nodes are no outliers.
  bool MajoritySplit() const {
    return split.found &&
           2 * static_cast<size_t>(std::count(split.slow.begin(), split.slow.end(), 1)) >= split.judged;
  }
  // Like with like: figures taken at a lighter load than these set no yardstick (0: all do).
  double bw_load = 0, lat_load = 0;
  Reference bw, lat;
  double link_floor = 0;  // min_bw_efficiency x expect.link_rate_gbps (RDMA) or tcp_bw_gbps (tcp_bw)
  // The fabric's typical figure itself misses the absolute floor (or latency ceiling): every
  // pair misses it alike, so it blames no node or link; one fabric_degraded finding says so.
  bool bw_floor_missed = false, lat_ceiling_missed = false;
  // Spread of ln(figure / typical) over the directions no blamed node explains (ScaledMad
  // around 0, or of the fast side's alone where that is larger): bandwidth noise is a ratio,
  // so a single pair is judged on a log scale.
  double bw_log_spread = 0;
  // How many of those spreads below typical one pair's figure must be: max_robust_z, or more
  // where the sweep has so many figures that a healthy one gets that far by chance (a 1 %
  // chance over the whole sweep, Bonferroni: ChanceBar).
  double bw_link_z = 0;
  // Whether one direction's figure, already slow, is evidence against its link on its own:
  // below the link rate's floor, or a robust outlier on the log scale.
  bool LinkEvidence(double bw) const;
  // The figure below which LinkEvidence holds by the log-scale rule.
  double LinkOutlierBelow() const;
  // Latency tails: the typical p99 (the pairs' median), and the spread of ln(p99 /
  // typical) over the pairs (two-sided, or the high side's where that is larger: tails scatter
  // upwards), with the z beyond which one pair's tail stands out (as bw_link_z: 1 % of sweeps
  // by chance).
  Reference tail;
  double tail_log_spread = 0, tail_z = 0;
  // A p99 above relative_lat x the typical one and beyond tail_z spreads on the log scale.
  bool TailHigh(double p99, double relative) const;
  std::vector<char> bw_bad, lat_bad, dead;                     // per pair
  std::vector<char> bw_measured, lat_measured, path_measured;  // per pair
  std::vector<Side> bw_blamed, lat_blamed, dead_blamed;        // per node
  // Nodes unstable with most of their re-tested peers (their NIC flaps), and the pairs
  // re-tested often enough to say (attempts >= kUnstableAttempts with re-tests on).
  std::vector<Side> unstable_blamed;
  std::vector<char> stability_known;  // per pair
  // Loss: the fabric's typical retransmitted share (the median direction's), and the nodes
  // whose directions to most peers are lossy, on the side(s) they are.
  double typical_loss = 0;
  double loss_bar = 0;  // the share a direction must reach to be lossy
  bool loss_known = false;
  std::vector<Side> loss_blamed;
};

Judged Judge(const AnalysisInput& in, AnalysisResult& out);
void AddNodeFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out);
void AddPairFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out);
// slow_path, slow_uplink and slow_switch for AnalysisResult::paths (analysis_paths.cc).
void AddPathFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out);
void AddFabricFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out);
// Loss (analysis_loss.cc): which directions retransmit far more than the fabric does, who is
// blamed for it, and the lossy_link findings.
void JudgeLoss(const AnalysisInput& in, Judged& j, AnalysisResult& out);
void AddLossFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_PASSES_H_
