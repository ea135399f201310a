// The analysis on constructed matrices: every pair of a full sweep, both directions, with
// chosen figures.
#include "controller/verdict/analysis.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <random>

#include "base/config.h"
#include "controller/sweep/pairing.h"
#include "controller/verdict/testing.h"
#include "report/builder.h"

namespace fabricctl::controller {
namespace {

bool Involves(uint32_t a, uint32_t b, uint32_t x) { return a == x || b == x; }
bool Is(uint32_t a, uint32_t b, uint32_t x, uint32_t y) {
  return (a == x && b == y) || (a == y && b == x);
}

const v1::Finding& Only(const AnalysisResult& r) {
  REQUIRE(r.findings.size() == 1);
  return r.findings[0];
}

}  // namespace

TEST_CASE("A healthy fabric has no findings") {
  auto r = Analyze(Sweep(8, [](uint32_t a, uint32_t b) { return 97.0f + (a + b) % 3; }));
  CHECK(r.findings.empty());
  CHECK(r.best_bw_gbps == Approx(99.0));
  for (const auto& node : r.nodes) CHECK(node.verdict == Verdict::kOk);
  CHECK(report::WorstSeverity(r.findings) == v1::SEVERITY_OK);
}

TEST_CASE("One slow node is the straggler, and only it; the text gives the criterion and figures") {
  for (uint32_t n : {3u, 5u, 8u, 33u}) {
    INFO("n = " << n);
    auto r = Analyze(
        Sweep(n, [](uint32_t a, uint32_t b) { return Involves(a, b, 2) ? 30.0f : 100.0f; }));
    REQUIRE(Kinds(r) == std::vector<std::string>{"straggler_node:node-2:"});
    const auto& f = r.findings[0];
    CHECK(f.severity() == v1::SEVERITY_CRITICAL);
    CHECK(f.action() == v1::ACTION_DRAIN);
    CHECK(f.evidence().at("direction") == "both");
    CHECK(f.detail().find("median 30.00 Gb/s sent and 30.00 Gb/s received") != std::string::npos);
    CHECK(f.detail().find("typical 100.00 Gb/s") != std::string::npos);
    CHECK(f.detail().find("below 60.00 Gb/s") != std::string::npos);
    CHECK(r.nodes[2].straggler);
    CHECK(r.nodes[2].verdict == Verdict::kCritical);
    CHECK(r.nodes[0].verdict == Verdict::kOk);
  }
}

TEST_CASE("Two slow nodes of eight are both stragglers; their shared pairs do not blame a third") {
  auto r = Analyze(Sweep(8, [](uint32_t a, uint32_t b) {
    return Involves(a, b, 1) || Involves(a, b, 4) ? 40.0f : 100.0f;
  }));
  CHECK(Kinds(r) == std::vector<std::string>{"straggler_node:node-1:", "straggler_node:node-4:"});
}

TEST_CASE("A slow pair between healthy nodes is a slow link, in both directions or one") {
  auto both =
      Analyze(Sweep(6, [](uint32_t a, uint32_t b) { return Is(a, b, 1, 4) ? 50.0f : 100.0f; }));
  const auto& f = Only(both);
  CHECK(f.kind() == "slow_link");
  CHECK(f.severity() == v1::SEVERITY_WARNING);
  CHECK(((f.node() == "node-1" && f.peer() == "node-4") ||
         (f.node() == "node-4" && f.peer() == "node-1")));
  CHECK(f.evidence().at("direction") == "both");
  CHECK(f.detail().find("slow in both directions") != std::string::npos);

  // Only node-1 -> node-4 is slow (a misconfigured egress queue towards one peer).
  auto one = Analyze(
      Sweep(6, [](uint32_t from, uint32_t to) { return from == 1 && to == 4 ? 50.0f : 100.0f; }));
  const auto& g = Only(one);
  CHECK(g.kind() == "slow_link");
  CHECK(g.detail().find("node-1 -> node-4 only") != std::string::npos);
}

TEST_CASE(
    "A host that only sends slowly is named, as a transmit fault; one that only receives slowly "
    "too") {
  auto tx = Analyze(Sweep(6, [](uint32_t from, uint32_t) { return from == 3 ? 20.0f : 100.0f; }));
  const auto& f = Only(tx);
  CHECK(f.kind() == "straggler_node");
  CHECK(f.node() == "node-3");
  CHECK(f.evidence().at("direction") == "transmit");
  CHECK(f.detail().find("sends slowly") != std::string::npos);
  CHECK(tx.nodes[3].side == Side::kSend);

  auto rx = Analyze(Sweep(6, [](uint32_t, uint32_t to) { return to == 5 ? 20.0f : 100.0f; }));
  CHECK(Only(rx).node() == "node-5");
  CHECK(Only(rx).evidence().at("direction") == "receive");
}

TEST_CASE(
    "Noise of +/-30 % on a healthy fabric raises nothing; a 2x slow node through +/-20 % is "
    "found") {
  std::mt19937 random(7);
  std::uniform_real_distribution<float> noise30(0.7f, 1.3f), noise20(0.8f, 1.2f);
  for (int trial = 0; trial < 50; ++trial) {
    auto r = Analyze(Sweep(8, [&](uint32_t, uint32_t) { return 100.0f * noise30(random); }));
    INFO("trial " << trial);
    CHECK(r.findings.empty());
  }
  for (int trial = 0; trial < 50; ++trial) {
    auto r = Analyze(Sweep(8, [&](uint32_t a, uint32_t b) {
      return (Involves(a, b, 6) ? 50.0f : 100.0f) * noise20(random);
    }));
    INFO("trial " << trial);
    CHECK(Kinds(r) == std::vector<std::string>{"straggler_node:node-6:"});
  }
}

TEST_CASE("With re-tests on, a link is named only on figures that survived a re-test") {
  auto in = Sweep(6, [](uint32_t a, uint32_t b) { return Is(a, b, 1, 4) ? 20.0f : 100.0f; });
  for (auto& p : in.pairs) p.attempts = 1;
  CHECK(Analyze(in).findings.empty());  // measured once
  for (auto& p : in.pairs) {
    if (Is(p.client, p.server, 1, 4)) p.attempts = 2;
  }
  CHECK(Kinds(Analyze(in)) == std::vector<std::string>{"slow_link:node-1:node-4"});
}

TEST_CASE(
    "In a fleet whose nodes differ by degrees, the slowest of the continuum is no straggler") {
  // Senders from 0.5 to 1.5 times a typical 100 Gb/s in even steps (NIC generations, busy
  // hosts): node-0 sends below 60 % of typical to every peer, yet it is not an outlier among
  // the nodes, and draining it would only make the next one "the slowest".
  const float factor[] = {0.5f, 0.6f, 0.72f, 0.85f, 1.0f, 1.15f, 1.3f, 1.5f};
  auto r = Analyze(Sweep(8, [&](uint32_t from, uint32_t to) {
    return 100.0f * factor[from] * (1 + 0.02f * ((from + to) % 3));
  }));
  int slow_sends = 0;
  for (size_t p = 0; p < r.pairs.size(); ++p)
    slow_sends += r.pairs[p].forward.slow + r.pairs[p].reverse.slow;
  CHECK(slow_sends >= 7);  // each of node-0's sends is slow by the per-direction rule
  for (const auto& k : Kinds(r)) CHECK(k.rfind("straggler_node", 0) != 0);
  for (const auto& node : r.nodes) CHECK_FALSE(node.straggler);
  // The same node at a fifth of its peers' rate is an outlier, and named.
  const float outlier[] = {0.2f, 0.92f, 0.95f, 0.97f, 1.0f, 1.02f, 1.05f, 1.08f};
  auto s = Analyze(Sweep(8, [&](uint32_t from, uint32_t to) {
    return 100.0f * outlier[from] * (1 + 0.02f * ((from + to) % 3));
  }));
  CHECK(Kinds(s) == std::vector<std::string>{"straggler_node:node-0:"});
  CHECK(s.findings[0].evidence().at("direction") == "transmit");
}

TEST_CASE("Two nodes, one slow direction: neither can be told from the link") {
  auto r = Analyze(Sweep(2, [](uint32_t from, uint32_t) { return from == 0 ? 0.2f : 1.0f; }));
  CHECK(Kinds(r) ==
        std::vector<std::string>{"insufficient_data:node-0:", "insufficient_data:node-1:"});
}

TEST_CASE("Few nodes, uneven healthy figures: the slow hosts are still outliers among the nodes") {
  // Two hosts at 0.2 of five, the healthy directions between 0.8 and 1.2.
  const float five[5][5] = {{0, .2f, .2f, .2f, .2f},
                            {.2f, 0, .2f, .2f, .2f},
                            {.2f, .2f, 0, .8f, .8f},
                            {.2f, .2f, 1.2f, 0, .8f},
                            {.2f, .2f, 1.2f, 1.2f, 0}};
  CHECK(Kinds(Analyze(Sweep(5, [&](uint32_t a, uint32_t b) { return five[a][b]; }))) ==
        std::vector<std::string>{"straggler_node:node-0:", "straggler_node:node-1:"});
  // Three nodes, one at 0.2 both ways.
  const float three[3][3] = {{0, .2f, .2f}, {.2f, 0, 1.0f}, {.2f, 1.4f, 0}};
  CHECK(Kinds(Analyze(Sweep(3, [&](uint32_t a, uint32_t b) { return three[a][b]; }))) ==
        std::vector<std::string>{"straggler_node:node-0:"});
  // Three nodes, node-0 only sends slowly: its transmit side, not two slow links.
  const float egress[3][3] = {{0, .2f, .2f}, {1.39f, 0, 1.02f}, {.92f, .92f, 0}};
  auto r = Analyze(Sweep(3, [&](uint32_t a, uint32_t b) { return egress[a][b]; }));
  REQUIRE(Kinds(r) == std::vector<std::string>{"straggler_node:node-0:"});
  CHECK(r.findings[0].evidence().at("direction") == "transmit");
}

TEST_CASE("A tight fabric's smaller deficit counts when it is a robust outlier") {
  // 1 % spread, one node 25 % down: below typical by more than min_effect, far beyond the spread.
  auto r = Analyze(Sweep(8, [](uint32_t a, uint32_t b) {
    return (Involves(a, b, 5) ? 75.0f : 100.0f) + 0.5f * ((a * 7 + b * 3) % 3);
  }));
  CHECK(Kinds(r) == std::vector<std::string>{"straggler_node:node-5:"});
  // 10 % down is below min_effect: not a finding however tight the fabric.
  auto small = Analyze(Sweep(8, [](uint32_t a, uint32_t b) {
    return (Involves(a, b, 5) ? 90.0f : 100.0f) + 0.5f * ((a * 7 + b * 3) % 3);
  }));
  CHECK(small.findings.empty());
}

TEST_CASE("A partitioned pair is link_unreachable naming both ends, never a third host") {
  auto in = Sweep(6, [](uint32_t, uint32_t) { return 100.0f; });
  in.reasons = {"tcp_bw: client half: connect: timed out"};
  for (auto& p : in.pairs) {
    if (Is(p.client, p.server, 0, 2)) {
      p.status = PairStatus::kUnreachable;
      p.forward.bw_gbps = p.reverse.bw_gbps = p.lat_us = std::nanf("");
      p.reason = 0;
      p.attempts = 3;
    }
  }
  auto r = Analyze(in);
  const auto& f = Only(r);
  CHECK(f.kind() == "link_unreachable");
  CHECK(((f.node() == "node-0" && f.peer() == "node-2") ||
         (f.node() == "node-2" && f.peer() == "node-0")));
  CHECK(f.detail().find("connect: timed out") != std::string::npos);
  CHECK(f.action() == v1::ACTION_INVESTIGATE);
}

TEST_CASE("A node whose data path is down is named once; its pairs are explained") {
  auto in = Sweep(5, [](uint32_t, uint32_t) { return 100.0f; });
  for (auto& p : in.pairs) {
    if (Involves(p.client, p.server, 4)) {
      p.status = PairStatus::kUnreachable;
      p.forward.bw_gbps = p.reverse.bw_gbps = p.lat_us = std::nanf("");
    }
  }
  auto r = Analyze(in);
  const auto& f = Only(r);
  CHECK(f.kind() == "link_unreachable");
  CHECK(f.node() == "node-4");
  CHECK(f.peer().empty());
  CHECK(f.action() == v1::ACTION_DRAIN);
}

TEST_CASE("Missing pairs: nodes are judged on the pairs they have") {
  // A sample sweep: about half the pairs. Node 2 is slow.
  std::mt19937 random(3);
  auto in = Sweep(10, [](uint32_t a, uint32_t b) { return Involves(a, b, 2) ? 30.0f : 100.0f; });
  std::vector<PairInput> kept;
  for (const auto& p : in.pairs) {
    if (random() % 2 == 0 || Is(p.client, p.server, 2, 7) || Is(p.client, p.server, 2, 8))
      kept.push_back(p);
  }
  in.pairs = kept;
  CHECK(Kinds(Analyze(in)) == std::vector<std::string>{"straggler_node:node-2:"});
}

TEST_CASE(
    "One slow pair measured once blames neither end: insufficient data; re-pairing settles it") {
  // A quick round of 6 nodes: (0,5) (1,4) (2,3), with (2,3) slow. Node 3 is the culprit.
  AnalysisInput in =
      Sweep(6, [](uint32_t a, uint32_t b) { return Involves(a, b, 3) ? 20.0f : 100.0f; });
  auto keep = [&](std::vector<std::pair<uint32_t, uint32_t>> wanted) {
    std::vector<PairInput> kept;
    for (const auto& p : in.pairs) {
      for (const auto& w : wanted) {
        if (Is(p.client, p.server, w.first, w.second)) kept.push_back(p);
      }
    }
    return kept;
  };
  AnalysisInput quick = in;
  quick.pairs = keep({{0, 5}, {1, 4}, {2, 3}});
  auto ambiguous = Analyze(quick);
  CHECK(Kinds(ambiguous) ==
        std::vector<std::string>{"insufficient_data:node-2:", "insufficient_data:node-3:"});
  CHECK(ambiguous.findings[0].detail().find("fewer than the 2 needed") != std::string::npos);

  // The sweep re-pairs each end with a good node: (2,0) fine, (3,1) slow.
  AnalysisInput localised = in;
  localised.pairs = keep({{0, 5}, {1, 4}, {2, 3}, {0, 2}, {1, 3}});
  CHECK(Kinds(Analyze(localised)) == std::vector<std::string>{"straggler_node:node-3:"});
}

TEST_CASE("With re-tests required, a node is blamed only when its re-tests agree") {
  auto in = Sweep(8, [](uint32_t a, uint32_t b) { return Involves(a, b, 1) ? 30.0f : 100.0f; });
  for (auto& p : in.pairs) p.attempts = 1;  // measured once
  auto retest = [&](uint32_t peer, bool recovered) {
    for (auto& p : in.pairs) {
      if (!Is(p.client, p.server, 1, peer)) continue;
      p.attempts = 2;
      if (recovered) p.forward.bw_gbps = p.reverse.bw_gbps = 100.0f;
    }
  };
  CHECK_FALSE(Analyze(in).nodes[1].straggler);
  // One of its pairs re-tested and still slow: that could be the link to that peer.
  retest(0, false);
  CHECK_FALSE(Analyze(in).nodes[1].straggler);
  // A second peer's pair still slow on re-test: blamed.
  retest(4, false);
  CHECK(Kinds(Analyze(in)) == std::vector<std::string>{"straggler_node:node-1:"});
  // Three recovered against the two that stayed slow, 4 of its 7 pairs still slow: not blamed.
  retest(2, true);
  retest(3, true);
  retest(5, true);
  CHECK_FALSE(Analyze(in).nodes[1].straggler);
}

TEST_CASE("High latency on one pair is a high-latency link; on one node, a straggler") {
  auto jitter = [](uint32_t a, uint32_t b) { return 2.0f + 0.1f * ((a + b) % 3); };
  auto link = Analyze(Sweep(
      5, [](uint32_t, uint32_t) { return 100.0f; },
      [&](uint32_t a, uint32_t b) { return Is(a, b, 0, 3) ? 9.0f : jitter(a, b); }));
  CHECK(Only(link).kind() == "high_latency_link");
  CHECK(link.findings[0].detail().find("above 2.1 times the fabric's typical") !=
        std::string::npos);

  auto node = Analyze(Sweep(
      5, [](uint32_t, uint32_t) { return 100.0f; },
      [&](uint32_t a, uint32_t b) { return Involves(a, b, 3) ? 9.0f : jitter(a, b); }));
  CHECK(Kinds(node) == std::vector<std::string>{"straggler_node:node-3:"});
}

TEST_CASE("The absolute floor: link_rate_gbps for RDMA probes, tcp_bw_gbps for tcp_bw") {
  auto in = Sweep(4, [](uint32_t, uint32_t) { return 150.0f; });
  in.expect.set_link_rate_gbps(400);
  CHECK(Analyze(in).findings.empty());  // TCP without expect.tcp_bw_gbps: judged against peers only
  {
    // A TCP fabric at 150 of an expected 200 (every host losing packets, say): the fabric.
    auto tcp = in;
    tcp.expect.set_tcp_bw_gbps(200);
    auto r = Analyze(tcp);
    REQUIRE(Kinds(r) == std::vector<std::string>{"fabric_degraded::"});
    CHECK(r.findings[0].detail().find("(90 % of expect.tcp_bw_gbps 200.00)") != std::string::npos);
    // One host at 100 of a fabric at 190: below the floor, named.
    auto one = Sweep(6, [](uint32_t a, uint32_t b) { return Involves(a, b, 2) ? 100.0f : 190.0f; });
    one.expect.set_tcp_bw_gbps(200);
    CHECK(Kinds(Analyze(one)) == std::vector<std::string>{"straggler_node:node-2:"});
  }
  in.bandwidth_is_rdma = true;
  in.bandwidth_probe = "rdma_write_bw";
  auto r = Analyze(in);
  REQUIRE_FALSE(r.findings.empty());
  CHECK(report::WorstSeverity(r.findings) == v1::SEVERITY_CRITICAL);
}

TEST_CASE("A floor the whole fabric misses blames no node: one fabric_degraded finding") {
  // Every pair at 150 of an expected 400 Gb/s: a straggler is an outlier, and here nobody is.
  auto in = Sweep(6, [](uint32_t, uint32_t) { return 150.0f; });
  in.expect.set_link_rate_gbps(400);
  in.bandwidth_is_rdma = true;
  in.bandwidth_probe = "rdma_write_bw";
  auto r = Analyze(in);
  REQUIRE(Kinds(r) == std::vector<std::string>{"fabric_degraded::"});
  CHECK(r.findings[0].severity() == v1::SEVERITY_CRITICAL);
  CHECK(r.findings[0].action() == v1::ACTION_INVESTIGATE);
  CHECK(r.findings[0].detail().find(
            "typical 150.00 Gb/s is below the expected rate's floor 360.00 Gb/s") !=
        std::string::npos);
  for (const auto& node : r.nodes) CHECK_FALSE(node.straggler);
  // A node slower than the rest of that slow fabric is still its straggler, by the relative rule.
  auto in2 = Sweep(6, [](uint32_t a, uint32_t b) { return Involves(a, b, 3) ? 50.0f : 150.0f; });
  in2.expect.set_link_rate_gbps(400);
  in2.bandwidth_is_rdma = true;
  in2.bandwidth_probe = "rdma_write_bw";
  CHECK(Kinds(Analyze(in2)) ==
        std::vector<std::string>{"fabric_degraded::", "straggler_node:node-3:"});
  // A minority below the floor is theirs: the floor still blames where it can tell.
  auto in3 = Sweep(6, [](uint32_t a, uint32_t b) { return Involves(a, b, 1) ? 330.0f : 380.0f; });
  in3.expect.set_link_rate_gbps(400);
  in3.bandwidth_is_rdma = true;
  in3.bandwidth_probe = "rdma_write_bw";
  CHECK(Kinds(Analyze(in3)) == std::vector<std::string>{"straggler_node:node-1:"});
  // Nodes below the floor the rest meets are its stragglers, outliers or not: the expectation
  // says what slow is (not a slow link for each of their pairs).
  // Senders from 0.8 to 1.2 times the link rate's 400 in even steps: no outlier among them.
  const float factor[] = {0.80f, 0.84f, 0.9f, 0.96f, 1.02f, 1.08f, 1.14f, 1.2f};
  auto in4 = Sweep(8, [&](uint32_t from, uint32_t) { return 400.0f * factor[from]; });
  in4.expect.set_link_rate_gbps(400);
  in4.bandwidth_is_rdma = true;
  in4.bandwidth_probe = "rdma_write_bw";
  CHECK(Kinds(Analyze(in4)) ==
        std::vector<std::string>{"straggler_node:node-0:", "straggler_node:node-1:"});
  // The same for a latency ceiling every pair is above.
  auto lat = Sweep(6, [](uint32_t, uint32_t) { return 100.0f; });
  lat.thresholds.set_max_lat_us(1.5);
  CHECK(Kinds(Analyze(lat)) == std::vector<std::string>{"fabric_degraded::"});
}

TEST_CASE("On a noisy fabric a pair's chance low is no slow link; a link ten times slower is") {
  // Log-normal spread between pairs, 30 % a deviation, that re-tests do not remove (each pair's
  // own path: ECMP collisions, a busy host), and 5 % between attempts. Pairs at half the
  // typical figure are then part of the fabric's character: one pair below 60 % of typical
  // is no evidence against its link unless it is a robust outlier.
  std::mt19937 random(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::map<std::pair<uint32_t, uint32_t>, float> path;  // a direction's persistent factor
  auto noisy = [&](uint32_t a, uint32_t b, float figure) {
    auto [it, fresh] = path.try_emplace({a, b}, 0.0f);
    if (fresh) it->second = std::exp(0.3f * normal(random));
    return figure * it->second * std::exp(0.05f * normal(random));
  };
  Figure healthy = [&](uint32_t a, uint32_t b) { return noisy(a, b, 100.0f); };
  // A healthy pair is named by chance in about 1 % of sweeps (the quantile for the number of
  // figures); without the outlier test nearly every one of these sweeps names a pair.
  int lows = 0, raised = 0;
  for (int trial = 0; trial < 50; ++trial) {
    path.clear();
    auto r = WithRetests(Sweep(8, healthy), healthy);
    for (const auto& p : r.pairs) lows += p.relative_bw < 0.6f;
    raised += !r.findings.empty();
  }
  CHECK(lows > 20);  // pairs below 60 % of typical after their re-tests
  CHECK(raised <= 2);
  Figure slow_link = [&](uint32_t a, uint32_t b) {
    return noisy(a, b, Is(a, b, 2, 5) ? 10.0f : 100.0f);
  };
  int more = 0;
  for (int trial = 0; trial < 50; ++trial) {
    path.clear();
    auto r = WithRetests(Sweep(8, slow_link), slow_link);
    const auto kinds = Kinds(r);
    std::string all;
    for (const auto& k : kinds) all += k + " ";
    for (const auto& f : r.findings) all += "| " + f.detail();
    INFO("trial " << trial << ": " << all);
    REQUIRE(std::count(kinds.begin(), kinds.end(), "slow_link:node-2:node-5") == 1);
    more += kinds.size() > 1;
    for (const auto& f : r.findings) {
      CHECK(f.kind() == "slow_link");
      CHECK(f.detail().find("robust deviations under typical on a log scale") != std::string::npos);
    }
  }
  CHECK(more <= 2);
}

TEST_CASE("Unreachable nodes, and probes an agent refused") {
  auto in = Sweep(4, [](uint32_t, uint32_t) { return 100.0f; });
  in.nodes[3].reachable = false;
  in.nodes[3].unreachable_reason = "connection refused";
  in.reasons = {"server refused: no device"};
  for (auto& pair : in.pairs) {
    if (Involves(pair.client, pair.server, 3)) {
      pair.status = PairStatus::kNotMeasured;
      pair.forward.bw_gbps = pair.reverse.bw_gbps = pair.lat_us = std::nanf("");
    }
  }
  size_t refused = 0;
  while (Involves(in.pairs[refused].client, in.pairs[refused].server, 3)) ++refused;
  in.pairs[refused].status = PairStatus::kRefused;
  in.pairs[refused].reason = 0;
  auto r = Analyze(in);
  auto kinds = Kinds(r);
  REQUIRE(kinds.size() == 2);
  CHECK(kinds[0] == "node_unreachable:node-3:");
  CHECK(kinds[1].rfind("probe_failed:", 0) == 0);
  CHECK(r.nodes[3].verdict == Verdict::kUnknown);
  CHECK(report::WorstSeverity(r.findings) == v1::SEVERITY_CRITICAL);
  for (const auto& f : r.findings) {
    if (f.kind() == "probe_failed")
      CHECK(f.detail().find("server refused: no device") != std::string::npos);
  }
}

TEST_CASE("MTU: the odd node out, or every node against the expectation") {
  auto in = Sweep(5, [](uint32_t, uint32_t) { return 100.0f; });
  in.nodes[4].netdev_mtu = 1400;
  auto odd = Analyze(in);
  REQUIRE(Kinds(odd) == std::vector<std::string>{"mtu_mismatch:node-4:"});
  CHECK(odd.findings[0].detail() ==
        "node-4: eth0 MTU 1400, expected 9000 (the sweep's common MTU)");

  in.nodes[4].netdev_mtu = 9000;
  in.expect.set_netdev_mtu(4200);
  CHECK(Analyze(in).findings.size() == 5);
}

TEST_CASE("MTU: a split with no most common MTU blames neither side without an expectation") {
  auto in = Sweep(2, [](uint32_t, uint32_t) { return 100.0f; });
  in.nodes[0].netdev_mtu = 9000;
  in.nodes[1].netdev_mtu = 1500;
  auto split = Analyze(in);
  REQUIRE(Kinds(split) == std::vector<std::string>{"mtu_mismatch:node-0:", "mtu_mismatch:node-1:"});
  CHECK(split.findings[0].detail().find("split between MTUs 1500 and 9000") != std::string::npos);
  in.expect.set_netdev_mtu(9000);  // the expectation decides
  CHECK(Kinds(Analyze(in)) == std::vector<std::string>{"mtu_mismatch:node-1:"});
}

TEST_CASE("Normal quantiles for the number of figures a sweep judges") {
  CHECK(NormalQuantileAbove(0.025) == Approx(1.96).epsilon(0.001));
  CHECK(NormalQuantileAbove(0.01 / 56) == Approx(3.57).epsilon(0.002));
  CHECK(NormalQuantileAbove(0.01 / 4032) == Approx(4.56).epsilon(0.002));
}

TEST_CASE("Robust statistics: median and scaled MAD") {
  CHECK(Median({3, 1, 2}) == 2);
  CHECK(Median({4, 1, 3, 2}) == 2.5);
  CHECK(ScaledMad({1, 2, 3, 4, 100}, 3) == Approx(1.4826));
}

}  // namespace fabricctl::controller
