// Loss as evidence: a direction's retransmitted share of its segments against the fabric's.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "controller/verdict/analysis.h"
#include "controller/verdict/testing.h"

namespace fabricctl::controller {
namespace {

bool Is(uint32_t a, uint32_t b, uint32_t x, uint32_t y) {
  return (a == x && b == y) || (a == y && b == x);
}

// A healthy fabric of n nodes where `from` retransmits rate(from, to) of what it sends to `to`.
AnalysisInput WithLoss(uint32_t n, const Figure& rate) {
  AnalysisInput in = Sweep(n, [](uint32_t a, uint32_t b) { return 100.0f - (a + b) % 3; });
  for (auto& p : in.pairs) {
    p.forward.loss_rate = rate(p.client, p.server);
    p.reverse.loss_rate = rate(p.server, p.client);
  }
  return in;
}

}  // namespace

TEST_CASE("A link losing 2 % of its packets is lossy_link, with the rate") {
  auto r = Analyze(
      WithLoss(6, [](uint32_t a, uint32_t b) { return Is(a, b, 2, 5) ? 0.02f : 0.00001f; }));
  REQUIRE(Kinds(r) == std::vector<std::string>{"lossy_link:node-2:node-5"});
  const v1::Finding& f = r.findings[0];
  CHECK(f.severity() == v1::SEVERITY_WARNING);
  CHECK(f.evidence().at("direction") == "both");
  CHECK(f.detail().find("2.00 %") != std::string::npos);
}

TEST_CASE("A lossy link that is slow too is one finding, lossy_link, that says so") {
  AnalysisInput in =
      WithLoss(6, [](uint32_t a, uint32_t b) { return Is(a, b, 2, 5) ? 0.03f : 0.00001f; });
  for (auto& p : in.pairs) {
    if (Is(p.client, p.server, 2, 5)) p.forward.bw_gbps = p.reverse.bw_gbps = 30;
  }
  auto r = Analyze(in);
  REQUIRE(Kinds(r) == std::vector<std::string>{"lossy_link:node-2:node-5"});
  CHECK(r.findings[0].detail().find("slow as well") != std::string::npos);
  // Slow without the loss, the same link is slow_link.
  for (auto& p : in.pairs) p.forward.loss_rate = p.reverse.loss_rate = 0.00001f;
  CHECK(Kinds(Analyze(in)) == std::vector<std::string>{"slow_link:node-2:node-5"});
}

TEST_CASE("A node lossy in what it sends to most peers is blamed, drained, its links not named") {
  auto r = Analyze(WithLoss(6, [](uint32_t from, uint32_t) { return from == 1 ? 0.01f : 0.0f; }));
  REQUIRE(Kinds(r) == std::vector<std::string>{"lossy_link:node-1:"});
  CHECK(r.findings[0].severity() == v1::SEVERITY_CRITICAL);
  CHECK(r.findings[0].action() == v1::ACTION_DRAIN);
  CHECK(r.findings[0].detail().find("what it sends") != std::string::npos);
}

TEST_CASE("A lossy host is blamed in a fleet of 3 or 4, where its directions are half of all") {
  // Both ways at 4 nodes: 6 of 12 directions; what it sends at 3 nodes: 2 of 6. The bar is set
  // by the other nodes' directions, not by the host's own.
  auto both = Analyze(WithLoss(
      4, [](uint32_t from, uint32_t to) { return from == 1 || to == 1 ? 0.02f : 0.0001f; }));
  CHECK(Kinds(both) == std::vector<std::string>{"lossy_link:node-1:"});
  REQUIRE(!both.findings.empty());
  CHECK(both.findings[0].detail().find("what it sends and receives") != std::string::npos);
  auto sends =
      Analyze(WithLoss(3, [](uint32_t from, uint32_t) { return from == 2 ? 0.02f : 0.0001f; }));
  CHECK(Kinds(sends) == std::vector<std::string>{"lossy_link:node-2:"});
  // Both ways among 6: a third of the directions.
  CHECK(Kinds(Analyze(WithLoss(6, [](uint32_t from, uint32_t to) {
          return from == 4 || to == 4 ? 0.02f : 0.0001f;
        }))) == std::vector<std::string>{"lossy_link:node-4:"});
}

TEST_CASE("Hosts that lose alike as a group (a leaf) are not each a lossy host") {
  // 6 of 16 lose 0.3 % on every direction they take part in: what they share loses, and no
  // rule here names it; draining the six as lossy hosts would blame what is not at fault.
  auto r = Analyze(WithLoss(
      16, [](uint32_t from, uint32_t to) { return from < 6 || to < 6 ? 0.003f : 0.00001f; }));
  for (const auto& f : r.findings) CHECK_FALSE((f.kind() == "lossy_link" && f.peer().empty()));
}

// node-2 at a third of the rate with every peer of 12, each of its directions losing 0.05 %
// (TCP finds a slow port's rate by losing packets at it), but node-1 -> node-2 `one`.
AnalysisInput SlowNodeLosing(float one) {
  AnalysisInput in = Sweep(
      12, [](uint32_t a, uint32_t b) { return a == 2 || b == 2 ? 33.0f : 100.0f - (a + b) % 3; });
  for (auto& p : in.pairs) {
    const bool slow = p.client == 2 || p.server == 2;
    p.forward.loss_rate = Is(p.client, p.server, 1, 2) ? one : slow ? 0.0005f : 0.00001f;
    p.reverse.loss_rate = slow ? 0.0005f : 0.00001f;
  }
  return in;
}

TEST_CASE(
    "A slow node's loss is its bottleneck's: the node is named, not a link losing a little more") {
  // 0.12 %: lossy against the fabric, but not three times the slow node's other directions.
  REQUIRE(Kinds(Analyze(SlowNodeLosing(0.0012f))) ==
          std::vector<std::string>{"straggler_node:node-2:"});
}

TEST_CASE("A link losing far more than the slow node at its end does is named beside it") {
  auto kinds = Kinds(Analyze(SlowNodeLosing(0.03f)));
  std::sort(kinds.begin(), kinds.end());
  REQUIRE(kinds == std::vector<std::string>{"lossy_link:node-1:node-2", "straggler_node:node-2:"});
}

TEST_CASE("A fabric that loses alike everywhere, or below the floor, blames nobody") {
  CHECK(Analyze(WithLoss(6, [](uint32_t a, uint32_t b) {
          return 0.01f + 0.001f * ((a + b) % 4);
        })).findings.empty());
  CHECK(Analyze(WithLoss(6, [](uint32_t a, uint32_t b) {
          return Is(a, b, 2, 5) ? 0.0005f : 0.0f;
        })).findings.empty());
  // Without counters (RDMA, an old kernel): nothing is judged.
  CHECK(Analyze(WithLoss(6, [](uint32_t, uint32_t) { return std::nanf(""); })).findings.empty());
}

}  // namespace fabricctl::controller

