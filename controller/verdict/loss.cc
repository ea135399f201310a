// Loss as evidence: each bandwidth direction's retransmitted share of its TCP segments, judged
// against the fabric's own share. A direction is lossy when its sender retransmitted at least
// thresholds.min_loss_rate of its segments, ten times the fabric's typical share or more
// (the median direction's: a fabric that loses alike everywhere blames nobody), and three times
// the upper quartile's (a fabric whose directions scatter around a small loss blames none of
// them), the median and quartile of the nodes that do not stand out (ReferenceLoss). A node lossy
// in what it sends (or receives) to more than half of its peers is blamed on that side, as
// stragglers are (Blame); the other lossy directions are their links'. With re-tests
// on, a pair is lossy only on a figure that survived a re-test (the sweep re-tests lossy pairs,
// and a direction's share is the least of its attempts': PairRun::least_loss),
// and a node only when one of its lossy pairs did. Pairs a switch-level fault explains are
// left out: their loss is the switch's; so are the directions of a node named slow (a
// bottleneck drops what TCP sends past it) unless one loses several times its others.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/verdict/blame.h"
#include "controller/verdict/passes.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

constexpr double kLossFactor = 10;     // an order of magnitude above the fabric's own share
constexpr double kQuartileFactor = 3;  // well above the fabric's upper quartile

std::string Percent(double rate) { return absl::StrFormat("%.2f %%", rate * 100); }

bool OnSide(Side blamed, Side side) { return blamed == side || blamed == Side::kBoth; }

// What each node blamed slow loses on each blamed side, direction by direction (pair index,
// share), so that a direction can be held against the node's others.
struct SlowNodeLoss {
  std::vector<std::vector<std::pair<size_t, double>>> send, receive;  // by node

  SlowNodeLoss(const AnalysisInput& in, const std::vector<Side>& slow)
      : send(in.nodes.size()), receive(in.nodes.size()) {
    for (size_t k = 0; k < in.pairs.size(); ++k) {
      const PairInput& p = in.pairs[k];
      Add(slow, p.client, p.server, k, p.forward.loss_rate);
      Add(slow, p.server, p.client, k, p.reverse.loss_rate);
    }
  }
  void Add(const std::vector<Side>& slow, uint32_t from, uint32_t to, size_t k, double loss) {
    if (std::isnan(loss)) return;
    if (OnSide(slow[from], Side::kSend)) send[from].push_back({k, loss});
    if (OnSide(slow[to], Side::kReceive)) receive[to].push_back({k, loss});
  }
  // The median share of the node's other directions on that side (NaN: none).
  static double Others(const std::vector<std::pair<size_t, double>>& side, size_t k) {
    std::vector<double> others;
    for (const auto& [pair, loss] : side) {
      if (pair != k) others.push_back(loss);
    }
    return others.empty() ? std::nan("") : Median(others);
  }
  // Whether the slow node at an end explains what the direction from -> to of pair k loses: a
  // slow port is where TCP loses packets to find its rate, alike on all its directions; one
  // that loses kQuartileFactor times more than its others is a lossy link of its own.
  bool Explains(const std::vector<Side>& slow, uint32_t from, uint32_t to, size_t k,
                double loss) const {
    for (const auto& [node, side, list] :
         {std::tuple{from, Side::kSend, &send}, std::tuple{to, Side::kReceive, &receive}}) {
      if (!OnSide(slow[node], side)) continue;
      const double others = Others((*list)[node], k);
      if (std::isnan(others) || loss < kQuartileFactor * others) return true;
    }
    return false;
  }
};

// One direction's retransmitted share, sender to receiver.
struct LossDirection {
  uint32_t from, to;
  double rate;
};

// What a direction must lose to be lossy, and the fabric's typical share, from the directions
// of the nodes that do not stand out. A node's directions are 2/n of all (both sides): half at
// 4 nodes, above the upper quartile up to 8, so a lossy host would otherwise set its own bar.
// The nodes are ranked by their larger median share (of what they send or receive); the k
// worst are left out when the k-th of them reaches the bar the others' directions set. k is at
// most a quarter of the nodes measured (one from 3 nodes): a lossy host is an outlier, while a
// group that loses alike (a leaf, a rail) is a fault of what they share, not of each of them,
// and stays in the reference. k: the largest power of two that qualifies, refined by bisecting
// up to the next (O(log n) passes). A fabric that loses alike everywhere leaves nobody out.
struct LossReference {
  double typical = 0, bar = 0;
};

