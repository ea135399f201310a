// The findings of the analysis: each states the criterion that fired and the figures that
// fired it.
#include "report/findings.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/verdict/blame.h"
#include "controller/verdict/passes.h"

namespace fabricctl::controller {
namespace {

std::string Num(double v) { return absl::StrFormat("%.2f", v); }

// "below 0.58 Gb/s (60 % of the typical 0.96 Gb/s), or 20 % below it and beyond 3.5 robust
// deviations (0.03 Gb/s each)".
std::string SlowCriterion(const Judged& j, const v1::Thresholds& t) {
  std::string text = absl::StrFormat(
      "slow is below %s Gb/s (%.0f %% of the fabric's typical %s Gb/s), or %.0f %% below typical "
      "and beyond %.1f robust deviations of %s Gb/s",
      Num(j.typical.bw.typical * t.relative_bw()), t.relative_bw() * 100, Num(j.typical.bw.typical),
      t.min_effect() * 100, t.max_robust_z(), Num(j.typical.bw.spread));
  if (j.typical.link_floor > 0 && !j.typical.bw_floor_missed)
    absl::StrAppend(&text, ", or below ", Num(j.typical.link_floor),
                    " Gb/s (the expected rate's floor)");
  return text;
}

// "; and, one pair's figure being one measurement, below 0.31 Gb/s: 3.5 robust deviations
// under typical on a log scale, where the fabric's figures vary by 8 % a deviation".
std::string LinkCriterion(const Judged& j) {
  return absl::StrFormat(
      "; and, one pair's figure being one measurement, below %s Gb/s: %.1f robust deviations "
      "under typical on a log scale, where the figures vary by %.0f %% a deviation",
      Num(j.LinkOutlierBelow()), j.noise.z, (std::exp(j.noise.log_spread) - 1) * 100);
}

// "its tail stands out: p99 above 2.1 times the fabric's typical p99 40.00 us and beyond 3.5
// deviations on a log scale (the pairs' tails vary by 30 % a deviation); jitter 200.00 us".
std::string TailCriterion(const Judged& j, const v1::Thresholds& t, const PairInput& pair) {
  return absl::StrFormat(
      "its tail stands out while its median does not: p99 above %.1f times the fabric's typical "
      "p99 %s us and beyond %.1f deviations on a log scale (the pairs' tails vary by %.0f %% a "
      "deviation); jitter (p99 - median) %s us",
      t.relative_lat(), Num(j.tails.reference.typical), j.tails.z,
      (std::exp(j.tails.log_spread) - 1) * 100, Num(pair.lat_p99_us - pair.lat_us));
}

// A node's figures on one side: what it sends (client of the forward direction, server of the
// reverse) or what it receives.
struct SideFigures {
  std::vector<double> all;
  uint32_t slow = 0;
};

SideFigures FiguresOf(const AnalysisInput& in, const AnalysisResult& out, uint32_t node,
                      bool send) {
  SideFigures f;
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    const PairInput& pair = in.pairs[p];
    if (pair.status != PairStatus::kMeasured) continue;
    // Forward: client sends. Reverse: server sends.
    const bool fwd_mine = send ? pair.client == node : pair.server == node;
    const bool rev_mine = send ? pair.server == node : pair.client == node;
    if (fwd_mine && !std::isnan(pair.forward.bw_gbps)) {
      f.all.push_back(pair.forward.bw_gbps);
      f.slow += out.pairs[p].forward.slow;
    }
    if (rev_mine && !std::isnan(pair.reverse.bw_gbps)) {
      f.all.push_back(pair.reverse.bw_gbps);
      f.slow += out.pairs[p].reverse.slow;
    }
  }
  return f;
}

v1::Finding BandwidthStraggler(const AnalysisInput& in, const Judged& j, const AnalysisResult& out,
                               uint32_t i) {
  const std::string& name = in.nodes[i].name;
  const Side side = j.blame.bw[i];
  const SideFigures sent = FiguresOf(in, out, i, true), received = FiguresOf(in, out, i, false);
  const double sent_median = Median(sent.all), received_median = Median(received.all);
  std::string what;
  if (side == Side::kBoth) {
    what = absl::StrFormat(
        "%s slow in both directions: %d of %d directions to its peers slow, "
        "median %s Gb/s sent and %s Gb/s received",
        in.bandwidth_probe, sent.slow + received.slow, sent.all.size() + received.all.size(),
        Num(sent_median), Num(received_median));
  } else if (side == Side::kSend) {
    what = absl::StrFormat(
        "sends slowly: %s from it is slow to %d of %d peers (median %s Gb/s), "
        "while it receives at %s Gb/s",
        in.bandwidth_probe, sent.slow, sent.all.size(), Num(sent_median), Num(received_median));
  } else {
    what = absl::StrFormat(
        "receives slowly: %s to it is slow from %d of %d peers (median %s Gb/s), "
        "while it sends at %s Gb/s",
        in.bandwidth_probe, received.slow, received.all.size(), Num(received_median),
        Num(sent_median));
  }
  v1::Finding f =
      report::Make(report::kind::kStragglerNode, name,
                   absl::StrCat(name, ": ", what, "; ", SlowCriterion(j, in.thresholds)));
  auto& e = *f.mutable_evidence();
  e["direction"] = side == Side::kBoth ? "both" : side == Side::kSend ? "transmit" : "receive";
  e["typical_bw_gbps"] = Num(j.typical.bw.typical);
  if (!std::isnan(sent_median)) e["sent_median_gbps"] = Num(sent_median);
  if (!std::isnan(received_median)) e["received_median_gbps"] = Num(received_median);
  if (!std::isnan(out.nodes[i].median_bw_gbps))
    e["median_bw_gbps"] = Num(out.nodes[i].median_bw_gbps);
  if (!std::isnan(out.nodes[i].robust_z)) e["robust_z"] = Num(out.nodes[i].robust_z);
  return f;
}

v1::Finding LatencyStraggler(const AnalysisInput& in, const Judged& j, const AnalysisResult& out,
                             uint32_t i) {
  std::vector<double> mine, tails;
  uint32_t high = 0, high_tails = 0;
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    const PairInput& pair = in.pairs[p];
    if (!j.flags.lat_measured[p] || (pair.client != i && pair.server != i)) continue;
    mine.push_back(pair.lat_us);
    if (!std::isnan(pair.lat_p99_us)) tails.push_back(pair.lat_p99_us);
    high += j.flags.lat_bad[p];
    high_tails += out.pairs[p].high_tail;
  }
  const std::string& name = in.nodes[i].name;
  v1::Finding f = report::Make(
      report::kind::kStragglerNode, name,
      absl::StrFormat("%s: %s latency high with %d of %d peers (median %s us against the fabric's "
                      "typical %s us; high is above %.1f times typical and beyond %.1f robust "
                      "deviations of %s us%s)",
                      name, in.latency_probe, high, mine.size(), Num(Median(mine)),
                      Num(j.typical.lat.typical), in.thresholds.relative_lat(),
                      in.thresholds.max_robust_z(), Num(j.typical.lat.spread),
                      in.thresholds.max_lat_us() > 0
                          ? absl::StrCat(", or above ", Num(in.thresholds.max_lat_us()), " us")
                          : ""));
  (*f.mutable_evidence())["median_lat_us"] = Num(Median(mine));
  (*f.mutable_evidence())["typical_lat_us"] = Num(j.typical.lat.typical);
  if (high_tails > 0) {
    absl::StrAppend(f.mutable_detail(),
                    absl::StrFormat("; %d of them by their tail: median p99 %s us against the "
                                    "fabric's typical p99 %s us (a tail is high above %.1f times "
                                    "it and beyond %.1f deviations on a log scale)",
                                    high_tails, Num(Median(tails)), Num(j.tails.reference.typical),
                                    in.thresholds.relative_lat(), j.tails.z));
    (*f.mutable_evidence())["median_lat_p99_us"] = Num(Median(tails));
    (*f.mutable_evidence())["typical_lat_p99_us"] = Num(j.tails.reference.typical);
  }
  return f;
}

