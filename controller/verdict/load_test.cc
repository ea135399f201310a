// Figures taken under different loads: the yardstick is the full rounds', so a pair measured
// while the rest of its round had failed does not make the full rounds' pairs look slow.
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "controller/verdict/analysis.h"
#include "controller/verdict/testing.h"

namespace fabricctl::controller {
namespace {

// A CPU-bound fabric of n nodes (round size n / 2): a pair measured under full load reaches
// `loaded` Gb/s, one measured alone (the round's other pairs failed: `alone`) 1.35 x that,
// each direction a little apart. Every figure records its concurrency.
AnalysisInput UnderLoad(uint32_t n, const std::function<bool(uint32_t, uint32_t)>& alone,
                        float loaded) {
  AnalysisInput in = Sweep(n, [&](uint32_t a, uint32_t b) {
    const float jitter = 1.0f - 0.01f * static_cast<float>((a * 7 + b * 3) % 5);
    return (alone(a, b) ? 1.35f * loaded : loaded) * jitter;
  });
  for (auto& p : in.pairs) {
    const float c = alone(p.client, p.server) ? 1.0f : static_cast<float>(n / 2);
    p.forward.concurrency = p.reverse.concurrency = p.lat_concurrency = c;
  }
  return in;
}

// Node 3 of 4 died after the first round (0-1 and 2-3): in the later rounds 0-2 and 1-2 each
// ran alone, the pairs with node 3 failing at once (left out here: their ends' agent is gone).
bool AfterDeath(uint32_t a, uint32_t b) { return a != 3 && b != 3 && a + b >= 2; }
void KillNode3(AnalysisInput& in) {
  in.nodes[3].reachable = false;
  in.pairs.erase(std::remove_if(in.pairs.begin(), in.pairs.end(),
                                [](const PairInput& p) {
                                  return (p.client == 3 || p.server == 3) &&
                                         p.client + p.server != 5;
                                }),
                 in.pairs.end());
}

}  // namespace

TEST_CASE("Pairs measured alone do not set the yardstick that full rounds are judged by") {
  AnalysisInput in = UnderLoad(4, AfterDeath, 10);
  KillNode3(in);
  REQUIRE(in.pairs.size() == 4);
  const AnalysisResult r = Analyze(in);
  CHECK(Kinds(r) == std::vector<std::string>{"node_unreachable:node-3:"});
  // The typical figure is the full rounds' (about 10), not the lone pairs' (13.5).
  CHECK(r.median_bw_gbps < 10.5f);
  // The same figures with no concurrency recorded: the full-load pair looks slow against the
  // lone pairs (what this rule is for).
  AnalysisInput unknown = in;
  for (auto& p : unknown.pairs)
    p.forward.concurrency = p.reverse.concurrency = p.lat_concurrency = 0;
  const AnalysisResult blind = Analyze(unknown);
  CHECK(blind.median_bw_gbps > 12.0f);
  // 0-1 and 2-3 stand out (2-3 is node 3's, which node_unreachable already speaks for).
  for (size_t k = 0; k < unknown.pairs.size(); ++k) {
    const PairInput& p = unknown.pairs[k];
    CHECK(blind.pairs[k].slow == (p.client + p.server == 1 || p.client + p.server == 5));
    CHECK(!r.pairs[k].slow);
  }
  CHECK(Kinds(blind) == std::vector<std::string>{"node_unreachable:node-3:"});
}

TEST_CASE("A slow link measured under full load is still slow against the full rounds") {
  AnalysisInput in = UnderLoad(
      8, [](uint32_t a, uint32_t b) { return (a == 2 && b == 6) || (a == 6 && b == 2); }, 10);
  for (auto& p : in.pairs) {
    if ((p.client == 1 && p.server == 5) || (p.client == 5 && p.server == 1))
      p.forward.bw_gbps = p.reverse.bw_gbps = 4;
  }
  CHECK(Kinds(Analyze(in)) == std::vector<std::string>{"slow_link:node-5:node-1"});
}

TEST_CASE("A slow link measured alone is judged against the full rounds and still found") {
  // Its lighter load flatters it: 5 Gb/s alone is slow against 10 under load.
  AnalysisInput in = UnderLoad(
      8, [](uint32_t a, uint32_t b) { return (a == 1 && b == 5) || (a == 5 && b == 1); }, 10);
  for (auto& p : in.pairs) {
    if ((p.client == 1 && p.server == 5) || (p.client == 5 && p.server == 1))
      p.forward.bw_gbps = p.reverse.bw_gbps = 5;
  }
  CHECK(Kinds(Analyze(in)) == std::vector<std::string>{"slow_link:node-5:node-1"});
}

TEST_CASE("When most figures were taken alone, the full rounds are still the yardstick") {
  // Six of eight rounds lost pairs: most figures are light, and the few full-load ones are the
  // fabric's figure under load; none of them is slow.
  AnalysisInput in = UnderLoad(
      6, [](uint32_t a, uint32_t b) { return (a + b) % 3 != 0; }, 10);
  const AnalysisResult r = Analyze(in);
  CHECK(Kinds(r).empty());
}

TEST_CASE("Latency under full load is judged against the full rounds' latency") {
  // Lone pairs answer in 20 us, loaded ones in 60 us (CPU-bound hosts): no high latency.
  AnalysisInput in = Sweep(
      4, [](uint32_t, uint32_t) { return 10.0f; },
      [](uint32_t a, uint32_t b) { return AfterDeath(a, b) ? 20.0f : 60.0f + a; });
  KillNode3(in);
  for (auto& p : in.pairs) {
    p.lat_concurrency = AfterDeath(p.client, p.server) ? 1.0f : 2.0f;
    p.forward.concurrency = p.reverse.concurrency = p.lat_concurrency;
  }
  CHECK(Kinds(Analyze(in)) == std::vector<std::string>{"node_unreachable:node-3:"});
  for (auto& p : in.pairs) p.lat_concurrency = 0;  // without the loads, a loaded pair stands out
  CHECK(Kinds(Analyze(in)) ==
        std::vector<std::string>{"high_latency_link:node-0:node-1", "node_unreachable:node-3:"});
}

}  // namespace fabricctl::controller
