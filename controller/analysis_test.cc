// The analysis on constructed matrices: every pair of a full sweep with chosen figures.
#include "controller/analysis.h"
#include "report/builder.h"

#include <algorithm>
#include <functional>

#include <catch2/catch.hpp>

#include "controller/pairing.h"

namespace fabricctl::controller {
namespace {

// A full sweep of n nodes where pair (a, b) measures bw(a, b) Gb/s and lat(a, b) us.
AnalysisInput Sweep(uint32_t n, const std::function<float(uint32_t, uint32_t)>& bw,
                    const std::function<float(uint32_t, uint32_t)>& lat = nullptr) {
  AnalysisInput in;
  for (uint32_t i = 0; i < n; ++i) {
    NodeInput node;
    node.name = "node-" + std::to_string(i);
    node.netdev_mtu = 9000;
    node.netdev = "eth0";
    in.nodes.push_back(node);
  }
  for (const Round& round : FullRounds(n)) {
    for (const Pair& p : round) {
      PairInput pair;
      pair.client = p.first;
      pair.server = p.second;
      pair.bw_gbps = bw(p.first, p.second);
      pair.lat_us = lat ? lat(p.first, p.second) : 2.0f;
      in.pairs.push_back(pair);
    }
  }
  in.thresholds.set_min_bw_efficiency(0.9);
  in.thresholds.set_relative_bw(0.93);
  in.thresholds.set_relative_lat(2.1);
  in.thresholds.set_max_robust_z(3.5);
  in.bandwidth_probe = "tcp_bw";
  in.latency_probe = "tcp_lat";
  return in;
}

std::vector<std::string> Kinds(const AnalysisResult& r) {
  std::vector<std::string> kinds;
  for (const auto& f : r.findings) kinds.push_back(f.kind() + ":" + f.node() + ":" + f.peer());
  std::sort(kinds.begin(), kinds.end());
  return kinds;
}

bool Involves(uint32_t a, uint32_t b, uint32_t x) { return a == x || b == x; }

}  // namespace

TEST_CASE("A healthy fabric has no findings") {
  auto r = Analyze(Sweep(8, [](uint32_t a, uint32_t b) { return 97.0f + (a + b) % 3; }));
  CHECK(r.findings.empty());
  CHECK(r.best_bw_gbps == Approx(99.0));
  for (const auto& node : r.nodes) CHECK(node.verdict == Verdict::kOk);
  CHECK(report::WorstSeverity(r.findings) == v1::SEVERITY_OK);
}

TEST_CASE("One slow node is the straggler, and only it") {
  for (uint32_t n : {3u, 5u, 8u, 33u}) {
    INFO("n = " << n);
    auto r = Analyze(Sweep(n, [](uint32_t a, uint32_t b) { return Involves(a, b, 2) ? 30.0f : 100.0f; }));
    REQUIRE(Kinds(r) == std::vector<std::string>{"straggler_node:node-2:"});
    const auto& f = r.findings[0];
    CHECK(f.severity() == v1::SEVERITY_CRITICAL);
    CHECK(f.action() == v1::ACTION_DRAIN);
    CHECK(f.detail().find("median tcp_bw 30.00 Gb/s") != std::string::npos);
    CHECK(f.detail().find("expected at least 93.00 Gb/s") != std::string::npos);
    CHECK(r.nodes[2].straggler);
    CHECK(r.nodes[2].verdict == Verdict::kCritical);
    CHECK(r.nodes[0].verdict == Verdict::kOk);
  }
}

TEST_CASE("Two slow nodes are both stragglers; their shared pairs do not blame a third") {
  auto r = Analyze(Sweep(6, [](uint32_t a, uint32_t b) {
    return Involves(a, b, 1) || Involves(a, b, 4) ? 40.0f : 100.0f;
  }));
  CHECK(Kinds(r) == std::vector<std::string>{"straggler_node:node-1:", "straggler_node:node-4:"});
}

TEST_CASE("A slow pair between healthy nodes is a slow link") {
  auto r = Analyze(Sweep(6, [](uint32_t a, uint32_t b) {
    return (std::min(a, b) == 1 && std::max(a, b) == 4) ? 50.0f : 100.0f;
  }));
  REQUIRE(r.findings.size() == 1);
  const auto& f = r.findings[0];
  CHECK(f.kind() == "slow_link");
  CHECK(f.severity() == v1::SEVERITY_WARNING);
  CHECK(((f.node() == "node-1" && f.peer() == "node-4") ||
         (f.node() == "node-4" && f.peer() == "node-1")));
  CHECK(f.evidence().at("bw_gbps") == "50.00");
}

TEST_CASE("High latency on one pair is a high-latency link; on one node, a straggler") {
  auto link = Analyze(Sweep(
      5, [](uint32_t, uint32_t) { return 100.0f; },
      [](uint32_t a, uint32_t b) { return (std::min(a, b) == 0 && std::max(a, b) == 3) ? 9.0f : 2.0f; }));
  CHECK(Kinds(link).size() == 1);
  CHECK(link.findings[0].kind() == "high_latency_link");
  CHECK(link.findings[0].detail().find("expected at most 4.20 us") != std::string::npos);

  auto node = Analyze(Sweep(
      5, [](uint32_t, uint32_t) { return 100.0f; },
      [](uint32_t a, uint32_t b) { return Involves(a, b, 3) ? 9.0f : 2.0f; }));
  CHECK(Kinds(node) == std::vector<std::string>{"straggler_node:node-3:"});
}

TEST_CASE("The absolute floor applies to RDMA bandwidth only") {
  auto in = Sweep(4, [](uint32_t, uint32_t) { return 150.0f; });
  in.expect.set_link_rate_gbps(400);
  CHECK(Analyze(in).findings.empty());  // TCP: judged against peers only
  in.bandwidth_is_rdma = true;
  in.bandwidth_probe = "rdma_write_bw";
  auto r = Analyze(in);
  REQUIRE_FALSE(r.findings.empty());
  CHECK(r.pairs[0].slow);
  CHECK(report::WorstSeverity(r.findings) == v1::SEVERITY_CRITICAL);
}

TEST_CASE("Unreachable nodes, failed and timed-out pairs") {
  auto in = Sweep(4, [](uint32_t, uint32_t) { return 100.0f; });
  in.nodes[3].reachable = false;
  in.nodes[3].unreachable_reason = "connection refused";
  in.reasons = {"server refused: no device", "no answer within 30s"};
  for (auto& pair : in.pairs) {
    if (Involves(pair.client, pair.server, 3)) {
      pair.status = PairStatus::kNotMeasured;
      pair.bw_gbps = pair.lat_us = std::nanf("");
    }
  }
  in.pairs[0].status = PairStatus::kFailed;
  in.pairs[0].reason = 0;
  auto r = Analyze(in);
  auto kinds = Kinds(r);
  REQUIRE(kinds.size() == 2);
  CHECK(kinds[0] == "node_unreachable:node-3:");
  CHECK(kinds[1].rfind("probe_failed:", 0) == 0);
  CHECK(r.nodes[3].verdict == Verdict::kUnknown);
  CHECK(report::WorstSeverity(r.findings) == v1::SEVERITY_CRITICAL);
  for (const auto& f : r.findings) {
    if (f.kind() == "probe_failed") CHECK(f.detail().find("server refused: no device") != std::string::npos);
  }
}

TEST_CASE("MTU: the odd node out, or every node against the expectation") {
  auto in = Sweep(5, [](uint32_t, uint32_t) { return 100.0f; });
  in.nodes[4].netdev_mtu = 1400;
  auto odd = Analyze(in);
  REQUIRE(Kinds(odd) == std::vector<std::string>{"mtu_mismatch:node-4:"});
  CHECK(odd.findings[0].detail() == "node-4: eth0 MTU 1400, expected 9000 (the sweep's common MTU)");

  in.nodes[4].netdev_mtu = 9000;
  in.expect.set_netdev_mtu(4200);
  CHECK(Analyze(in).findings.size() == 5);
}

TEST_CASE("One slow pair measured once cannot blame either end; re-pairing settles it") {
  // A quick round of 6 nodes: (0,5) (1,4) (2,3), with (2,3) slow. Node 3 is the culprit.
  AnalysisInput in = Sweep(6, [](uint32_t, uint32_t) { return 100.0f; });
  auto keep = [&](std::vector<std::pair<uint32_t, uint32_t>> wanted) {
    std::vector<PairInput> kept;
    for (const auto& p : in.pairs) {
      for (const auto& w : wanted) {
        if ((p.client == w.first && p.server == w.second) ||
            (p.client == w.second && p.server == w.first)) {
          kept.push_back(p);
        }
      }
    }
    return kept;
  };
  AnalysisInput quick = in;
  quick.pairs = keep({{0, 5}, {1, 4}, {2, 3}});
  for (auto& p : quick.pairs) {
    if (Involves(p.client, p.server, 3)) p.bw_gbps = 20.0f;
    p.bw_gbps += 0.01f * (p.client + p.server);  // a little noise, so MAD is not zero
  }
  auto ambiguous = Analyze(quick);
  CHECK(Kinds(ambiguous) == std::vector<std::string>{"slow_link:node-2:node-3"});

  // The sweep re-pairs each end with a good node: (2,0) fine, (3,1) slow.
  AnalysisInput localised = in;
  localised.pairs = keep({{0, 5}, {1, 4}, {2, 3}, {0, 2}, {1, 3}});
  for (auto& p : localised.pairs) {
    if (Involves(p.client, p.server, 3)) p.bw_gbps = 20.0f;
  }
  CHECK(Kinds(Analyze(localised)) == std::vector<std::string>{"straggler_node:node-3:"});
}

TEST_CASE("Robust statistics: median and scaled MAD") {
  CHECK(Median({3, 1, 2}) == 2);
  CHECK(Median({4, 1, 3, 2}) == 2.5);
  CHECK(ScaledMad({1, 2, 3, 4, 100}, 3) == Approx(1.4826));
}

}  // namespace fabricctl::controller
