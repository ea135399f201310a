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
#include "controller/verdict/criteria.h"
#include "controller/verdict/passes.h"

namespace fabricctl::controller {
namespace {

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

}  // namespace fabricctl::controller
