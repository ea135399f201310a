// The pairs' findings: slow, lossy, unstable and dead links, and their tails, each pair judged
// once (PairJudge).
#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/verdict/blame.h"
#include "controller/verdict/criteria.h"
#include "controller/verdict/passes.h"
#include "report/findings.h"

namespace fabricctl::controller {
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