// A node unstable with most of the peers it was re-tested with: its NIC (or its own link) flaps.
v1::Finding UnstableNode(const AnalysisInput& in, const Judged& j, const AnalysisResult& out,
                         uint32_t i) {
  uint32_t unstable = 0, known = 0;
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    const PairInput& pair = in.pairs[p];
    if (!j.stability.known[p] || (pair.client != i && pair.server != i)) continue;
    ++known;
    unstable += out.pairs[p].unstable;
  }
  const std::string& name = in.nodes[i].name;
  v1::Finding f = report::Make(
      report::kind::kUnstable, name,
      absl::StrFormat("%s: %s attempts disagree with %d of the %d peers it was re-tested with: "
                      "fine at best (near the fabric's typical %s Gb/s) and far below it in two "
                      "attempts or more; its NIC or its own link flaps",
                      name, in.bandwidth_probe, unstable, known, Num(j.typical.bw.typical)),
      report::Level::kAlternate);
  (*f.mutable_evidence())["unstable_peers"] = absl::StrCat(unstable);
  (*f.mutable_evidence())["retested_peers"] = absl::StrCat(known);
  return f;
}

// "a -> b 0.30 Gb/s, b -> a 0.31 Gb/s (best of 2)".
std::string DescribeFigures(const AnalysisInput& in, const PairInput& pair) {
  const std::string& a = in.nodes[pair.client].name;
  const std::string& b = in.nodes[pair.server].name;
  std::vector<std::string> parts;
  if (!std::isnan(pair.forward.bw_gbps))
    parts.push_back(absl::StrCat(a, " -> ", b, " ", Num(pair.forward.bw_gbps), " Gb/s"));
  if (!std::isnan(pair.reverse.bw_gbps)) {
    parts.push_back(absl::StrCat(b, " -> ", a, " ", Num(pair.reverse.bw_gbps), " Gb/s"));
  }
  std::string text = absl::StrJoin(parts, ", ");
  if (pair.attempts > 1) absl::StrAppend(&text, " (best of ", pair.attempts, " attempts)");
  return text;
}

