// node_bandwidth_limited: a node's rails at once against their sum alone (node_bandwidth.h).
#include "controller/verdict/node_bandwidth.h"

#include <catch2/catch.hpp>

#include "base/config.h"

namespace fabricctl::controller {
namespace {

const std::vector<std::string> kNames = {"node-0", "node-1", "node-2",
                                         "node-3", "node-4", "node-5"};

// Two rounds over six nodes (each node with two different peers), both ways, two rails of
// 1 Gb/s each: alone they sum to 2; at once `together(from, to)`, with a little noise.
std::vector<NodeBandwidthPair> Stage(const std::function<double(uint32_t, uint32_t)>& together) {
  const std::vector<std::pair<uint32_t, uint32_t>> pairs = {{0, 1}, {2, 3}, {4, 5},
                                                            {0, 2}, {1, 4}, {3, 5}};
  std::vector<NodeBandwidthPair> out;
  double wobble = 0.98;
  for (auto [a, b] : pairs) {
    for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      wobble = wobble == 0.98 ? 1.0 : 0.98;
      out.push_back({from, to, 2.0 * wobble, together(from, to) * wobble, 2});
    }
  }
  return out;
}

std::vector<std::string> Named(const std::vector<v1::Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) out.push_back(f.kind() + " " + f.node());
  return out;
}

}  // namespace

TEST_CASE("A node whose rails share one budget is named, its peers cleared by their others") {
  auto together = [](uint32_t a, uint32_t b) { return a == 3 || b == 3 ? 1.2 : 1.96; };
  const auto findings = JudgeNodeBandwidth(Stage(together), kNames, DefaultConfig().thresholds());
  CHECK(Named(findings) == std::vector<std::string>{"node_bandwidth_limited node-3"});
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].action() == v1::ACTION_DRAIN);
  CHECK(findings[0].evidence().at("direction") == "both");
  CHECK(findings[0].evidence().at("pairs").find("node-2 -> node-3 1.20 of 2.00 Gb/s") !=
        std::string::npos);
}

TEST_CASE("Only what it sends: named on that side, its receivers cleared by their other peers") {
  std::vector<NodeBandwidthPair> pairs;
  for (auto [a, b] :
       std::vector<std::pair<uint32_t, uint32_t>>{{0, 1}, {2, 3}, {4, 5}, {0, 2}, {1, 4}, {3, 5}}) {
    pairs.push_back({a, b, 2.0, a == 3 ? 1.2 : 1.97, 2});
    pairs.push_back({b, a, 2.0, b == 3 ? 1.2 : 1.97, 2});
  }
  const auto findings = JudgeNodeBandwidth(pairs, kNames, DefaultConfig().thresholds());
  REQUIRE(Named(findings) == std::vector<std::string>{"node_bandwidth_limited node-3"});
  CHECK(findings[0].evidence().at("direction") == "transmit");
}

TEST_CASE("The node's budget explains its rails' findings about it, and only those") {
  auto finding = [](const char* kind, const char* node, const char* peer) {
    v1::Finding f;
    f.set_kind(kind);
    f.set_node(node);
    f.set_peer(peer);
    return f;
  };
  std::vector<v1::Finding> findings = {
      finding("slow_nic", "node-3", ""),        finding("slow_link", "node-2", "node-3"),
      finding("unstable", "node-3", "node-4"),  finding("straggler_node", "node-3", ""),
      finding("slow_link", "node-1", "node-2"), finding("mtu_mismatch", "node-3", "")};
  SubsumeByNodeBandwidth({finding("node_bandwidth_limited", "node-3", "")}, &findings);
  std::vector<std::string> left;
  for (const auto& f : findings) left.push_back(f.kind() + " " + f.node());
  CHECK(left == std::vector<std::string>{"slow_link node-1", "mtu_mismatch node-3"});
}

TEST_CASE("Rails that add up raise nothing; a small shortfall is within the effect") {
  auto fine = [](uint32_t, uint32_t) { return 1.97; };
  CHECK(JudgeNodeBandwidth(Stage(fine), kNames, DefaultConfig().thresholds()).empty());
  auto slight = [](uint32_t a, uint32_t b) { return a == 3 || b == 3 ? 1.8 : 1.97; };
  CHECK(JudgeNodeBandwidth(Stage(slight), kNames, DefaultConfig().thresholds()).empty());
}

TEST_CASE("A node measured with one peer only is not named: nothing clears the peer") {
  std::vector<NodeBandwidthPair> pairs = {
      {0, 1, 2.0, 1.0, 2}, {2, 3, 2.0, 1.97, 2}, {4, 5, 2.0, 1.96, 2}};
  CHECK(JudgeNodeBandwidth(pairs, kNames, DefaultConfig().thresholds()).empty());
}

TEST_CASE("When every node is limited, every node is named: the fleet's share is no yardstick") {
  auto all = [](uint32_t, uint32_t) { return 1.1; };
  CHECK(JudgeNodeBandwidth(Stage(all), kNames, DefaultConfig().thresholds()).size() == 6);
}

}  // namespace fabricctl::controller
