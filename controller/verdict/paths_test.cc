// Switch-level faults: slow pairs explained by what groups of nodes share (a path between two
// leaves, a leaf's uplink, a leaf's switch), with a topology and without one.
#include <catch2/catch.hpp>
#include <random>

#include "controller/verdict/analysis.h"
#include "controller/verdict/testing.h"
#include "report/builder.h"

namespace fabricctl::controller {
namespace {

// Nodes 0..n-1 over leaves of `per_leaf` nodes each ("leaf-1", "leaf-2", ...), when `placed`.
AnalysisInput Leaves(uint32_t n, uint32_t per_leaf, const Figure& bw, bool placed = true) {
  AnalysisInput in = Sweep(n, bw);
  if (placed) {
    in.levels = {"leaf"};
    for (uint32_t i = 0; i < n; ++i)
      in.nodes[i].place = {"leaf-" + std::to_string(i / per_leaf + 1)};
  }
  return in;
}

uint32_t LeafOf(uint32_t node, uint32_t per_leaf) { return node / per_leaf; }

std::vector<std::string> Drained(const AnalysisResult& r) {
  std::vector<std::string> drained;
  for (const auto& f : r.findings) {
    if (f.action() == v1::ACTION_DRAIN) drained.push_back(f.node());
  }
  return drained;
}

}  // namespace

TEST_CASE("A slow path between two leaves is one slow_path naming both, and no host is blamed") {
  // Six hosts on two leaves, every pair across them at a fifth of the rate: each host has three
  // of five peers slow, and the fabric's typical figure would be a slow one.
  auto bw = [](uint32_t a, uint32_t b) { return LeafOf(a, 3) != LeafOf(b, 3) ? 20.0f : 100.0f; };
  const AnalysisResult r = Analyze(Leaves(6, 3, bw));
  REQUIRE(Kinds(r) == std::vector<std::string>{"slow_path::"});
  const v1::Finding& f = r.findings[0];
  CHECK(f.severity() == v1::SEVERITY_CRITICAL);
  CHECK(f.action() == v1::ACTION_INVESTIGATE);
  CHECK(f.device() == "leaf-1 <-> leaf-2");
  CHECK(f.evidence().at("members") == "node-0,node-1,node-2");
  CHECK(f.evidence().at("peer_members") == "node-3,node-4,node-5");
  CHECK(f.evidence().at("slow_pairs") == "9");
  CHECK(f.detail().find("9 of 9 measured pairs between leaf leaf-1 and leaf leaf-2") !=
        std::string::npos);
  CHECK(f.evidence().count("switch_ports") == 0);  // none known here
  CHECK(Drained(r).empty());
  CHECK(r.median_bw_gbps == Approx(100.0));
  for (const auto& node : r.nodes) CHECK(node.verdict == Verdict::kOk);
  CHECK(report::WorstSeverity(r.findings) == v1::SEVERITY_CRITICAL);
}

TEST_CASE("Without a topology, the same split is one slow_path naming the groups found") {
  for (auto [n, k] :
       {std::pair{6u, 3u}, std::pair{8u, 3u}, std::pair{8u, 4u}, std::pair{12u, 5u}}) {
    INFO(n << " nodes, " << k << " slow to the rest");
    // Hosts 0..k-1 slow only to the others (3 of 8: they would be drained as stragglers).
    auto bw = [k = k](uint32_t a, uint32_t b) { return (a < k) != (b < k) ? 25.0f : 100.0f; };
    const AnalysisResult r = Analyze(Leaves(n, n, bw, /*placed=*/false));
    REQUIRE(Kinds(r) == std::vector<std::string>{"slow_path::"});
    CHECK(r.findings[0].evidence().at("level") == "inferred");
    CHECK(r.findings[0].evidence().at("slow_pairs") == std::to_string(k * (n - k)));
    CHECK(r.findings[0].detail().find("set topology.levels") != std::string::npos);
    CHECK(Drained(r).empty());
  }
}

TEST_CASE("A slow uplink of one leaf of three is that leaf's slow_uplink") {
  auto bw = [](uint32_t a, uint32_t b) {
    return (LeafOf(a, 3) == 0) != (LeafOf(b, 3) == 0) ? 30.0f : 100.0f;
  };
  const AnalysisResult r = Analyze(Leaves(9, 3, bw));
  REQUIRE(Kinds(r) == std::vector<std::string>{"slow_uplink::"});
  CHECK(r.findings[0].device() == "leaf-1");
  CHECK(r.findings[0].evidence().at("slow_pairs") == "18");
  CHECK(Drained(r).empty());
}

TEST_CASE("A slow path between two leaves of three names those two only") {
  auto bw = [](uint32_t a, uint32_t b) {
    const uint32_t la = LeafOf(a, 3), lb = LeafOf(b, 3);
    return (la == 0 && lb == 2) || (la == 2 && lb == 0) ? 30.0f : 100.0f;
  };
  const AnalysisResult r = Analyze(Leaves(9, 3, bw));
  REQUIRE(Kinds(r) == std::vector<std::string>{"slow_path::"});
  CHECK(r.findings[0].device() == "leaf-1 <-> leaf-3");
}

TEST_CASE("A leaf whose hosts are slow even to each other is a slow_switch") {
  auto bw = [](uint32_t a, uint32_t b) {
    return LeafOf(a, 3) == 1 || LeafOf(b, 3) == 1 ? 30.0f : 100.0f;
  };
  const AnalysisResult r = Analyze(Leaves(9, 3, bw));
  REQUIRE(Kinds(r) == std::vector<std::string>{"slow_switch::"});
  CHECK(r.findings[0].device() == "leaf-2");
  CHECK(Drained(r).empty());
}

TEST_CASE("A slow host under a topology is still the straggler, and no switch is named") {
  for (bool placed : {true, false}) {
    INFO("placed " << placed);
    auto bw = [](uint32_t a, uint32_t b) { return a == 4 || b == 4 ? 30.0f : 100.0f; };
    const AnalysisResult r = Analyze(Leaves(9, 3, bw, placed));
    CHECK(Kinds(r) == std::vector<std::string>{"straggler_node:node-4:"});
  }
}

TEST_CASE("A slow path and a slow host at once: each is named, the host drained") {
  auto bw = [](uint32_t a, uint32_t b) {
    if (a == 7 || b == 7) return 10.0f;
    return LeafOf(a, 3) != LeafOf(b, 3) && (LeafOf(a, 3) == 0 || LeafOf(b, 3) == 0) ? 30.0f
                                                                                    : 100.0f;
  };
  const AnalysisResult r = Analyze(Leaves(9, 3, bw));
  CHECK(Kinds(r) == std::vector<std::string>{"slow_uplink::", "straggler_node:node-7:"});
}

TEST_CASE("Noise is not a path: healthy fabrics with and without a topology name no switch") {
  std::mt19937 rng(7);
  for (double noise : {0.02, 0.1, 0.3}) {
    for (uint32_t n : {6u, 9u, 16u, 32u}) {
      for (bool placed : {true, false}) {
        for (int trial = 0; trial < 5; ++trial) {
          INFO("noise " << noise << ", n " << n << ", placed " << placed << ", trial " << trial);
          std::lognormal_distribution<float> figure(std::log(100.0), noise);
          std::map<std::pair<uint32_t, uint32_t>, float> drawn;
          auto bw = [&](uint32_t a, uint32_t b) {
            auto [it, fresh] = drawn.try_emplace({a, b}, 0.0f);
            if (fresh) it->second = figure(rng);
            return it->second;
          };
          const AnalysisResult r = Analyze(Leaves(n, 3, bw, placed));
          CHECK(r.paths.empty());
        }
      }
    }
  }
}

TEST_CASE("A path whose re-tests recovered is not named") {
  auto bw = [](uint32_t a, uint32_t b) { return LeafOf(a, 3) != LeafOf(b, 3) ? 20.0f : 100.0f; };
  AnalysisInput in = Leaves(6, 3, bw);
  // Re-tested pairs are the fast ones only: the slow figures were each a single measurement.
  for (auto& p : in.pairs) p.attempts = LeafOf(p.client, 3) != LeafOf(p.server, 3) ? 1 : 2;
  const AnalysisResult first = Analyze(in);
  CHECK(first.paths.empty());
  in.require_retest = false;
  CHECK(Analyze(in).paths.size() == 1);
}

}  // namespace fabricctl::controller

