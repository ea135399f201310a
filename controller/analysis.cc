#include "controller/analysis.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

constexpr double kMadScale = 1.4826;

std::string Num(double v) { return absl::StrFormat("%.2f", v); }

// The greedy localisation over one kind of badness (slow bandwidth, or high latency).
// Returns a flag per node: blamed. `bad` and `measured` are per pair.
std::vector<bool> Localise(const AnalysisInput& in, const std::vector<bool>& bad,
                           const std::vector<bool>& measured, const std::vector<bool>& outlier) {
  const size_t n = in.nodes.size();
  std::vector<uint32_t> bad_count(n, 0), measured_count(n, 0);
  std::vector<std::vector<uint32_t>> bad_pairs(n);
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    if (!measured[p]) continue;
    for (uint32_t node : {in.pairs[p].client, in.pairs[p].server}) {
      ++measured_count[node];
      if (bad[p]) {
        ++bad_count[node];
        bad_pairs[node].push_back(static_cast<uint32_t>(p));
      }
    }
  }
  std::vector<bool> blamed(n, false);
  std::vector<bool> explained(in.pairs.size(), false);
  for (;;) {
    // The node with the largest share of unexplained bad pairs.
    int best = -1;
    double best_share = 0;
    for (size_t i = 0; i < n; ++i) {
      if (blamed[i] || bad_count[i] == 0) continue;
      // One measured pair cannot tell its two ends apart: at least two are needed to blame
      // a node (the sweep re-pairs such ends with good nodes first).
      double share = static_cast<double>(bad_count[i]) / measured_count[i];
      bool qualifies = measured_count[i] >= 2 && (share >= 0.5 || outlier[i]);
      if (qualifies && share > best_share) {
        best = static_cast<int>(i);
        best_share = share;
      }
    }
    if (best < 0) break;
    blamed[best] = true;
    // Its bad pairs are explained: the other ends no longer count them.
    for (uint32_t p : bad_pairs[best]) {
      if (explained[p]) continue;
      explained[p] = true;
      for (uint32_t node : {in.pairs[p].client, in.pairs[p].server}) {
        if (node == static_cast<uint32_t>(best)) continue;
        --bad_count[node];
        --measured_count[node];
      }
    }
  }
  return blamed;
}

}  // namespace

double Median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

double ScaledMad(const std::vector<double>& values, double median) {
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::abs(v - median));
  return kMadScale * Median(std::move(deviations));
}

