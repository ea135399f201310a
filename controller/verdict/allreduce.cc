#include "controller/verdict/allreduce.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/verdict/analysis.h"
#include "probes/common/result.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

// The node whose links slow the ring, and the slow links' description; empty when the ranks
// timed no link.
struct SlowLinks {
  std::string straggler;
  std::string why;  // set when a link is slow
};

SlowLinks FindSlowLinks(const RingOutcome& ring, const v1::CollectivePoint& last) {
  const size_t n = ring.members.size();
  std::vector<double> link(n, 0);
  for (size_t r = 0; r < n && r < ring.rank_results.size(); ++r) {
    const auto& mine = ring.rank_results[r];
    if (mine.collective_size() > 0)
      link[r] = mine.collective(mine.collective_size() - 1).send_time_us();
  }
  // The typical link: the median of the fastest half of the timed ones. A rank that timed no
  // link (0: not timed, or a liar) is no figure at all: counted among the fastest, it would
  // make an honest neighbour look slow.
  std::vector<double> sorted;
  for (double t : link) {
    if (t > 0) sorted.push_back(t);
  }
  std::sort(sorted.begin(), sorted.end());
  sorted.resize((sorted.size() + 1) / 2);
  const double median_link = sorted.empty() ? 0 : Median(sorted);
  std::vector<bool> slow(n, false);
  for (size_t r = 0; r < n; ++r)
    slow[r] = median_link > 0 && link[r] > 0 && link[r] > 2 * median_link;
  SlowLinks out;
  const bool timed_links = std::any_of(link.begin(), link.end(), [](double t) { return t > 0; });
  for (size_t r = 0; r < n && out.straggler.empty(); ++r) {
    if (slow[r] && slow[(r + n - 1) % n]) out.straggler = ring.members[r];  // in and out
  }
  for (size_t r = 0; r < n && out.straggler.empty(); ++r) {
    if (slow[r]) out.straggler = ring.members[r];
  }
  if (out.straggler.empty() && timed_links) {  // nothing stands out: the slowest link's sender
    out.straggler = ring.members[std::max_element(link.begin(), link.end()) - link.begin()];
  }
  if (std::count(slow.begin(), slow.end(), true) > 0) {
    const size_t worst = std::max_element(link.begin(), link.end()) - link.begin();
    out.why = absl::StrFormat(
        "the link out of %s took %.0f us to carry %d bytes on its own, %.1f times a typical link's",
        ring.members[worst], link[worst],
        std::min<uint64_t>(last.size_bytes(), probes::kLinkTimedBytes), link[worst] / median_link);
  }
  return out;
}

}  // namespace

std::vector<v1::Finding> JudgeAllreduce(const RingOutcome& ring, const v1::Thresholds& thresholds) {
  std::vector<v1::Finding> out;
  // What NCCL's logs say, node by node: sockets between nodes, staging through host memory.
  for (const auto& r : ring.rank_results) {
    for (v1::Finding f : r.findings()) {
      f.set_node(r.node());
      out.push_back(std::move(f));
    }
  }
  const v1::ProbeResult& collective = ring.collective;
  if (collective.collective_size() == 0) {
    if (collective.outcome() == v1::PROBE_FAILED || collective.outcome() == v1::PROBE_TIMEOUT) {
      out.push_back(
          report::Make(collective.outcome() == v1::PROBE_TIMEOUT ? report::kind::kProbeTimeout
                                                                 : report::kind::kProbeFailed,
                       collective.node(), absl::StrCat("allreduce: ", collective.reason())));
    }
    return out;
  }
  const v1::CollectivePoint& last = collective.collective(collective.collective_size() - 1);
  std::vector<std::string> why;
  // One rank in all: nccl-tests' busbw (algbw x 2(n-1)/n) is 0 by definition, no floor applies.
  const bool one_rank = last.busbw_gbytes() == 0 && last.algbw_gbytes() > 0;
  if (thresholds.min_allreduce_busbw_gbytes() > 0 && !one_rank &&
      last.busbw_gbytes() < thresholds.min_allreduce_busbw_gbytes()) {
    why.push_back(absl::StrFormat("below %.3f GB/s (thresholds.min_allreduce_busbw_gbytes)",
                                  thresholds.min_allreduce_busbw_gbytes()));
  }
  // The group's own pairwise bandwidth: a bandwidth-optimal ring reaches close to it.
  const double pairwise_gbytes = ring.pairwise_gbps.empty() ? 0 : Median(ring.pairwise_gbps) / 8.0;
  const double relative = thresholds.relative_allreduce_busbw();
  if (pairwise_gbytes > 0 && last.busbw_gbytes() < relative * pairwise_gbytes) {
    why.push_back(absl::StrFormat("below %.0f %% of the group's median pairwise %.3f GB/s",
                                  relative * 100, pairwise_gbytes));
  }
  // Links between nodes: a group of one node has none.
  const SlowLinks slow = ring.members.size() > 1 ? FindSlowLinks(ring, last) : SlowLinks{};
  // Without a threshold to miss, a slow link is still a finding.
  if (why.empty() && !slow.why.empty()) why.push_back(slow.why);
  if (!why.empty()) {
    v1::Finding f = report::Make(
        report::kind::kAllreduceBelowThreshold, slow.straggler,
        absl::StrFormat(
            "allreduce (%s) over %d nodes%s: busbw %.3f GB/s at %d bytes, %s%s",
            collective.device(), ring.members.size(),
            ring.group.empty() ? "" : absl::StrCat(" (", ring.group, ")"), last.busbw_gbytes(),
            last.size_bytes(), absl::StrJoin(why, " and "),
            slow.straggler.empty()
                ? ""
                : absl::StrCat("; the slowest links of the ring are ", slow.straggler, "'s")));
    (*f.mutable_evidence())["busbw_gbytes"] = absl::StrFormat("%.3f", last.busbw_gbytes());
    if (!slow.straggler.empty()) (*f.mutable_evidence())["straggler"] = slow.straggler;
    out.push_back(std::move(f));
  }
  if (last.wrong() > 0) {
    // On the ranks that found them (the first names the finding), not on the group's rank 0.
    std::vector<std::string> found;
    for (const auto& r : ring.rank_results) {
      if (r.collective_size() > 0 && r.collective(r.collective_size() - 1).wrong() > 0) {
        found.push_back(r.node());
      }
    }
    out.push_back(report::Make(
        report::kind::kProbeFailed, found.empty() ? collective.node() : found.front(),
        absl::StrCat("allreduce data check: ", last.wrong(), " wrong elements",
                     found.empty() ? "" : absl::StrCat(", found by ", absl::StrJoin(found, ", "))),
        report::Level::kAlternate));
  }
  return out;
}

}  // namespace fabricctl::controller
