#include "controller/sweep/retest_plan.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "controller/verdict/blame.h"
#include "controller/verdict/retests.h"
#include "probes/catalogue.h"

namespace fabricctl::controller::sweep {

std::vector<Pair> LocalisationPairs(const Fleet& fleet, const AnalysisInput& in,
                                    const AnalysisResult& first, const RoundRunner& runner) {
  std::vector<uint32_t> good;
  for (uint32_t i = 0; i < fleet.nodes.size(); ++i) {
    if (fleet.nodes[i]->reachable && first.nodes[i].verdict == Verdict::kOk &&
        first.nodes[i].pairs > 0) {
      good.push_back(i);
    }
  }
  // In an order of the sweep's own (seeded by its id, so a sweep is repeatable): no one node is
  // every suspect's extra peer, and an agent that lies cannot count on being the deciding vote.
  std::shuffle(good.begin(), good.end(), std::mt19937_64(static_cast<uint64_t>(runner.sweep_id())));
  // Each end gets as many more peers as it lacks to be judged (thresholds.min_node_pairs), the
  // good nodes taken in turn from where the last end left off: each good node serves about as
  // many ends as the others, so the pairs pack into a few rounds however many ends there are
  // (taking the first good ones every time would queue every end behind the same few nodes).
  const uint32_t min_peers = std::max<uint32_t>(1, in.thresholds.min_node_pairs());
  std::vector<Pair> wanted;
  std::set<Pair> chosen;
  std::vector<uint32_t> added(fleet.nodes.size(), 0);
  size_t next = 0;
  for (size_t i = 0; i < in.pairs.size() && !good.empty(); ++i) {
    const PairResult& r = first.pairs[i];
    const PairInput& p = in.pairs[i];
    if (!(r.slow || r.high_latency)) continue;
    if (r.path >= 0 && !r.high_latency) continue;  // a switch-level fault's, not its ends'
    if (first.nodes[p.client].straggler || first.nodes[p.server].straggler) continue;
    for (uint32_t end : {p.client, p.server}) {
      for (size_t tried = 0; tried < good.size() && first.nodes[end].pairs + added[end] < min_peers;
           ++tried) {
        const uint32_t g = good[next];
        next = (next + 1) % good.size();
        if (g == p.client || g == p.server || runner.Measured(end, g) ||
            !chosen.insert({end, g}).second)
          continue;
        wanted.push_back({end, g});
        ++added[end];
      }
    }
  }
  return wanted;
}

}  // namespace fabricctl::controller::sweep

namespace fabricctl::controller::sweep {

// Pairs of a switch-level suspect re-tested per pass.
constexpr size_t kPathRetests = 2;

namespace {

// A switch-level suspect's re-tests this pass: two of its pairs with different ends, the
// least measured first, until its re-tests agree (its other pairs follow its verdict).
std::vector<uint32_t> PathRetests(const AnalysisInput& in, const PathFault& f) {
  std::vector<uint32_t> picked;
  if (RetestsAgree(f.stayed, f.recovered)) return picked;
  std::vector<uint32_t> order = f.pairs;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return in.pairs[x].attempts < in.pairs[y].attempts;
  });
  for (uint32_t p : order) {
    if (picked.size() == kPathRetests) break;
    const PairInput& pair = in.pairs[p];
    const bool shares = std::any_of(picked.begin(), picked.end(), [&](uint32_t q) {
      return in.pairs[q].client == pair.client || in.pairs[q].client == pair.server ||
             in.pairs[q].server == pair.client || in.pairs[q].server == pair.server;
    });
    if (!shares) picked.push_back(p);
  }
  return picked;
}

