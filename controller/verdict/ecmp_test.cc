// slow_ecmp_link: one member of the equal-cost paths between leaves, from the flows of the pairs'
// bandwidth probes and their traces (ecmp.h).
#include <catch2/catch.hpp>
#include <random>

#include "controller/verdict/analysis.h"
#include "controller/verdict/testing.h"

namespace fabricctl::controller {
namespace {

constexpr uint32_t kPerLeaf = 3;

uint32_t LeafOf(uint32_t node) { return node / kPerLeaf + 1; }

// A routed fabric: n nodes, kPerLeaf a leaf, `spines` spines; every pair's two directions carry
// `flows` flows each, hashed onto a spine at random; a flow between leaves that crosses the link
// leaf-`bad_leaf` - spine-`bad_spine` runs at `slow` of the rest, and every flow has the noise of
// healthy TCP flows sharing a link (up to 30 % apart). Traced unless `traced` is false.
AnalysisInput Routed(uint32_t n, uint32_t spines, uint32_t bad_leaf, uint32_t bad_spine, float slow,
                     bool traced = true, uint32_t flows = 8) {
  AnalysisInput in = Sweep(n, [](uint32_t, uint32_t) { return 10.0f; });
  in.levels = {"leaf"};
  for (uint32_t i = 0; i < n; ++i) in.nodes[i].place = {"leaf-" + std::to_string(LeafOf(i))};
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> spine(1, spines);
  std::uniform_real_distribution<float> noise(0.7f, 1.0f);
  auto router = [&](const std::string& name) {
    for (size_t k = 0; k < in.routers.size(); ++k)
      if (in.routers[k] == name) return static_cast<int32_t>(k);
    in.routers.push_back(name);
    return static_cast<int32_t>(in.routers.size() - 1);
  };
  for (uint32_t p = 0; p < in.pairs.size(); ++p) {
    for (bool reverse : {false, true}) {
      const uint32_t from = reverse ? in.pairs[p].server : in.pairs[p].client;
      const uint32_t to = reverse ? in.pairs[p].client : in.pairs[p].server;
      for (uint32_t k = 0; k < flows; ++k) {
        FlowInput f;
        f.complete = traced;
        f.pair = p;
        f.reverse = reverse;
        f.bw_gbps = 1.25f * noise(rng);
        const std::string a = "leaf-" + std::to_string(LeafOf(from));
        const std::string b = "leaf-" + std::to_string(LeafOf(to));
        if (a != b) {
          const uint32_t s = spine(rng);
          if (s == bad_spine && (LeafOf(from) == bad_leaf || LeafOf(to) == bad_leaf))
            f.bw_gbps *= slow;
          if (traced) f.hops = {router(a), router("spine-" + std::to_string(s)), router(b)};
        } else if (traced) {
          f.hops = {router(a)};
        }
        in.flows.push_back(f);
      }
    }
  }
  return in;
}

std::vector<std::string> Named(const AnalysisResult& r) {
  std::vector<std::string> out;
  for (const auto& f : r.findings) {
    if (f.severity() == v1::SEVERITY_OK) continue;
    out.push_back(f.kind() + " " + f.node() + f.peer() + f.device());
  }
  return out;
}

}  // namespace

TEST_CASE("A slow leaf-spine link is named from its flows, and no host is blamed") {
  // Two leaves: the flows that cross leaf-1 - spine-2 cross spine-2 - leaf-2 too, and no flow
  // tells the two apart: both are named, as one fault.
  const AnalysisResult r = Analyze(Routed(6, 2, 1, 2, 0.25f));
  CHECK(Named(r) == std::vector<std::string>{"slow_ecmp_link leaf-1 - spine-2, leaf-2 - spine-2"});
  REQUIRE(r.paths.size() == 1);
  CHECK(r.paths[0].kind == PathFault::Kind::kEcmpLink);
  CHECK(r.paths[0].slow_flows >= 4);
  CHECK(r.paths[0].flow_share < 0.5);
  for (const auto& f : r.findings) CHECK(f.action() != v1::ACTION_DRAIN);
}

TEST_CASE("A flow whose trace has a gap does not tell two links apart") {
  AnalysisInput in = Routed(6, 2, 1, 2, 0.25f);
  // One flow through spine-2 whose last router did not answer: it shows leaf-1 - spine-2 only.
  const int32_t spine2 = static_cast<int32_t>(
      std::find(in.routers.begin(), in.routers.end(), "spine-2") - in.routers.begin());
  for (auto& f : in.flows) {
    if (f.hops.size() == 3 && f.hops[1] == spine2) {
      f.hops[2] = -1;
      f.complete = false;
      break;
    }
  }
  CHECK(Named(Analyze(in)) ==
        std::vector<std::string>{"slow_ecmp_link leaf-1 - spine-2, leaf-2 - spine-2"});
}

TEST_CASE("With three leaves the flows tell the bad link from the spine's other links") {
  const AnalysisResult r = Analyze(Routed(9, 2, 1, 2, 0.25f));
  CHECK(Named(r) == std::vector<std::string>{"slow_ecmp_link leaf-1 - spine-2"});
}

TEST_CASE("A healthy routed fabric with noisy flows raises nothing") {
  for (uint32_t spines : {2u, 4u}) {
    const AnalysisResult r = Analyze(Routed(9, spines, 0, 0, 1.0f));
    CHECK(Named(r).empty());
  }
}

TEST_CASE("A member slower by less than min_effect is not named") {
  const AnalysisResult r = Analyze(Routed(6, 2, 1, 2, 0.9f));
  CHECK(Named(r).empty());
}

TEST_CASE("One pair's slow flows are not a link: a second pair must agree") {
  AnalysisInput in = Routed(6, 2, 0, 0, 1.0f);
  // Pair 0's flows over spine-2 slow, nobody else's.
  const int32_t spine2 = static_cast<int32_t>(
      std::find(in.routers.begin(), in.routers.end(), "spine-2") - in.routers.begin());
  for (auto& f : in.flows) {
    if (f.pair == 0 && f.hops.size() == 3 && f.hops[1] == spine2) f.bw_gbps *= 0.2f;
  }
  CHECK(Named(Analyze(in)).empty());
}

TEST_CASE("One agent's flows cannot name a link: a second sender must agree") {
  AnalysisInput in = Routed(6, 2, 0, 0, 1.0f);
  // Every flow node-0 sends over spine-2 slow, to each of its peers on the other leaf: many
  // pairs, one sender (a lying or broken agent reports what it likes of its own flows).
  const int32_t spine2 = static_cast<int32_t>(
      std::find(in.routers.begin(), in.routers.end(), "spine-2") - in.routers.begin());
  for (auto& f : in.flows) {
    const PairInput& p = in.pairs[f.pair];
    const uint32_t sender = f.reverse ? p.server : p.client;
    if (sender == 0 && f.hops.size() == 3 && f.hops[1] == spine2) f.bw_gbps *= 0.2f;
  }
  CHECK(Named(Analyze(in)).empty());
}

TEST_CASE("Without traces the paths between the two leaves are named, by their flows") {
  const AnalysisResult r = Analyze(Routed(6, 2, 1, 2, 0.25f, /*traced=*/false));
  CHECK(Named(r) == std::vector<std::string>{"slow_ecmp_link leaf-1 <-> leaf-2"});
  for (const auto& f : r.findings) CHECK(f.action() != v1::ACTION_DRAIN);
}

}  // namespace fabricctl::controller