// The MTU findings, against the expectation or, without one, the sweep's most common MTU; a
// tie for the most (one node at 9000 and one at 1500) has no yardstick: every node of the
// split is named, and the finding says that an expectation would decide.
void AddMtuFindings(const AnalysisInput& in, AnalysisResult& out) {
  std::map<uint32_t, uint32_t> mtu_votes;
  for (const auto& node : in.nodes) {
    if (node.reachable && node.netdev_mtu != 0) ++mtu_votes[node.netdev_mtu];
  }
  uint32_t common_mtu = 0, common_votes = 0;
  bool tie = false;
  for (const auto& [mtu, votes] : mtu_votes) {
    if (votes > common_votes) {
      common_mtu = mtu, common_votes = votes, tie = false;
    } else if (votes == common_votes) {
      tie = true;
    }
  }
  const bool split = in.expect.netdev_mtu() == 0 && tie;
  const uint32_t expected_mtu = in.expect.netdev_mtu() != 0 ? in.expect.netdev_mtu() : common_mtu;
  std::vector<std::string> mtus;
  for (const auto& [mtu, votes] : mtu_votes) {
    if (votes == common_votes) mtus.push_back(absl::StrCat(mtu));
  }
  for (uint32_t i = 0; i < in.nodes.size(); ++i) {
    const NodeInput& node = in.nodes[i];
    NodeResult& r = out.nodes[i];
    if (!node.reachable || node.netdev_mtu == 0) continue;
    const std::string netdev = node.netdev.empty() ? "netdev" : node.netdev;
    if (!split && (expected_mtu == 0 || node.netdev_mtu == expected_mtu)) continue;
    r.verdict = Verdict::kCritical;
    v1::Finding f = report::Make(
        report::kind::kMtuMismatch, node.name,
        split ? absl::StrCat(
                    node.name, ": ", netdev, " MTU ", node.netdev_mtu,
                    "; the sweep is split between MTUs ", absl::StrJoin(mtus, " and "),
                    " with none the most common: set expect.netdev_mtu to say which is right")
              : absl::StrCat(node.name, ": ", netdev, " MTU ", node.netdev_mtu, ", expected ",
                             expected_mtu,
                             in.expect.netdev_mtu() != 0 ? " (expect.netdev_mtu)"
                                                         : " (the sweep's common MTU)"));
    f.set_device(node.netdev);
    (*f.mutable_evidence())["mtu"] = absl::StrCat(node.netdev_mtu);
    if (!split) (*f.mutable_evidence())["expected_mtu"] = absl::StrCat(expected_mtu);
    out.findings.push_back(std::move(f));
  }
}

}  // namespace

void AddNodeFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out) {
  for (uint32_t i = 0; i < in.nodes.size(); ++i) {
    const NodeInput& node = in.nodes[i];
    NodeResult& r = out.nodes[i];
    if (!node.reachable) {
      r.verdict = Verdict::kUnknown;
      out.findings.push_back(
          report::Make(report::kind::kNodeUnreachable, node.name,
                       absl::StrCat(node.name, " did not answer: ", node.unreachable_reason)));
      continue;
    }
    if (!node.rdma_unavailable_reason.empty()) {
      r.verdict = std::max(r.verdict, node.rdma_expected ? Verdict::kCritical : Verdict::kWarning);
      out.findings.push_back(report::Make(
          report::kind::kRdmaUnavailable, node.name,
          node.rdma_expected
              ? absl::StrCat(node.name, ": no usable RDMA device (", node.rdma_unavailable_reason,
                             "); collectives would fall back to TCP")
              : absl::StrCat(node.name, ": no usable RDMA device (", node.rdma_unavailable_reason,
                             "); its profile ", node.profile,
                             " expects no RDMA (no expect.link_rate_gbps), so its RDMA probes were "
                             "not judged"),
          node.rdma_expected ? report::Level::kDefault : report::Level::kAlternate));
    }
    if (!node.gpudirect_unavailable_reason.empty()) {
      r.verdict = Verdict::kCritical;
      out.findings.push_back(report::Make(
          report::kind::kGpudirectUnavailable, node.name,
          absl::StrCat(node.name,
                       ": its GPU memory could not be registered for RDMA, so GPUDirect "
                       "RDMA is not available there: ",
                       node.gpudirect_unavailable_reason)));
    }
    if (j.blame.bw[i] != Side::kNone || j.blame.lat[i] != Side::kNone) {
      r.straggler = true;
      r.side = j.blame.bw[i];
      r.verdict = Verdict::kCritical;
      if (j.blame.bw[i] != Side::kNone) out.findings.push_back(BandwidthStraggler(in, j, out, i));
      if (j.blame.lat[i] != Side::kNone) out.findings.push_back(LatencyStraggler(in, j, out, i));
    }
    if (j.stability.blamed[i] != Side::kNone) {
      r.verdict = Verdict::kCritical;
      out.findings.push_back(UnstableNode(in, j, out, i));
    }
    if (j.blame.dead[i] != Side::kNone) {
      r.path_down = true;
      r.verdict = Verdict::kCritical;
      out.findings.push_back(
          report::Make(report::kind::kLinkUnreachable, node.name,
                       absl::StrCat(node.name, ": its probes failed with most of its ", r.pairs,
                                    " peers while its agent answers: its data path is down"),
                       report::Level::kAlternate));
    }
  }
  AddMtuFindings(in, out);
}

namespace {

// The slow group's nodes that a split names: not blamed otherwise, and measured with a peer of
// the fast group (a node whose every peer was slow cannot be told from them).
std::vector<uint32_t> SplitNamed(const AnalysisInput& in, const Judged& j) {
  std::vector<char> beside_fast(in.nodes.size(), 0);
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    const PairInput& pair = in.pairs[p];
    if (!j.flags.bw_measured[p]) continue;
    if (!j.split.slow[pair.server]) beside_fast[pair.client] = 1;
    if (!j.split.slow[pair.client]) beside_fast[pair.server] = 1;
  }
  std::vector<uint32_t> named;
  for (uint32_t i = 0; i < in.nodes.size(); ++i) {
    if (j.split.slow[i] && beside_fast[i] && j.blame.bw[i] == Side::kNone) named.push_back(i);
  }
  return named;
}

