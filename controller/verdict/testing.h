#ifndef FABRICCTL_CONTROLLER_VERDICT_TESTING_H_
#define FABRICCTL_CONTROLLER_VERDICT_TESTING_H_

// Constructed sweeps for the analysis's tests.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "base/config.h"
#include "controller/sweep/pairing.h"
#include "controller/verdict/analysis.h"

namespace fabricctl::controller {

using Figure = std::function<float(uint32_t from, uint32_t to)>;

// A full sweep of n nodes where `from` sends to `to` at bw(from, to) Gb/s (both directions of
// every pair), and the pair's latency is lat(a, b) us; as production judges it: the default
// thresholds, re-tests on, every pair measured twice (its figures survived a re-test). Cases
// about a single measurement say so.
inline AnalysisInput Sweep(uint32_t n, const Figure& bw, const Figure& lat = nullptr) {
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
      pair.forward.bw_gbps = bw(p.first, p.second);
      pair.reverse.bw_gbps = bw(p.second, p.first);
      pair.lat_us = lat ? lat(p.first, p.second) : 2.0f;
      pair.attempts = 2;
      in.pairs.push_back(pair);
    }
  }
  in.thresholds = DefaultConfig().thresholds();
  in.require_retest = true;
  in.bandwidth_probe = "tcp_bw";
  in.latency_probe = "tcp_lat";
  return in;
}

// What a sweep does before blame: every pair the analysis flags is measured twice more and the
// best of the three attempts counts (sweep.retests), and a node is blamed only when its
// re-tests agree.
inline AnalysisResult WithRetests(AnalysisInput in, const Figure& bw) {
  const AnalysisResult first = Analyze(in);
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    if (!first.pairs[p].slow) continue;
    PairInput& pair = in.pairs[p];
    for (int again = 0; again < 2; ++again) {
      pair.forward.bw_gbps = std::max(pair.forward.bw_gbps, bw(pair.client, pair.server));
      pair.reverse.bw_gbps = std::max(pair.reverse.bw_gbps, bw(pair.server, pair.client));
    }
    pair.attempts = 3;
  }
  in.require_retest = true;
  return Analyze(in);
}

inline std::vector<std::string> Kinds(const AnalysisResult& r) {
  std::vector<std::string> kinds;
  for (const auto& f : r.findings) kinds.push_back(f.kind() + ":" + f.node() + ":" + f.peer());
  std::sort(kinds.begin(), kinds.end());
  return kinds;
}

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_TESTING_H_