// The nodes the first analysis blames (Suspect: a straggler, or paths down) and their re-tests
// so far. A suspect whose re-tests recovered more often than they stayed bad is cleared (it
// will not be blamed): its flagged pairs are then re-tested like any other, so that no link is
// named on one measurement. One that the analysis with re-tests required (`confirmed`) blames
// already needs no more: the sweep stops where the verdict agrees (RetestTally::Agree: two of
// its bad pairs stayed bad, where it has two), by the verdict's own count.
class Suspects {
 public:
  Suspects(const Fleet& fleet, const AnalysisInput& in, const AnalysisResult& a,
           const AnalysisResult& confirmed)
      : a_(a), confirmed_(confirmed) {
    tally_ = TallyRetests(
        in,
        [&](size_t p) {
          const PairInput& pair = in.pairs[p];
          return fleet.nodes[pair.client]->reachable && fleet.nodes[pair.server]->reachable &&
                 pair.status != PairStatus::kNotMeasured && a.pairs[p].path < 0;
        },
        [&](size_t p) { return PairFlagged(in, a, p); });
    sides.assign(fleet.nodes.size(), Side::kNone);
    for (uint32_t i = 0; i < sides.size(); ++i) {
      if (a.nodes[i].straggler && Is(i)) sides[i] = a.nodes[i].side;
    }
  }
  // The analyses are held by reference: a temporary would not outlive the constructor.
  Suspects(const Fleet&, const AnalysisInput&, const AnalysisResult&, AnalysisResult&&) = delete;
  bool Is(uint32_t i) const { return Suspect(a_.nodes[i]) && !tally_[i].Cleared(); }
  // Its re-tests agree with its blame already: no more of its pairs need measuring. Asked of
  // suspects only (`confirmed` is empty where the first analysis suspects nobody).
  bool Agree(uint32_t i) const { return Is(i) && Suspect(confirmed_.nodes[i]); }
  // How many more of its pairs to re-test this pass.
  uint32_t Wanted(uint32_t i) const { return tally_[i].Wanted(); }
  // The blamed sides of the stragglers among the suspects.
  std::vector<Side> sides;

 private:
  const AnalysisResult& a_;
  const AnalysisResult& confirmed_;
  std::vector<RetestTally> tally_;
};

// For each suspect whose re-tests do not agree yet, its least measured bad pairs, as many as it
// wants: first those with a peer nobody suspects (`alone`), then those with another suspect
// (`shared`: in a sparse pairing two suspects' pairs may be most of what either has, and one
// re-test serves both).
std::vector<size_t> SuspectRetests(const AnalysisInput& in, const Suspects& suspects,
                                   std::vector<std::vector<size_t>>& alone,
                                   std::vector<std::vector<size_t>>& shared) {
  std::vector<size_t> out;
  auto fewest_first = [&](size_t x, size_t y) {
    return in.pairs[x].attempts < in.pairs[y].attempts;
  };
  for (uint32_t i = 0; i < alone.size(); ++i) {
    if (!suspects.Is(i) || suspects.Agree(i)) continue;
    size_t wanted = suspects.Wanted(i);
    for (auto* list : {&alone[i], &shared[i]}) {
      std::stable_sort(list->begin(), list->end(), fewest_first);
      for (size_t k = 0; k < list->size() && wanted > 0; ++k, --wanted) out.push_back((*list)[k]);
    }
  }
  return out;
}

// `first` then `rest`, each pair once, where it first appears.
std::vector<Pair> FirstThenRest(const std::vector<Pair>& first, const std::vector<Pair>& rest) {
  std::vector<Pair> out;
  std::set<Pair> seen;
  for (const auto* list : {&first, &rest}) {
    for (const Pair& pair : *list) {
      if (seen.insert(pair).second) out.push_back(pair);
    }
  }
  return out;
}

}  // namespace