class ReferenceLoss {
 public:
  ReferenceLoss(const std::vector<LossDirection>& dirs, size_t n, double floor)
      : dirs_(dirs), floor_(floor), rank_(n, 0), ranked_(n, 0) {
    std::vector<std::vector<double>> sends(n), receives(n);
    for (const LossDirection& d : dirs) {
      sends[d.from].push_back(d.rate);
      receives[d.to].push_back(d.rate);
    }
    std::vector<double> share(n, 0);  // by node: its larger median share
    std::vector<uint32_t> worst_first(n);
    for (uint32_t i = 0; i < n; ++i) {
      worst_first[i] = i;
      measured_ += !sends[i].empty() || !receives[i].empty();
      for (const auto* side : {&sends[i], &receives[i]}) {
        if (!side->empty()) share[i] = std::max(share[i], Median(*side));
      }
    }
    std::stable_sort(worst_first.begin(), worst_first.end(),
                     [&](uint32_t a, uint32_t b) { return share[a] > share[b]; });
    for (uint32_t r = 0; r < n; ++r) {
      rank_[worst_first[r]] = r;
      ranked_[r] = share[worst_first[r]];
    }
  }

  LossReference Get() const {
    const size_t most = measured_ < 3 ? 0 : std::max<size_t>(1, (measured_ - 1) / 4);
    auto stands_out = [&](size_t k) { return k <= most && ranked_[k - 1] >= Without(k).bar; };
    size_t good = 0;  // stands_out(good), or 0
    for (size_t k = 1; k <= most; k *= 2) {
      if (stands_out(k)) good = k;
    }
    if (good == 0) return Without(0);
    size_t bad = std::min(2 * good, most + 1);
    while (bad - good > 1) {
      const size_t mid = good + (bad - good) / 2;
      (stands_out(mid) ? good : bad) = mid;
    }
    return Without(good);
  }

 private:
  // The reference of the directions between nodes ranked k or later.
  LossReference Without(size_t k) const {
    std::vector<double> rates;
    for (const LossDirection& d : dirs_) {
      if (rank_[d.from] >= k && rank_[d.to] >= k) rates.push_back(d.rate);
    }
    LossReference ref;
    if (rates.empty()) {
      ref.bar = std::numeric_limits<double>::infinity();
      return ref;
    }
    const size_t q = rates.size() * 3 / 4;
    std::nth_element(rates.begin(), rates.begin() + q, rates.end());
    const double quartile = rates[q];
    ref.typical = Median(std::move(rates));
    ref.bar = std::max({floor_, kLossFactor * ref.typical, kQuartileFactor * quartile});
    return ref;
  }

  const std::vector<LossDirection>& dirs_;
  const double floor_;
  std::vector<uint32_t> rank_;  // by node: 0 for the node that loses most
  std::vector<double> ranked_;  // by rank: the node's larger median share
  size_t measured_ = 0;         // nodes with a direction
};

// A node whose own drop counters account for what its senders retransmitted to it: the host
// drops (a busy CPU, interrupts on the wrong cores), the links are fine. Said once per node.
void AddHostDropFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out) {
  for (uint32_t i = 0; i < in.nodes.size(); ++i) {
    const auto& drops = j.loss.host_drops[i];
    if (drops.empty()) continue;
    std::vector<std::string> from;
    double worst = 0;
    for (const auto& [sender, rate] : drops) {
      from.push_back(absl::StrCat(in.nodes[sender].name, " ", Percent(rate)));
      worst = std::max(worst, rate);
    }
    const std::string& name = in.nodes[i].name;
    out.nodes[i].verdict = std::max(out.nodes[i].verdict, Verdict::kWarning);
    v1::Finding f = report::Make(
        report::kind::kHostDropping, name,
        absl::StrCat(name, ": dropped what it received itself: ", in.bandwidth_probe, " from ",
                     absl::StrJoin(from, ", "),
                     " retransmitted past the lossy bar, and this host's own drop counters "
                     "(TCP backlog and receive queues, input backlog, NIC ring) rose enough to "
                     "account for it: a busy CPU or its interrupts' affinity, not the links"));
    (*f.mutable_evidence())["senders"] = absl::StrCat(drops.size());
    (*f.mutable_evidence())["loss_rate"] = absl::StrFormat("%.5f", worst);
    (*f.mutable_evidence())["typical_loss_rate"] = absl::StrFormat("%.5f", j.loss.typical);
    out.findings.push_back(std::move(f));
  }
}

}  // namespace