AnalysisResult Analyze(const AnalysisInput& in) {
  const size_t n = in.nodes.size();
  const size_t np = in.pairs.size();
  const auto& t = in.thresholds;
  AnalysisResult out;
  out.nodes.resize(n);
  out.pairs.resize(np);

  // Reference values: the best pair, and the sweep's median.
  std::vector<bool> has_bw(np, false), has_lat(np, false);
  double best_bw = 0, best_lat = std::numeric_limits<double>::infinity();
  std::vector<double> all_bw;
  for (size_t p = 0; p < np; ++p) {
    const PairInput& pair = in.pairs[p];
    if (pair.status != PairStatus::kMeasured) continue;
    if (!std::isnan(pair.bw_gbps)) {
      has_bw[p] = true;
      best_bw = std::max(best_bw, static_cast<double>(pair.bw_gbps));
      all_bw.push_back(pair.bw_gbps);
    }
    if (!std::isnan(pair.lat_us) && pair.lat_us > 0) {
      has_lat[p] = true;
      best_lat = std::min(best_lat, static_cast<double>(pair.lat_us));
    }
  }
  if (!all_bw.empty()) {
    out.best_bw_gbps = static_cast<float>(best_bw);
    out.median_bw_gbps = static_cast<float>(Median(all_bw));
  }
  if (std::isfinite(best_lat)) out.best_lat_us = static_cast<float>(best_lat);

  // Per-pair verdicts against the thresholds.
  const double link_floor = in.bandwidth_is_rdma && in.expect.link_rate_gbps() > 0
                                ? in.expect.link_rate_gbps() * t.min_bw_efficiency()
                                : 0;
  const double relative_floor = best_bw * t.relative_bw();
  double lat_ceiling = std::isfinite(best_lat) ? best_lat * t.relative_lat()
                                               : std::numeric_limits<double>::infinity();
  if (t.max_lat_us() > 0) lat_ceiling = std::min(lat_ceiling, t.max_lat_us());
  std::vector<bool> slow(np, false), high_lat(np, false);
  for (size_t p = 0; p < np; ++p) {
    PairResult& r = out.pairs[p];
    if (has_bw[p]) {
      const double bw = in.pairs[p].bw_gbps;
      r.relative_bw = best_bw > 0 ? static_cast<float>(bw / best_bw) : 1.0f;
      slow[p] = bw < relative_floor || bw < link_floor;
    }
    if (has_lat[p]) high_lat[p] = in.pairs[p].lat_us > lat_ceiling;
    r.slow = slow[p];
    r.high_latency = high_lat[p];
  }

  // Per-node medians and robust z-scores of bandwidth.
  std::vector<std::vector<double>> node_bw(n);
  for (size_t p = 0; p < np; ++p) {
    if (!has_bw[p]) continue;
    node_bw[in.pairs[p].client].push_back(in.pairs[p].bw_gbps);
    node_bw[in.pairs[p].server].push_back(in.pairs[p].bw_gbps);
  }
  std::vector<double> medians;
  for (size_t i = 0; i < n; ++i) {
    if (node_bw[i].empty()) continue;
    out.nodes[i].median_bw_gbps = static_cast<float>(Median(node_bw[i]));
    medians.push_back(out.nodes[i].median_bw_gbps);
  }
  std::vector<bool> outlier(n, false);
  if (medians.size() >= 3) {
    const double med = Median(medians);
    const double mad = ScaledMad(medians, med);
    for (size_t i = 0; i < n; ++i) {
      if (std::isnan(out.nodes[i].median_bw_gbps)) continue;
      const double x = out.nodes[i].median_bw_gbps;
      if (mad > 0) out.nodes[i].robust_z = static_cast<float>((x - med) / mad);
      // An outlier by z is blamed only if its median is also below the relative floor, so
      // that a tight cluster's tiny spread does not make stragglers.
      outlier[i] = mad > 0 && (x - med) / mad < -t.max_robust_z() && x < relative_floor;
    }
  }

  std::vector<bool> measured_bw(has_bw), measured_lat(has_lat);
  const std::vector<bool> slow_node = Localise(in, slow, measured_bw, outlier);
  const std::vector<bool> lat_node = Localise(in, high_lat, measured_lat, std::vector<bool>(n));

  // Node-level findings.
  std::map<uint32_t, uint32_t> mtu_votes;
  for (const auto& node : in.nodes) {
    if (node.netdev_mtu != 0) ++mtu_votes[node.netdev_mtu];
  }
  uint32_t common_mtu = 0, common_votes = 0;
  for (const auto& [mtu, votes] : mtu_votes) {
    if (votes > common_votes) common_mtu = mtu, common_votes = votes;
  }
  const uint32_t expected_mtu = in.expect.netdev_mtu() != 0 ? in.expect.netdev_mtu() : common_mtu;

  for (size_t i = 0; i < n; ++i) {
    const NodeInput& node = in.nodes[i];
    NodeResult& r = out.nodes[i];
    if (!node.reachable) {
      r.verdict = Verdict::kUnknown;
      out.findings.push_back(report::MakePair(report::kind::kNodeUnreachable, node.name, "",
          absl::StrCat(node.name, " did not answer: ", node.unreachable_reason)));
      continue;
    }
    if (!node.rdma_unavailable_reason.empty()) {
      r.verdict = Verdict::kCritical;
      out.findings.push_back(report::MakePair(report::kind::kRdmaUnavailable, node.name, "",
          absl::StrCat(node.name, ": no usable RDMA device (", node.rdma_unavailable_reason,
                       "); collectives would fall back to TCP")));
    }
    if (slow_node[i] || lat_node[i]) {
      r.straggler = true;
      r.verdict = Verdict::kCritical;
      std::string detail;
      v1::Finding f;
      if (slow_node[i]) {
        const double expected = std::max(relative_floor, link_floor);
        detail = absl::StrCat(node.name, ": median ", in.bandwidth_probe, " ",
                              Num(r.median_bw_gbps), " Gb/s across its pairs, expected at least ",
                              Num(expected), " Gb/s (", Num(t.relative_bw() * 100),
                              " % of the best pair, ", Num(best_bw), " Gb/s)");
      } else {
        detail = absl::StrCat(node.name, ": ", in.latency_probe,
                              " latency above ", Num(lat_ceiling), " us with most of its peers");
      }
      f = report::MakePair(report::kind::kStragglerNode, node.name, "",
                      detail);
      if (!std::isnan(r.median_bw_gbps)) {
        (*f.mutable_evidence())["median_bw_gbps"] = Num(r.median_bw_gbps);
      }
      (*f.mutable_evidence())["best_pair_bw_gbps"] = Num(best_bw);
      if (!std::isnan(r.robust_z)) (*f.mutable_evidence())["robust_z"] = Num(r.robust_z);
      out.findings.push_back(std::move(f));
    }
    if (node.netdev_mtu != 0 && expected_mtu != 0 && node.netdev_mtu != expected_mtu) {
      r.verdict = Verdict::kCritical;
      v1::Finding f = report::MakePair(report::kind::kMtuMismatch, node.name, "",
          absl::StrCat(node.name, ": ", node.netdev.empty() ? "netdev" : node.netdev, " MTU ",
                       node.netdev_mtu, ", expected ", expected_mtu,
                       in.expect.netdev_mtu() != 0 ? " (expect.netdev_mtu)"
                                                   : " (the sweep's common MTU)"));
      f.set_device(node.netdev);
      (*f.mutable_evidence())["mtu"] = absl::StrCat(node.netdev_mtu);
      (*f.mutable_evidence())["expected_mtu"] = absl::StrCat(expected_mtu);
      out.findings.push_back(std::move(f));
    }
  }

  // Pair-level findings: what no straggler explains.
  for (size_t p = 0; p < np; ++p) {
    const PairInput& pair = in.pairs[p];
    PairResult& r = out.pairs[p];
    const std::string& a = in.nodes[pair.client].name;
    const std::string& b = in.nodes[pair.server].name;
    const bool end_blamed = slow_node[pair.client] || slow_node[pair.server] ||
                            lat_node[pair.client] || lat_node[pair.server];
    const std::string reason = pair.reason >= 0 ? in.reasons[pair.reason] : "";
    switch (pair.status) {
      case PairStatus::kNotMeasured:
        r.verdict = Verdict::kUnknown;
        continue;
      case PairStatus::kFailed:
        r.verdict = Verdict::kWarning;
        out.findings.push_back(report::MakePair(report::kind::kProbeFailed, a, b,
                                           absl::StrCat(a, " -> ", b, ": ", reason)));
        continue;
      case PairStatus::kTimeout:
        r.verdict = Verdict::kWarning;
        out.findings.push_back(report::MakePair(report::kind::kProbeTimeout, a, b,
                                           absl::StrCat(a, " -> ", b, ": ", reason)));
        continue;
      case PairStatus::kMeasured:
        break;
    }
    if (pair.tcp_fallback) {
      r.verdict = Verdict::kCritical;
      out.findings.push_back(report::MakePair(report::kind::kTcpFallback, a, b,
          absl::StrCat(a, " -> ", b, ": RDMA was asked for and only TCP carried the traffic",
                       reason.empty() ? "" : ": " + reason)));
    }
    if (end_blamed && (r.slow || r.high_latency)) {
      r.verdict = std::max(r.verdict, Verdict::kCritical);  // explained by a straggler
      continue;
    }
    if (r.slow) {
      r.verdict = std::max(r.verdict, Verdict::kWarning);
      const double expected = std::max(relative_floor, link_floor);
      v1::Finding f = report::MakePair(report::kind::kSlowLink, a, b,
          absl::StrCat(a, " -> ", b, ": ", in.bandwidth_probe, " ", Num(pair.bw_gbps),
                       " Gb/s, expected at least ", Num(expected),
                       " Gb/s; both ends are fine with their other peers"));
      (*f.mutable_evidence())["bw_gbps"] = Num(pair.bw_gbps);
      (*f.mutable_evidence())["expected_gbps"] = Num(expected);
      out.findings.push_back(std::move(f));
    }
    if (r.high_latency) {
      r.verdict = std::max(r.verdict, Verdict::kWarning);
      v1::Finding f = report::MakePair(report::kind::kHighLatencyLink, a, b,
          absl::StrCat(a, " -> ", b, ": ", in.latency_probe, " ", Num(pair.lat_us),
                       " us, expected at most ", Num(lat_ceiling), " us"));
      (*f.mutable_evidence())["lat_us"] = Num(pair.lat_us);
      (*f.mutable_evidence())["expected_us"] = Num(lat_ceiling);
      out.findings.push_back(std::move(f));
    }
  }

  // A node's verdict also reflects its pairs' warnings.
  for (size_t p = 0; p < np; ++p) {
    if (out.pairs[p].verdict != Verdict::kWarning) continue;
    for (uint32_t node : {in.pairs[p].client, in.pairs[p].server}) {
      if (out.nodes[node].verdict == Verdict::kOk) out.nodes[node].verdict = Verdict::kWarning;
    }
  }
  for (size_t p = 0; p < np; ++p) {
    if (!measured_bw[p]) continue;
    for (uint32_t node : {in.pairs[p].client, in.pairs[p].server}) {
      ++out.nodes[node].pairs;
      out.nodes[node].slow_pairs += slow[p];
    }
  }
  return out;
}

}  // namespace fabricctl::controller