// A fleet in two groups with no expectation to say which is right: fleet_split names the slow
// group. With an expectation, the nodes below its floor are blamed as stragglers instead, and
// a slow group that meets it is fine; a split that follows the nodes' profiles (two kinds of
// node, each held to its own expectation) is no finding either.
void AddSplitFinding(const AnalysisInput& in, const Judged& j, AnalysisResult& out) {
  if (!j.split.found || j.typical.link_floor > 0) return;
  const std::vector<uint32_t> named = SplitNamed(in, j);
  if (named.empty()) return;
  // Every node of the slow group below the references: they answered the question this finding
  // asks (reference.h).
  if (std::all_of(named.begin(), named.end(), [&](uint32_t i) { return j.reference.below[i]; })) {
    return;
  }
  std::set<std::string> slow_profiles, fast_profiles;
  for (uint32_t i = 0; i < in.nodes.size(); ++i) {
    (j.split.slow[i] ? slow_profiles : fast_profiles).insert(in.nodes[i].profile);
  }
  bool overlap = false;
  for (const auto& profile : slow_profiles) overlap |= fast_profiles.count(profile) > 0;
  if (!overlap) return;
  std::vector<std::string> names;
  for (uint32_t i : named) {
    names.push_back(in.nodes[i].name);
    out.nodes[i].verdict = std::max(out.nodes[i].verdict, Verdict::kWarning);
  }
  const char* expect = in.bandwidth_is_rdma ? "expect.link_rate_gbps" : "expect.tcp_bw_gbps";
  v1::Finding f = report::Make(
      report::kind::kFleetSplit, "",
      absl::StrFormat("%s: the fleet splits in two: %d node(s) reach at best %s Gb/s (%s), the "
                      "others %s Gb/s. With no expected rate, the figures cannot say whether the "
                      "slow group is faulty or a slower kind of node: set %s (the slow group's "
                      "nodes below its floor are then drained), or profiles for two kinds of node",
                      in.bandwidth_probe, names.size(), Num(j.split.slow_reach_gbps),
                      absl::StrJoin(names, ", "), Num(j.split.fast_reach_gbps), expect));
  f.set_device(absl::StrJoin(names, ","));
  auto& e = *f.mutable_evidence();
  e["slow_nodes"] = absl::StrJoin(names, ",");
  e["slow_reach_gbps"] = Num(j.split.slow_reach_gbps);
  e["fast_reach_gbps"] = Num(j.split.fast_reach_gbps);
  out.findings.push_back(std::move(f));
}

}  // namespace

void AddFabricFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out) {
  AddSplitFinding(in, j, out);
  const auto& t = in.thresholds;
  if (j.typical.bw_floor_missed) {
    v1::Finding f = report::Make(
        report::kind::kFabricDegraded, "",
        absl::StrFormat(
            "%s: the fabric's typical %s Gb/s is below the expected rate's floor %s "
            "Gb/s (%.0f %% of expect.%s %s): every pair misses it alike, so no node "
            "or link is blamed for it; look at what they share (switches, PFC/ECN, "
            "loss, the expected rate)",
            in.bandwidth_probe, Num(j.typical.bw.typical), Num(j.typical.link_floor),
            t.min_bw_efficiency() * 100, in.bandwidth_is_rdma ? "link_rate_gbps" : "tcp_bw_gbps",
            Num(in.bandwidth_is_rdma ? in.expect.link_rate_gbps() : in.expect.tcp_bw_gbps())));
    (*f.mutable_evidence())["typical_bw_gbps"] = Num(j.typical.bw.typical);
    (*f.mutable_evidence())["floor_gbps"] = Num(j.typical.link_floor);
    out.findings.push_back(std::move(f));
  }
  if (j.typical.lat_ceiling_missed) {
    v1::Finding f = report::Make(
        report::kind::kFabricDegraded, "",
        absl::StrFormat("%s: the fabric's typical %s us is above thresholds.max_lat_us %s us: "
                        "every pair misses it alike, so no node or link is blamed for it",
                        in.latency_probe, Num(j.typical.lat.typical), Num(t.max_lat_us())));
    (*f.mutable_evidence())["typical_lat_us"] = Num(j.typical.lat.typical);
    (*f.mutable_evidence())["max_lat_us"] = Num(t.max_lat_us());
    out.findings.push_back(std::move(f));
  }
}

namespace {

// The pair rules, one pair at a time, and what they could not place: a bad pair that no
// blamed node explains is the link's when both ends have enough peers to be cleared;
// otherwise the ends with too few peers cannot be told from the link (insufficient_data).
class PairJudge {
 public:
  PairJudge(const AnalysisInput& in, const Judged& j, AnalysisResult& out)
      : in_(in),
        j_(j),
        out_(out),
        min_peers_(std::max<uint32_t>(1, in.thresholds.min_node_pairs())) {}

