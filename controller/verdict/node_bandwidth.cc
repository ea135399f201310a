#include "controller/verdict/node_bandwidth.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/verdict/robust_stats.h"
#include "report/findings.h"

namespace fabricctl::controller {

std::vector<v1::Finding> JudgeNodeBandwidth(const std::vector<NodeBandwidthPair>& pairs,
                                            const std::vector<std::string>& names,
                                            const v1::Thresholds& thresholds) {
  std::vector<double> shares, logs;
  std::vector<const NodeBandwidthPair*> judged;
  for (const auto& p : pairs) {
    if (p.rails < 2 || !(p.alone_gbps > 0) || !std::isfinite(p.together_gbps)) continue;
    judged.push_back(&p);
    shares.push_back(p.together_gbps / p.alone_gbps);
    logs.push_back(std::log(std::max(shares.back(), 1e-9)));
  }
  std::vector<v1::Finding> out;
  if (judged.empty()) return out;
  const double typical = Median(shares);
  const double spread =
      std::max(GoodSideSpread(logs, std::log(typical), /*higher_is_better=*/true), kMinLogSpread);
  const double bar = ChanceBar(thresholds.max_robust_z(), judged.size());
  const double floor = 1 - thresholds.min_effect();
  const bool fleet_limited = typical <= floor;
  // Per node and side (0: what it sends, 1: what it receives): its peers, the limited ones.
  struct Tally {
    std::set<uint32_t> peers[2], limited[2];
    std::vector<std::string> evidence;
  };
  std::map<uint32_t, Tally> nodes;
  for (size_t k = 0; k < judged.size(); ++k) {
    const NodeBandwidthPair& p = *judged[k];
    const bool limited =
        shares[k] <= floor && (fleet_limited || logs[k] - std::log(typical) <= -bar * spread);
    const std::string text = absl::StrFormat("%s -> %s %.2f of %.2f Gb/s", names[p.client],
                                             names[p.server], p.together_gbps, p.alone_gbps);
    for (int side = 0; side < 2; ++side) {
      const uint32_t node = side == 0 ? p.client : p.server;
      const uint32_t peer = side == 0 ? p.server : p.client;
      Tally& t = nodes[node];
      t.peers[side].insert(peer);
      if (!limited) continue;
      t.limited[side].insert(peer);
      t.evidence.push_back(text);
    }
  }
  for (auto& [node, t] : nodes) {
    bool side_limited[2];
    for (int side = 0; side < 2; ++side)
      side_limited[side] = t.peers[side].size() >= 2 && t.limited[side] == t.peers[side];
    if (!side_limited[0] && !side_limited[1]) continue;
    std::sort(t.evidence.begin(), t.evidence.end());
    t.evidence.erase(std::unique(t.evidence.begin(), t.evidence.end()), t.evidence.end());
    const char* direction = side_limited[0] && side_limited[1] ? "both"
                            : side_limited[0]                  ? "transmit"
                                                               : "receive";
    v1::Finding f = report::Make(
        report::kind::kNodeBandwidthLimited, names[node],
        absl::StrFormat(
            "its rails at once reach less than their sum alone, %s, with every peer (%s): the "
            "node cannot feed its NICs together (its PCIe root complex, its CPU or its memory); "
            "the fleet's pairs reach %.2f of their rails' sum, limited is %.0f %% below the sum "
            "and %s",
            side_limited[0] && side_limited[1] ? "both ways"
            : side_limited[0]                  ? "in what it sends"
                                               : "in what it receives",
            absl::StrJoin(t.evidence, ", "), typical, thresholds.min_effect() * 100,
            fleet_limited ? "the fleet's typical share is below that too"
                          : "beyond the fleet's spread"));
    auto& e = *f.mutable_evidence();
    e["pairs"] = absl::StrJoin(t.evidence, ", ");
    e["typical_share"] = absl::StrFormat("%.2f", typical);
    e["direction"] = direction;
    out.push_back(std::move(f));
  }
  return out;
}

void SubsumeByNodeBandwidth(const std::vector<v1::Finding>& limited,
                            std::vector<v1::Finding>* findings) {
  std::set<std::string> nodes;
  for (const auto& f : limited) nodes.insert(f.node());
  if (nodes.empty()) return;
  auto explained = [&](const v1::Finding& f) {
    const bool rail_kind =
        f.kind() == report::kind::kSlowNic || f.kind() == report::kind::kStragglerNode ||
        f.kind() == report::kind::kSlowLink || f.kind() == report::kind::kUnstable;
    return rail_kind && (nodes.count(f.node()) > 0 || nodes.count(f.peer()) > 0);
  };
  findings->erase(std::remove_if(findings->begin(), findings->end(), explained), findings->end());
}

}  // namespace fabricctl::controller