Loss JudgeLoss(const AnalysisInput& in, const PathFaults& paths) {
  Loss loss;
  loss.lossy.assign(in.pairs.size(), {false, false});
  loss.blamed.assign(in.nodes.size(), Side::kNone);
  loss.host_drops.assign(in.nodes.size(), {});
  std::vector<LossDirection> dirs;
  for (size_t k = 0; k < in.pairs.size(); ++k) {
    const PairInput& p = in.pairs[k];
    if (p.status != PairStatus::kMeasured || paths.pair_fault[k] >= 0) continue;
    for (const auto& d : p.Directions()) {
      if (!std::isnan(d.figures.loss_rate)) dirs.push_back({d.from, d.to, d.figures.loss_rate});
    }
  }
  if (dirs.empty()) return loss;
  loss.known = true;
  // The fabric's own scatter: a quarter of its directions retransmit more than the upper
  // quartile by chance (a CPU-bound host's veth drops a little everywhere, more here and there);
  // a lossy one retransmits several times that. The quartile is the healthy nodes' (a link is
  // a small share of the directions; a lossy host's are left out: ReferenceLoss).
  const LossReference ref =
      ReferenceLoss(dirs, in.nodes.size(), in.thresholds.min_loss_rate()).Get();
  loss.typical = ref.typical;
  loss.bar = ref.bar;
  std::vector<Observation> observations;
  std::vector<bool> confirmed(in.nodes.size(), !in.require_retest);
  for (size_t k = 0; k < in.pairs.size(); ++k) {
    const PairInput& p = in.pairs[k];
    if (p.status != PairStatus::kMeasured || paths.pair_fault[k] >= 0) continue;
    bool any = false;
    for (const auto& d : p.Directions()) {
      const float rate = d.figures.loss_rate;
      bool lossy = !std::isnan(rate) && rate >= loss.bar && rate > 0;
      // The receiving host threw away what was retransmitted: its CPU, not the link.
      if (lossy && d.figures.receiver_dropped) {
        if (!in.require_retest || p.attempts >= 2) loss.host_drops[d.to].push_back({d.from, rate});
        lossy = false;
      }
      loss.lossy[k][d.reverse ? 1 : 0] = lossy;
      any = any || lossy;
      if (!std::isnan(rate)) observations.push_back({d.from, d.to, lossy, true});
    }
    if (any && p.attempts >= 2) confirmed[p.client] = confirmed[p.server] = true;
  }
  loss.blamed = Blame(in.nodes.size(), observations,
                      std::max<uint32_t>(1, in.thresholds.min_node_pairs()), confirmed);
  return loss;
}