  void Judge(size_t p) {
    const PairInput& pair = in_.pairs[p];
    PairResult& r = out_.pairs[p];
    if (pair.status != PairStatus::kMeasured) return NotMeasured(pair, r);
    // A switch-level fault's pair: its finding names the fault (analysis_paths.cc).
    if (r.path >= 0) r.verdict = std::max(r.verdict, Verdict::kCritical);
    // With re-tests on, a link is named only on figures that survived one.
    const bool retested = !in_.require_retest || pair.attempts >= 2;
    if (pair.tcp_fallback) {
      r.verdict = Verdict::kCritical;
      const std::string reason = pair.reason >= 0 ? in_.reasons[pair.reason] : "";
      out_.findings.push_back(
          report::MakePair(report::kind::kTcpFallback, A(pair), B(pair),
                           absl::StrCat(A(pair), " -> ", B(pair),
                                        ": RDMA was asked for and only TCP carried the traffic",
                                        reason.empty() ? "" : ": " + reason)));
    }
    if (r.slow && r.path < 0) Slow(pair, r, retested);
    if (r.high_latency) HighLatency(pair, r, retested);
    if (r.unstable && j_.stability.known[p]) Unstable(pair, r);
  }

  // insufficient_data for each end that could not be told from its links.
  void Finish() {
    for (const auto& [node, what] : insufficient_) {
      // A node that stopped answering is node_unreachable: what it measured before says less.
      if (!in_.nodes[node].reachable) continue;
      const std::string& name = in_.nodes[node].name;
      out_.nodes[node].verdict = std::max(out_.nodes[node].verdict, Verdict::kWarning);
      v1::Finding f =
          report::Make(report::kind::kInsufficientData, name,
                       absl::StrCat(name, ": measured with ", out_.nodes[node].pairs,
                                    " peer(s), fewer than the ", min_peers_,
                                    " needed to tell a fault of the node from one of the link: ",
                                    absl::StrJoin(what, "; ")));
      (*f.mutable_evidence())["peers"] = absl::StrCat(out_.nodes[node].pairs);
      out_.findings.push_back(std::move(f));
    }
  }

 private:
  const std::string& A(const PairInput& pair) const { return in_.nodes[pair.client].name; }
  const std::string& B(const PairInput& pair) const { return in_.nodes[pair.server].name; }
  bool EndsKnown(const PairInput& pair) const {
    return out_.nodes[pair.client].pairs >= min_peers_ &&
           out_.nodes[pair.server].pairs >= min_peers_;
  }
  void Insufficient(const PairInput& pair, const std::string& what) {
    for (uint32_t end : {pair.client, pair.server}) {
      if (out_.nodes[end].pairs < min_peers_) insufficient_[end].push_back(what);
    }
  }
  // A bad pair that no blamed node explains.
  void Unexplained(const PairInput& pair, const std::string& what, v1::Finding finding) {
    if (EndsKnown(pair)) {
      out_.findings.push_back(std::move(finding));
    } else {
      Insufficient(pair, what);
    }
  }

  void NotMeasured(const PairInput& pair, PairResult& r) {
    const std::string reason = pair.reason >= 0 ? in_.reasons[pair.reason] : "";
    if (pair.status == PairStatus::kNotMeasured) {
      r.verdict = Verdict::kUnknown;
    } else if (pair.status == PairStatus::kRefused) {
      r.verdict = Verdict::kWarning;
      out_.findings.push_back(
          report::MakePair(report::kind::kProbeFailed, A(pair), B(pair),
                           absl::StrCat(A(pair), " -> ", B(pair), ": ", reason)));
    } else {  // kUnreachable
      r.verdict = Verdict::kCritical;
      if (j_.blame.dead[pair.client] != Side::kNone || j_.blame.dead[pair.server] != Side::kNone)
        return;
      const std::string what =
          absl::StrCat(A(pair), " and ", B(pair), " cannot complete a probe (", reason, ")");
      Unexplained(
          pair, what,
          report::MakePair(
              report::kind::kLinkUnreachable, A(pair), B(pair),
              absl::StrCat(
                  what, pair.attempts > 1 ? absl::StrCat(" in ", pair.attempts, " attempts") : "",
                  " while both agents answer and both reach their other peers")));
    }
  }

