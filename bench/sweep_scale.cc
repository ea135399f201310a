// Planning and analysis at scale, with results generated in process: a full sweep of N nodes
// (N(N-1)/2 pairs) in which a few nodes are stragglers and a few links slow. Reports wall time
// and peak memory, and checks that exactly the planted faults are found.
//
//   bazel run -c opt //bench:sweep_scale -- 1024 4096
//   bazel run -c opt //bench:sweep_scale -- topology 16384   # leaves of 32 under spines of 16
//   bazel run -c opt //bench:sweep_scale -- rails=8 16384     # the same on 8 rails, one NIC slow
//   bazel run -c opt //bench:sweep_scale -- ecmp=4 4096        # 4 spines, 16 traced flows a pair
//
// With `topology`, the plan is --pairing topology's and one leaf's uplink is slow as well as
// the stragglers: the analysis must name that uplink and the stragglers, nothing else.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/config.h"
#include "controller/sweep/pairing.h"
#include "controller/verdict/analysis.h"
#include "controller/verdict/rails.h"

namespace {

using fabricctl::controller::AnalysisInput;
using fabricctl::controller::Analyze;
using fabricctl::controller::FullRounds;
using fabricctl::controller::NodeInput;
using fabricctl::controller::PairInput;

double PeakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // kilobytes on Linux
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int Run(uint32_t n) {
  std::mt19937 random(n);
  std::normal_distribution<float> noise(0.0f, 1.5f);
  const std::set<uint32_t> stragglers = {n / 7, n / 3, n - 2};
  const std::pair<uint32_t, uint32_t> slow_link = {n / 5, n / 2};

  auto t0 = std::chrono::steady_clock::now();
  auto rounds = FullRounds(n);
  const double plan_s = Since(t0);

  AnalysisInput in;
  for (uint32_t i = 0; i < n; ++i) {
    NodeInput node;
    node.name = "node-" + std::to_string(i);
    node.netdev_mtu = 9000;
    in.nodes.push_back(std::move(node));
  }
  in.pairs.reserve(static_cast<size_t>(n) * (n - 1) / 2);
  for (const auto& round : rounds) {
    for (const auto& p : round) {
      PairInput pair;
      pair.client = p.first;
      pair.server = p.second;
      float bw = 390.0f + noise(random);
      if (stragglers.count(p.first) || stragglers.count(p.second)) bw = 180.0f + noise(random);
      if ((p.first == slow_link.first && p.second == slow_link.second) ||
          (p.first == slow_link.second && p.second == slow_link.first)) {
        bw = 250.0f;
      }
      pair.forward.bw_gbps = bw;
      pair.lat_us = 3.0f + noise(random) * 0.05f;
      in.pairs.push_back(pair);
    }
  }
  rounds.clear();
  rounds.shrink_to_fit();
  in.expect.set_link_rate_gbps(400);
  in.bandwidth_is_rdma = true;
  in.thresholds.set_min_bw_efficiency(0.9);
  in.thresholds.set_relative_bw(0.93);
  in.thresholds.set_relative_lat(2.1);
  in.thresholds.set_max_robust_z(3.5);
  in.bandwidth_probe = "rdma_write_bw";
  in.latency_probe = "rdma_write_lat";

  auto t1 = std::chrono::steady_clock::now();
  auto result = Analyze(in);
  const double analyse_s = Since(t1);

  std::set<std::string> found;
  for (const auto& f : result.findings) found.insert(f.kind() + ":" + f.node());
  std::set<std::string> want;
  for (uint32_t s : stragglers) want.insert("straggler_node:node-" + std::to_string(s));
  const bool link_found = std::any_of(result.findings.begin(), result.findings.end(),
                                      [&](const auto& f) { return f.kind() == "slow_link"; });
  std::set<std::string> stragglers_found;
  for (const auto& k : found) {
    if (k.rfind("straggler_node:", 0) == 0) stragglers_found.insert(k);
  }
  const bool correct = stragglers_found == want && link_found && result.findings.size() == 4;
  std::printf(
      "nodes %5u  pairs %9zu  plan %6.2f s  analysis %6.2f s  peak RSS %7.1f MiB  findings %zu "
      "(%s)\n",
      n, in.pairs.size(), plan_s, analyse_s, PeakRssMiB(), result.findings.size(),
      correct ? "exactly the planted faults" : "NOT the planted faults");
  return correct ? 0 : 1;
}

// n nodes placed in their leaf and spine groups (groups[0], groups[1]), levels named.
AnalysisInput PlacedNodes(uint32_t n, const std::vector<std::vector<int32_t>>& groups) {
  AnalysisInput in;
  in.levels = {"leaf", "spine"};
  for (uint32_t i = 0; i < n; ++i) {
    NodeInput node;
    node.name = "node-" + std::to_string(i);
    node.place = {"leaf-" + std::to_string(groups[0][i]), "spine-" + std::to_string(groups[1][i])};
    in.nodes.push_back(std::move(node));
  }
  return in;
}

// The topology plan over n nodes (leaves of 32 under spines of 16 leaves), a straggler and a
// slow uplink planted.
int RunTopology(uint32_t n) {
  std::mt19937 random(n);
  std::normal_distribution<float> noise(0.0f, 1.5f);
  std::vector<std::vector<int32_t>> groups(2, std::vector<int32_t>(n));
  for (uint32_t i = 0; i < n; ++i) {
    groups[0][i] = static_cast<int32_t>(i / 32);
    groups[1][i] = static_cast<int32_t>(i / 512);
  }
  const uint32_t straggler = n / 3, slow_leaf = 1;
  auto t0 = std::chrono::steady_clock::now();
  const auto rounds = fabricctl::controller::TopologyRounds(n, groups);
  const double plan_s = Since(t0);
  AnalysisInput in = PlacedNodes(n, groups);
  for (const auto& round : rounds) {
    for (const auto& p : round) {
      PairInput pair;
      pair.client = p.first;
      pair.server = p.second;
      const bool across_slow = (groups[0][p.first] == static_cast<int32_t>(slow_leaf)) !=
                               (groups[0][p.second] == static_cast<int32_t>(slow_leaf));
      float bw = across_slow ? 120.0f : 390.0f;
      if (p.first == straggler || p.second == straggler) bw = std::min(bw, 180.0f);
      pair.forward.bw_gbps = bw + noise(random);
      pair.reverse.bw_gbps = bw + noise(random);
      in.pairs.push_back(pair);
    }
  }
  in.thresholds.set_min_bw_efficiency(0.9);
  in.thresholds.set_relative_bw(0.6);
  in.thresholds.set_relative_lat(2.1);
  in.thresholds.set_max_robust_z(3.5);
  in.thresholds.set_min_effect(0.2);
  in.thresholds.set_min_node_pairs(2);
  in.bandwidth_probe = "rdma_write_bw";
  auto t1 = std::chrono::steady_clock::now();
  auto result = Analyze(in);
  const double analyse_s = Since(t1);
  std::set<std::string> found;
  for (const auto& f : result.findings) found.insert(f.kind() + ":" + f.node() + f.device());
  const std::set<std::string> want = {"slow_uplink:leaf-" + std::to_string(slow_leaf),
                                      "straggler_node:node-" + std::to_string(straggler)};
  const bool correct = found == want;
  std::printf(
      "topology nodes %5u  pairs %7zu  rounds %3zu (full mesh: %llu pairs, %u rounds)  plan %5.2f "
      "s  "
      "analysis %5.2f s  peak RSS %7.1f MiB  findings %zu (%s)\n",
      n, in.pairs.size(), rounds.size(), static_cast<unsigned long long>(n) * (n - 1) / 2, n - 1,
      plan_s, analyse_s, PeakRssMiB(), result.findings.size(),
      correct ? "exactly the planted faults" : "NOT the planted faults");
  return correct ? 0 : 1;
}

// The topology plan on every one of `rails` rails (leaves of 32 per rail, as RunTopology), each
// rail analysed on its own and the verdicts combined as a sweep does: one node's NIC slow on
// rail 3 must be slow_nic on that rail and nothing else.
int RunRails(uint32_t n, uint32_t rails) {
  std::mt19937 random(n + rails);
  std::normal_distribution<float> noise(0.0f, 1.5f);
  std::vector<std::vector<int32_t>> groups(2, std::vector<int32_t>(n));
  for (uint32_t i = 0; i < n; ++i) {
    groups[0][i] = static_cast<int32_t>(i / 32);
    groups[1][i] = static_cast<int32_t>(i / 512);
  }
  const uint32_t slow_node = n / 5, slow_rail = 3 % rails;
  auto t0 = std::chrono::steady_clock::now();
  const auto rounds = fabricctl::controller::TopologyRounds(n, groups);
  const double plan_s = Since(t0);
  std::vector<fabricctl::controller::RailVerdict> verdicts;
  size_t pairs = 0;
  auto t1 = std::chrono::steady_clock::now();
  for (uint32_t r = 0; r < rails; ++r) {
    AnalysisInput in = PlacedNodes(n, groups);
    for (const auto& round : rounds) {
      for (const auto& p : round) {
        PairInput pair;
        pair.client = p.first;
        pair.server = p.second;
        const float bw =
            r == slow_rail && (p.first == slow_node || p.second == slow_node) ? 180.0f : 390.0f;
        pair.forward.bw_gbps = bw + noise(random);
        pair.reverse.bw_gbps = bw + noise(random);
        in.pairs.push_back(pair);
      }
    }
    pairs += in.pairs.size();
    in.thresholds = fabricctl::DefaultConfig().thresholds();
    in.bandwidth_probe = "rdma_write_bw";
    fabricctl::controller::RailVerdict v;
    v.rail = "rail" + std::to_string(r);
    v.netdev = "eth" + std::to_string(r);
    const auto result = Analyze(in);
    v.findings = result.findings;
    for (uint32_t i = 0; i < n; ++i) {
      if (result.nodes[i].verdict != fabricctl::controller::Verdict::kOk)
        v.unhealthy.insert(in.nodes[i].name);
    }
    verdicts.push_back(std::move(v));
  }
  const auto findings = fabricctl::controller::CombineRails(verdicts);
  const double analyse_s = Since(t1);
  std::set<std::string> found;
  for (const auto& f : findings) found.insert(f.kind() + ":" + f.node());
  const bool correct = found == std::set<std::string>{"slow_nic:node-" + std::to_string(slow_node)};
  std::printf(
      "rails %u x topology nodes %5u  pairs %8zu  plan %5.2f s  analysis %5.2f s  peak RSS %7.1f "
      "MiB  "
      "findings %zu (%s)\n",
      rails, n, pairs, plan_s, analyse_s, PeakRssMiB(), findings.size(),
      correct ? "exactly the planted fault" : "NOT the planted fault");
  return correct ? 0 : 1;
}

// The topology plan over n nodes in leaves of 32, every leaf with one link to each of `spines`
// spines (equal-cost paths), each pair measured both ways with 16 flows (sweep --flows' default
// for 4 paths), each hashed onto a spine at random and traced; one leaf-spine link carries its
// flows at 40 %. The analysis must name that link (slow_ecmp_link) and nothing else.
int RunEcmp(uint32_t n, uint32_t spines) {
  constexpr uint32_t kFlows = 16, kLeafSize = 32;
  std::mt19937 random(n + spines);
  std::normal_distribution<float> noise(0.0f, 0.3f);
  std::uniform_int_distribution<uint32_t> spine_of(0, spines - 1);
  std::vector<std::vector<int32_t>> groups(2, std::vector<int32_t>(n));
  for (uint32_t i = 0; i < n; ++i) {
    groups[0][i] = static_cast<int32_t>(i / kLeafSize);
    groups[1][i] = 0;  // every leaf under every spine: one spine group
  }
  const auto rounds = fabricctl::controller::TopologyRounds(n, groups);
  AnalysisInput in = PlacedNodes(n, groups);
  const uint32_t leaves = (n + kLeafSize - 1) / kLeafSize;
  for (uint32_t l = 0; l < leaves; ++l) in.routers.push_back("leaf-" + std::to_string(l));
  for (uint32_t s = 0; s < spines; ++s) in.routers.push_back("spine-" + std::to_string(s));
  const uint32_t slow_leaf = 1, slow_spine = 2 % spines;
  // A flow from leaf a to leaf b through spine s: 25 Gb/s, 40 % of it across the slow link.
  auto flow = [&](uint32_t pair, bool reverse, uint32_t a, uint32_t b) {
    fabricctl::controller::FlowInput f;
    f.pair = pair;
    f.reverse = reverse;
    f.complete = true;
    float bw = 25.0f + noise(random);
    if (a == b) {
      f.hops = {static_cast<int32_t>(a)};
    } else {
      const uint32_t s = spine_of(random);
      f.hops = {static_cast<int32_t>(a), static_cast<int32_t>(leaves + s), static_cast<int32_t>(b)};
      if (s == slow_spine && (a == slow_leaf || b == slow_leaf)) bw *= 0.4f;
    }
    f.bw_gbps = bw;
    in.flows.push_back(std::move(f));
    return bw;
  };
  for (const auto& round : rounds) {
    for (const auto& p : round) {
      PairInput pair;
      pair.client = p.first;
      pair.server = p.second;
      const auto index = static_cast<uint32_t>(in.pairs.size());
      const auto a = static_cast<uint32_t>(groups[0][p.first]);
      const auto b = static_cast<uint32_t>(groups[0][p.second]);
      float forward = 0, reverse = 0;
      for (uint32_t i = 0; i < kFlows; ++i) forward += flow(index, false, a, b);
      for (uint32_t i = 0; i < kFlows; ++i) reverse += flow(index, true, b, a);
      pair.forward.bw_gbps = forward;
      pair.reverse.bw_gbps = reverse;
      in.pairs.push_back(pair);
    }
  }
  in.thresholds = fabricctl::DefaultConfig().thresholds();
  in.bandwidth_probe = "rdma_write_bw";
  auto t1 = std::chrono::steady_clock::now();
  const auto result = Analyze(in);
  const double analyse_s = Since(t1);
  std::set<std::string> found;
  for (const auto& f : result.findings) found.insert(f.kind() + ":" + f.node() + f.device());
  const std::string link =
      "leaf-" + std::to_string(slow_leaf) + " - spine-" + std::to_string(slow_spine);
  const bool correct = found == std::set<std::string>{"slow_ecmp_link:" + link};
  std::string names;
  for (const auto& k : found) names += " " + k;
  std::printf(
      "ecmp %u spines x topology nodes %5u  pairs %7zu  flows %8zu  analysis %6.2f s  peak RSS "
      "%7.1f MiB  findings %zu (%s)%s\n",
      spines, n, in.pairs.size(), in.flows.size(), analyse_s, PeakRssMiB(), result.findings.size(),
      correct ? "exactly the planted fault" : "NOT the planted fault",
      correct ? "" : names.c_str());
  return correct ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int status = 0;
  bool topology = false;
  uint32_t rails = 0, spines = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "topology") {
      topology = true;
      continue;
    }
    if (arg.rfind("rails=", 0) == 0) {
      rails = static_cast<uint32_t>(std::atoi(arg.c_str() + 6));
      continue;
    }
    if (arg.rfind("ecmp=", 0) == 0) {
      spines = static_cast<uint32_t>(std::atoi(arg.c_str() + 5));
      continue;
    }
    const auto n = static_cast<uint32_t>(std::atoi(argv[i]));
    status |= spines > 0  ? RunEcmp(n, spines)
              : rails > 0 ? RunRails(n, rails)
              : topology  ? RunTopology(n)
                          : Run(n);
  }
  if (argc < 2) status = Run(1024);
  return status;
}