namespace fabricctl::controller {

TEST_CASE("Two slow hosts on one leaf are stragglers, not a path or a switch") {
  // node-0 and node-1 of leaf-1 {0,1,2} slow to everyone, each other included.
  auto bw = [](uint32_t a, uint32_t b) { return a <= 1 || b <= 1 ? 25.0f : 100.0f; };
  const AnalysisResult r = Analyze(Leaves(9, 3, bw));
  CHECK(Kinds(r) == std::vector<std::string>{"straggler_node:node-0:", "straggler_node:node-1:"});
}

TEST_CASE("Every pair between leaves slow, each leaf fine within: the switches above them") {
  auto bw = [](uint32_t a, uint32_t b) { return LeafOf(a, 3) != LeafOf(b, 3) ? 30.0f : 100.0f; };
  const AnalysisResult r = Analyze(Leaves(9, 3, bw));
  REQUIRE(Kinds(r) == std::vector<std::string>{"slow_switch::"});
  CHECK(r.findings[0].device() == "above leaf-1,leaf-2,leaf-3");
  CHECK(r.findings[0].evidence().at("slow_pairs") == "27");
  CHECK(r.findings[0].detail().find("the switches above them") != std::string::npos);
}

TEST_CASE("Two slow uplinks of four leaves are two slow_uplink findings") {
  auto bw = [](uint32_t a, uint32_t b) {
    const uint32_t la = LeafOf(a, 3), lb = LeafOf(b, 3);
    return la != lb && (la <= 1 || lb <= 1) ? 30.0f : 100.0f;
  };
  const AnalysisResult r = Analyze(Leaves(12, 3, bw));
  REQUIRE(Kinds(r) == std::vector<std::string>{"slow_uplink::", "slow_uplink::"});
  CHECK(r.findings[0].device() != r.findings[1].device());
}

TEST_CASE("With a spine level, a spine slow between its own leaves is that spine") {
  // Four leaves of three; leaves 1-2 under spine-1, leaves 3-4 under spine-2. Pairs between
  // leaf-1 and leaf-2 (through spine-1) slow; everything else fine.
  auto bw = [](uint32_t a, uint32_t b) {
    const uint32_t la = LeafOf(a, 3), lb = LeafOf(b, 3);
    return la != lb && la <= 1 && lb <= 1 ? 30.0f : 100.0f;
  };
  AnalysisInput in = Leaves(12, 3, bw);
  in.levels = {"leaf", "spine"};
  for (uint32_t i = 0; i < 12; ++i)
    in.nodes[i].place.push_back(LeafOf(i, 3) <= 1 ? "spine-1" : "spine-2");
  const AnalysisResult r = Analyze(in);
  REQUIRE(Kinds(r).size() == 1);
  // Between two leaves of one spine: the path between them, or the switches above them (the
  // spine), explain the same pairs; the path is the smaller element.
  CHECK(r.findings[0].device() == "leaf-1 <-> leaf-2");
}

}  // namespace fabricctl::controller