  // The slow directions no blamed node explains, each of them evidence on its own (one
  // measurement of one pair: a robust outlier, not a chance low of a noisy fabric). A slow
  // direction that is also lossy is its loss's (TCP slows down to what a lossy link lets
  // through): the link's lossy_link names it and says it is slow as well.
  void Slow(const PairInput& pair, PairResult& r, bool retested) {
    const bool forward_node =
        r.forward.slow && Explains(j_.blame.bw, {pair.client, pair.server, true, true});
    const bool reverse_node =
        r.reverse.slow && Explains(j_.blame.bw, {pair.server, pair.client, true, true});
    // Lossy and not a lossy node's: the link's lossy_link finding (AddLossFindings) says it.
    const bool forward_lossy =
        r.forward.lossy && !Explains(j_.loss.blamed, {pair.client, pair.server, true, true});
    const bool reverse_lossy =
        r.reverse.lossy && !Explains(j_.loss.blamed, {pair.server, pair.client, true, true});
    const bool slow_forward = r.forward.slow && !forward_lossy;
    const bool slow_reverse = r.reverse.slow && !reverse_lossy;
    // A direction with an end in a split fleet's slow group is the split's evidence.
    const bool split = j_.InSlowGroup(pair.client, pair.server);
    const bool forward = slow_forward && !forward_node && !split && retested &&
                         j_.LinkEvidence(pair.forward.bw_gbps);
    const bool reverse = slow_reverse && !reverse_node && !split && retested &&
                         j_.LinkEvidence(pair.reverse.bw_gbps);
    if (!forward && !reverse && (forward_node || reverse_node)) {
      r.verdict = std::max(r.verdict, Verdict::kCritical);  // its blamed end's
    } else if (split) {
      r.verdict = std::max(r.verdict, Verdict::kWarning);
      return;
    }
    if (forward || reverse) {
      r.verdict = std::max(r.verdict, Verdict::kWarning);
      const std::string direction = forward && reverse ? "both directions"
                                    : forward ? absl::StrCat(A(pair), " -> ", B(pair), " only")
                                              : absl::StrCat(B(pair), " -> ", A(pair), " only");
      const std::string what = absl::StrCat(in_.bandwidth_probe, " ", DescribeFigures(in_, pair),
                                            ": slow in ", direction);
      v1::Finding f = report::MakePair(
          report::kind::kSlowLink, A(pair), B(pair),
          absl::StrCat(
              what, "; ", SlowCriterion(j_, in_.thresholds), LinkCriterion(j_),
              j_.blame.bw[pair.client] == Side::kNone && j_.blame.bw[pair.server] == Side::kNone
                  ? "; both ends are fine with their other peers"
                  : "; the other direction is its blamed end's"));
      auto& e = *f.mutable_evidence();
      if (!std::isnan(pair.forward.bw_gbps)) e["bw_gbps"] = Num(pair.forward.bw_gbps);
      if (!std::isnan(pair.reverse.bw_gbps)) e["bw_reverse_gbps"] = Num(pair.reverse.bw_gbps);
      e["typical_bw_gbps"] = Num(j_.typical.bw.typical);
      e["direction"] = forward && reverse ? "both" : forward ? "forward" : "reverse";
      Unexplained(pair, what, std::move(f));
    } else if (!EndsKnown(pair) &&
               ((slow_forward && !forward_node) || (slow_reverse && !reverse_node))) {
      // Not evidence against the link on its own, but an end with too few peers to be
      // cleared: it cannot be told from the link either.
      r.verdict = std::max(r.verdict, Verdict::kWarning);
      Insufficient(pair,
                   absl::StrCat(in_.bandwidth_probe, " ", DescribeFigures(in_, pair), ": slow"));
    }
  }