void AddLossFindings(const AnalysisInput& in, const Judged& j, AnalysisResult& out) {
  if (!j.loss.known) return;
  const double bar = j.loss.bar;
  const std::string criterion = absl::StrCat(
      "lossy is a sender retransmitting at least ", Percent(bar), " of its segments (",
      Percent(in.thresholds.min_loss_rate()), " at least, ten times the fabric's typical ",
      Percent(j.loss.typical), " and three times its upper quartile)");
  for (uint32_t i = 0; i < in.nodes.size(); ++i) {
    if (j.loss.blamed[i] == Side::kNone) continue;
    std::vector<double> mine;
    for (const PairInput& p : in.pairs) {
      const bool sends = j.loss.blamed[i] != Side::kReceive,
                 receives = j.loss.blamed[i] != Side::kSend;
      if ((p.client == i && sends) || (p.server == i && receives))
        mine.push_back(p.forward.loss_rate);
      if ((p.server == i && sends) || (p.client == i && receives))
        mine.push_back(p.reverse.loss_rate);
    }
    mine.erase(std::remove_if(mine.begin(), mine.end(), [](double x) { return std::isnan(x); }),
               mine.end());
    const char* side = j.loss.blamed[i] == Side::kBoth   ? "what it sends and receives"
                       : j.loss.blamed[i] == Side::kSend ? "what it sends"
                                                         : "what it receives";
    const std::string& name = in.nodes[i].name;
    out.nodes[i].verdict = std::max(out.nodes[i].verdict, Verdict::kCritical);
    v1::Finding f =
        report::Make(report::kind::kLossyLink, name,
                     absl::StrCat(name, ": ", in.bandwidth_probe, " loses ", side,
                                  " with most of its peers: a median ", Percent(Median(mine)),
                                  " of segments retransmitted; ", criterion),
                     report::Level::kAlternate);
    (*f.mutable_evidence())["loss_rate"] = absl::StrFormat("%.5f", Median(mine));
    (*f.mutable_evidence())["typical_loss_rate"] = absl::StrFormat("%.5f", j.loss.typical);
    out.findings.push_back(std::move(f));
  }
  AddHostDropFindings(in, j, out);
  const SlowNodeLoss slow(in, j.blame.bw);
  for (size_t k = 0; k < in.pairs.size(); ++k) {
    const PairInput& p = in.pairs[k];
    PairResult& r = out.pairs[k];
    const bool retested = !in.require_retest || p.attempts >= 2;
    auto explained = [&](uint32_t from, uint32_t to, double loss) {
      return Explains(j.loss.blamed, {from, to, true, true}) ||
             slow.Explains(j.blame.bw, from, to, k, loss);
    };
    const bool forward =
        retested && r.forward.lossy && !explained(p.client, p.server, p.forward.loss_rate);
    const bool reverse =
        retested && r.reverse.lossy && !explained(p.server, p.client, p.reverse.loss_rate);
    if (!forward && !reverse) continue;
    const std::string& a = in.nodes[p.client].name;
    const std::string& b = in.nodes[p.server].name;
    std::vector<std::string> parts, slow;
    if (forward) parts.push_back(absl::StrCat(a, " -> ", b, " ", Percent(p.forward.loss_rate)));
    if (reverse) parts.push_back(absl::StrCat(b, " -> ", a, " ", Percent(p.reverse.loss_rate)));
    // Its slow directions are its loss's (slow_link leaves them to this finding).
    if (forward && r.forward.slow)
      slow.push_back(absl::StrFormat("%s -> %s %.2f Gb/s", a, b, p.forward.bw_gbps));
    if (reverse && r.reverse.slow)
      slow.push_back(absl::StrFormat("%s -> %s %.2f Gb/s", b, a, p.reverse.bw_gbps));
    const std::string slow_too =
        slow.empty()
            ? ""
            : absl::StrFormat(
                  "; slow as well (%s against a typical %.2f Gb/s), as TCP is over a lossy link",
                  absl::StrJoin(slow, ", "), j.typical.bw.typical);
    r.verdict = std::max(r.verdict, Verdict::kWarning);
    v1::Finding f = report::MakePair(
        report::kind::kLossyLink, a, b,
        absl::StrCat(in.bandwidth_probe, " retransmitted ", absl::StrJoin(parts, ", "),
                     " of its segments", slow_too, "; ", criterion));
    (*f.mutable_evidence())["loss_rate"] =
        absl::StrFormat("%.5f", forward ? p.forward.loss_rate : p.reverse.loss_rate);
    (*f.mutable_evidence())["typical_loss_rate"] = absl::StrFormat("%.5f", j.loss.typical);
    (*f.mutable_evidence())["direction"] = forward && reverse ? "both"
                                           : forward          ? "forward"
                                                              : "reverse";
    out.findings.push_back(std::move(f));
  }
}

}  // namespace fabricctl::controller