namespace fabricctl::controller {

TEST_CASE("A slow path beside a bad host: the path, and the host as its straggler") {
  auto bw = [](uint32_t a, uint32_t b) {
    if (a == 0 || b == 0) return 20.0f;
    return LeafOf(a, 3) != LeafOf(b, 3) ? 30.0f : 100.0f;
  };
  const AnalysisResult r = Analyze(Leaves(6, 3, bw));
  CHECK(Kinds(r) == std::vector<std::string>{"slow_path::", "straggler_node:node-0:"});
}

TEST_CASE("Two pairs per two leaves, one lifted by noise: still the uplink") {
  // Ten nodes on five leaves of two; between two leaves only the two pairs with four different
  // ends, as --pairing topology measures them; leaf-2's uplink slow, but one of its pairs to
  // leaf-4 read fine.
  auto bw = [](uint32_t a, uint32_t b) {
    if ((a == 2 && b == 6) || (a == 6 && b == 2)) return 95.0f;
    return (LeafOf(a, 2) == 1) != (LeafOf(b, 2) == 1) ? 30.0f : 100.0f;
  };
  AnalysisInput in = Leaves(10, 2, bw);
  std::vector<PairInput> kept;
  for (const PairInput& p : in.pairs) {
    if (LeafOf(p.client, 2) == LeafOf(p.server, 2) || p.client % 2 == p.server % 2)
      kept.push_back(p);
  }
  in.pairs = kept;
  const AnalysisResult r = Analyze(in);
  REQUIRE(Kinds(r) == std::vector<std::string>{"slow_uplink::"});
  CHECK(r.findings[0].device() == "leaf-2");
}

}  // namespace fabricctl::controller

namespace fabricctl::controller {

TEST_CASE("A switch finding lists where its members are cabled, where that is known") {
  auto bw = [](uint32_t a, uint32_t b) { return LeafOf(a, 3) != LeafOf(b, 3) ? 20.0f : 100.0f; };
  AnalysisInput in = Leaves(6, 3, bw);
  in.nodes[0].switch_port = "swp1";
  in.nodes[4].switch_port = "swp5";
  const AnalysisResult r = Analyze(in);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].evidence().at("switch_ports") == "node-0 swp1, node-4 swp5");
}

}  // namespace fabricctl::controller