std::vector<Pair> RetestPairs(const Fleet& fleet, const AnalysisInput& in,
                              const std::vector<const PairRun*>& ordered, bool* bandwidth_only,
                              size_t* deciding) {
  AnalysisInput eager = in;
  eager.require_retest = false;
  const AnalysisResult a = Analyze(eager);
  const size_t n = fleet.nodes.size();
  auto bad = [&](size_t p) { return PairFlagged(in, a, p); };
  // The verdict with re-tests required, which says whose re-tests agree: needed only where the
  // first analysis suspects a node (an analysis of a large sweep takes seconds).
  const bool any_suspect = std::any_of(a.nodes.begin(), a.nodes.end(), Suspect);
  const AnalysisResult confirmed = any_suspect ? Analyze(in) : AnalysisResult();
  const Suspects suspects(fleet, in, a, confirmed);
  auto suspect = [&](uint32_t i) { return suspects.Is(i); };
  // A slow direction the suspects' blamed sides do not explain (a slow link beside a host that
  // only sends slowly) is the link's to answer for: re-tested like any other.
  auto unexplained_slow = [&](size_t p) {
    const PairResult& r = a.pairs[p];
    const PairInput& pair = in.pairs[p];
    return (r.forward.slow && !Explains(suspects.sides, {pair.client, pair.server, true, true})) ||
           (r.reverse.slow && !Explains(suspects.sides, {pair.server, pair.client, true, true}));
  };
  // A link never re-tested with a clear deficit on its own (a slow direction no suspect
  // explains below relative_bw x typical: slow without the outlier test) waits on one re-test
  // for its verdict, while a link re-tested already has one on two attempts: the former go
  // first among the links, so that a small budget does not spend every pass on one of two
  // slow links of a host (their re-tests share it: a round each). Marginal deficits keep the
  // analysis's order: a noisy fabric flags many by chance, and CPU-bound figures fall low twice
  // far more often than independent ones would, so one re-test each would confirm noise. A
  // split fleet's slow group's pairs are the split's evidence, named by no link verdict.
  const double clear_bar = in.thresholds.relative_bw() * a.median_bw_gbps;
  auto unconfirmed_clear = [&](size_t p) {
    const PairResult& r = a.pairs[p];
    const PairInput& pair = in.pairs[p];
    if (pair.attempts >= 2 || a.nodes[pair.client].split_slow || a.nodes[pair.server].split_slow)
      return false;
    return (r.forward.slow && pair.forward.bw_gbps < clear_bar &&
            !Explains(suspects.sides, {pair.client, pair.server, true, true})) ||
           (r.reverse.slow && pair.reverse.bw_gbps < clear_bar &&
            !Explains(suspects.sides, {pair.server, pair.client, true, true}));
  };
  std::vector<std::vector<size_t>> alone(n), shared(n);  // a suspect's bad pairs (SuspectRetests)
  // First the pairs that decide a node's or a switch element's verdict, then the links'.
  std::vector<Pair> first, clear, rest;
  bool only_bw = true;
  auto want = [&](size_t p, bool decides = false) {
    (decides                ? first
     : unconfirmed_clear(p) ? clear
                            : rest)
        .push_back({ordered[p]->client, ordered[p]->server});
    const PairResult& r = a.pairs[p];
    only_bw = only_bw && (r.slow || r.disagrees || r.forward.lossy || r.reverse.lossy) &&
              !r.high_latency && in.pairs[p].status == PairStatus::kMeasured;
  };
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    const PairInput& pair = in.pairs[p];
    if (!fleet.nodes[pair.client]->reachable || !fleet.nodes[pair.server]->reachable) continue;
    if (pair.status == PairStatus::kNotMeasured) continue;
    // Attempts that disagree are measured until they are enough to say the pair is unstable.
    if (a.pairs[p].disagrees && !a.pairs[p].unstable && !bad(p) &&
        pair.attempts < kUnstableAttempts) {
      want(p);
      continue;
    }
    if (!bad(p) || a.pairs[p].path >= 0) continue;
    const bool by_client = suspect(pair.client), by_server = suspect(pair.server);
    if ((!by_client && !by_server) || unexplained_slow(p)) {
      want(p);
      continue;
    }
    for (uint32_t end : {pair.client, pair.server}) {
      const uint32_t other = end == pair.client ? pair.server : pair.client;
      if (suspect(end)) (suspect(other) ? shared : alone)[end].push_back(p);
    }
  }
  for (size_t p : SuspectRetests(in, suspects, alone, shared)) want(p, /*decides=*/true);
  for (const PathFault& f : a.paths) {
    for (uint32_t p : PathRetests(in, f)) want(p, /*decides=*/true);
  }
  if (bandwidth_only) *bandwidth_only = only_bw;
  if (deciding) *deciding = std::set<Pair>(first.begin(), first.end()).size();
  clear.insert(clear.end(), rest.begin(), rest.end());
  return FirstThenRest(first, clear);
}

}  // namespace fabricctl::controller::sweep
