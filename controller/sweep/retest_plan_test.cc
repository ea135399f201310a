// Which pairs a sweep re-tests before a verdict (RetestPairs), on constructed figures.
#include "controller/sweep/retest_plan.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "controller/sweep/fleet.h"
#include "controller/sweep/rounds.h"
#include "controller/verdict/testing.h"

namespace fabricctl::controller::sweep {
namespace {

// A sweep of `n` nodes over `pairs` only (each in either orientation), nodes 0 and 1 slow (30
// against 100), every pair measured once; with the fleet and the runs RetestPairs reads.
struct Sparse {
  Sparse(uint32_t n, const std::vector<Pair>& pairs) {
    in = controller::Sweep(
        n, [](uint32_t a, uint32_t b) { return a <= 1 || b <= 1 ? 30.0f : 100.0f; });
    const std::set<Pair> wanted(pairs.begin(), pairs.end());
    std::vector<PairInput> kept;
    for (PairInput& pair : in.pairs) {
      if (!wanted.count({pair.client, pair.server}) && !wanted.count({pair.server, pair.client}))
        continue;
      pair.attempts = 1;
      kept.push_back(pair);
      auto run = std::make_unique<PairRun>();
      run->client = pair.client;
      run->server = pair.server;
      run->attempts = 1;
      runs.push_back(std::move(run));
    }
    in.pairs = kept;
    for (uint32_t i = 0; i < n; ++i) {
      fleet.nodes.push_back(std::make_unique<Node>());
      fleet.nodes.back()->name = "node-" + std::to_string(i);
    }
  }
  // The pairs that decide a verdict, in either orientation as {lower, higher}.
  std::set<Pair> Deciding() const {
    std::vector<const PairRun*> ordered;
    for (const auto& run : runs) ordered.push_back(run.get());
    size_t deciding = 0;
    const std::vector<Pair> pairs = RetestPairs(fleet, in, ordered, nullptr, &deciding);
    std::set<Pair> out;
    for (size_t k = 0; k < deciding; ++k) {
      out.insert(
          {std::min(pairs[k].first, pairs[k].second), std::max(pairs[k].first, pairs[k].second)});
    }
    return out;
  }
  void Retested(const Pair& p) {
    for (size_t k = 0; k < in.pairs.size(); ++k) {
      if (std::min(in.pairs[k].client, in.pairs[k].server) == p.first &&
          std::max(in.pairs[k].client, in.pairs[k].server) == p.second) {
        in.pairs[k].attempts = runs[k]->attempts = 2;
      }
    }
  }
  AnalysisInput in;
  Fleet fleet;
  std::vector<std::unique_ptr<PairRun>> runs;
};

}  // namespace

// Healthy pairs among nodes 2 to 8: a ring and its chords.
std::vector<Pair> Healthy() {
  std::vector<Pair> out;
  for (uint32_t i = 2; i <= 8; ++i) {
    out.push_back({i, i == 8 ? 2 : i + 1});
    out.push_back({i, (i + 1) % 7 + 2});
  }
  return out;
}

TEST_CASE("a suspect's re-tests: two of its pairs, with two peers, in one pass") {
  std::vector<Pair> pairs = Healthy();
  for (uint32_t peer = 2; peer <= 8; ++peer) pairs.push_back({1, peer});
  Sparse s(9, pairs);
  const std::set<Pair> first = s.Deciding();
  CHECK(first.size() == 2);
  CHECK(std::all_of(first.begin(), first.end(), [](const Pair& p) { return p.first == 1; }));
}

TEST_CASE("two suspects paired mostly with each other: their shared pair is re-tested for both") {
  // A sparse pairing: nodes 0 and 1 slow, node 0 with one peer besides node 1.
  std::vector<Pair> pairs = Healthy();
  for (const Pair& p : std::vector<Pair>{{0, 1}, {0, 2}, {1, 3}, {1, 4}}) pairs.push_back(p);
  Sparse s(9, pairs);
  const std::set<Pair> first = s.Deciding();
  CHECK(first == std::set<Pair>{{0, 1}, {0, 2}, {1, 3}, {1, 4}});
  for (const Pair& p : first) s.Retested(p);
  CHECK(s.Deciding().empty());  // their re-tests agree: both blamed
  CHECK(Kinds(Analyze(s.in)) ==
        std::vector<std::string>{"straggler_node:node-0:", "straggler_node:node-1:"});
}

}  // namespace fabricctl::controller::sweep