  // A pair whose attempts disagree, no flapping node explaining it: the link flaps.
  void Unstable(const PairInput& pair, PairResult& r) {
    if (Explains(j_.stability.blamed, {pair.client, pair.server, true, false})) {
      r.verdict = std::max(r.verdict, Verdict::kCritical);
      return;
    }
    r.verdict = std::max(r.verdict, Verdict::kWarning);
    std::vector<std::string> directions;
    auto add = [&](const std::string& from, const std::string& to, float best, float worst,
                   float next) {
      if (std::isnan(worst) || std::isnan(best) || !(worst < best)) return;
      directions.push_back(absl::StrCat(from, " -> ", to, " ", Num(worst),
                                        std::isnan(next) ? "" : absl::StrCat(", ", Num(next)),
                                        " and at best ", Num(best), " Gb/s"));
    };
    add(A(pair), B(pair), pair.forward.bw_gbps, pair.forward.worst_gbps,
        pair.forward.next_worst_gbps);
    add(B(pair), A(pair), pair.reverse.bw_gbps, pair.reverse.worst_gbps,
        pair.reverse.next_worst_gbps);
    const std::string what =
        absl::StrCat(in_.bandwidth_probe, " attempts disagree over ", pair.attempts,
                     " attempts: ", absl::StrJoin(directions, ", "));
    v1::Finding f = report::MakePair(
        report::kind::kUnstable, A(pair), B(pair),
        absl::StrFormat(
            "%s; fine at best, and twice or more far below the fabric's typical %s Gb/s "
            "(under %s Gb/s: %.1f robust deviations on a log scale, which one "
            "measurement of a healthy pair reaches by chance in 1 %% of sweeps): the "
            "link flaps; both ends are steady with their other peers",
            what, Num(j_.typical.bw.typical), Num(j_.LinkOutlierBelow()), j_.noise.z));
    auto& e = *f.mutable_evidence();
    e["attempts"] = absl::StrCat(pair.attempts);
    e["typical_bw_gbps"] = Num(j_.typical.bw.typical);
    if (!std::isnan(pair.forward.worst_gbps)) e["worst_bw_gbps"] = Num(pair.forward.worst_gbps);
    if (!std::isnan(pair.reverse.worst_gbps))
      e["worst_bw_reverse_gbps"] = Num(pair.reverse.worst_gbps);
    Unexplained(pair, what, std::move(f));
  }

  void HighLatency(const PairInput& pair, PairResult& r, bool retested) {
    const bool explained = Explains(j_.blame.lat, {pair.client, pair.server, true, false});
    if (explained || retested)
      r.verdict = std::max(r.verdict, explained ? Verdict::kCritical : Verdict::kWarning);
    if (explained || !retested) return;
    const std::string what =
        absl::StrCat(A(pair), " -> ", B(pair), ": ", in_.latency_probe, " ", Num(pair.lat_us),
                     " us", r.high_tail ? absl::StrCat(", p99 ", Num(pair.lat_p99_us), " us") : "");
    const bool median = j_.typical.lat.Above(pair.lat_us, in_.thresholds.relative_lat(),
                                             in_.thresholds.max_robust_z()) ||
                        (in_.thresholds.max_lat_us() > 0 && !j_.typical.lat_ceiling_missed &&
                         pair.lat_us > in_.thresholds.max_lat_us());
    v1::Finding f = report::MakePair(
        report::kind::kHighLatencyLink, A(pair), B(pair),
        median ? absl::StrFormat("%s, above %.1f times the fabric's typical %s us and beyond %.1f "
                                 "robust deviations of %s us",
                                 what, in_.thresholds.relative_lat(), Num(j_.typical.lat.typical),
                                 in_.thresholds.max_robust_z(), Num(j_.typical.lat.spread))
               : absl::StrCat(what, "; ", TailCriterion(j_, in_.thresholds, pair)));
    auto& e = *f.mutable_evidence();
    e["lat_us"] = Num(pair.lat_us);
    e["typical_lat_us"] = Num(j_.typical.lat.typical);
    if (r.high_tail) {
      e["lat_p99_us"] = Num(pair.lat_p99_us);
      e["typical_lat_p99_us"] = Num(j_.tails.reference.typical);
      e["jitter_us"] = Num(pair.lat_p99_us - pair.lat_us);
    }
    Unexplained(pair, what, std::move(f));
  }

  const AnalysisInput& in_;
  const Judged& j_;
  AnalysisResult& out_;
  const uint32_t min_peers_;
  std::map<uint32_t, std::vector<std::string>> insufficient_;  // node -> what could not be placed
};

}  // namespace

void AddPairFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out) {
  PairJudge judge(in, j, out);
  for (size_t p = 0; p < in.pairs.size(); ++p) judge.Judge(p);
  judge.Finish();
}

}  // namespace fabricctl::controller