namespace fabricctl::controller {

TEST_CASE("Loss the receiving host's own drops account for is host_dropping, not lossy_link") {
  // node-3 drops what it receives from everyone (a busy CPU): its counters say so on each.
  AnalysisInput in = WithLoss(6, [](uint32_t, uint32_t to) { return to == 3 ? 0.01f : 0.0f; });
  for (auto& p : in.pairs) {
    p.forward.receiver_dropped = p.server == 3;
    p.reverse.receiver_dropped = p.client == 3;
  }
  auto r = Analyze(in);
  REQUIRE(Kinds(r) == std::vector<std::string>{"host_dropping:node-3:"});
  CHECK(r.findings[0].severity() == v1::SEVERITY_WARNING);
  CHECK(r.findings[0].action() == v1::ACTION_INVESTIGATE);
  CHECK(r.findings[0].evidence().at("senders") == "5");
  // Without its counters rising, the same loss is the node's in what it receives: drained.
  for (auto& p : in.pairs) p.forward.receiver_dropped = p.reverse.receiver_dropped = false;
  REQUIRE(Kinds(Analyze(in)) == std::vector<std::string>{"lossy_link:node-3:"});

  // One direction of one link, the receiver's drops accounting for it: that host, once.
  AnalysisInput link =
      WithLoss(6, [](uint32_t a, uint32_t b) { return a == 2 && b == 5 ? 0.02f : 0.00001f; });
  for (auto& p : link.pairs) {
    if (p.client == 2 && p.server == 5) p.forward.receiver_dropped = true;
    if (p.client == 5 && p.server == 2) p.reverse.receiver_dropped = true;
  }
  CHECK(Kinds(Analyze(link)) == std::vector<std::string>{"host_dropping:node-5:"});
}

}  // namespace fabricctl::controller
