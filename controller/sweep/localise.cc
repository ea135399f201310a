#include "controller/sweep/localise.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "probes/catalogue.h"

namespace fabricctl::controller::sweep {

AnalysisInput BuildAnalysisInput(const Fleet& fleet, const SweepSpecs& specs,
                                 const v1::Config& config, const std::map<PairKey, PairRun>& pairs,
                                 std::vector<const PairRun*>* ordered) {
  AnalysisInput in;
  in.expect = config.expect();
  in.thresholds = config.thresholds();
  if (specs.bw_index >= 0) {
    const probes::ProbeInfo* bw = probes::FindProbeInfo(specs.kinds[specs.bw_index]);
    in.bandwidth_probe = std::string(bw->name);
    in.bandwidth_is_rdma = bw->rdma;
  }
  if (specs.lat_index >= 0) {
    in.latency_probe = std::string(probes::FindProbeInfo(specs.kinds[specs.lat_index])->name);
  }
  for (const auto& node : fleet.nodes) {
    NodeInput n;
    n.name = node->name;
    n.reachable = node->reachable;
    n.unreachable_reason = node->reason;
    n.netdev_mtu = AgentInterfaceMtu(node->inventory, &n.netdev);
    if (specs.rdma_asked && node->reachable && node->inventory.rdma_devices_size() == 0) {
      n.rdma_unavailable_reason = node->inventory.rdma_unavailable_reason().empty()
                                      ? "no RDMA device"
                                      : node->inventory.rdma_unavailable_reason();
    }
    in.nodes.push_back(std::move(n));
  }
  if (ordered) ordered->clear();
  for (const auto& [key, run] : pairs) {
    if (ordered) ordered->push_back(&run);
    PairInput p;
    p.client = run.client;
    p.server = run.server;
    const bool ends_up = fleet.nodes[run.client]->reachable && fleet.nodes[run.server]->reachable;
    if (specs.bw_index >= 0) p.bw_gbps = HeadlineBw(run.results[specs.bw_index]);
    if (specs.lat_index >= 0) p.lat_us = HeadlineLat(run.results[specs.lat_index]);
    for (const auto& r : run.results) {
      if (r.outcome() == v1::PROBE_SKIPPED && probes::IsRdmaProbe(r.kind())) {
        p.tcp_fallback = true;
        in.reasons.push_back(r.reason());
        p.reason = static_cast<int32_t>(in.reasons.size() - 1);
      } else if (r.outcome() == v1::PROBE_FAILED || r.outcome() == v1::PROBE_TIMEOUT) {
        p.status = !ends_up ? PairStatus::kNotMeasured
                   : r.outcome() == v1::PROBE_TIMEOUT ? PairStatus::kTimeout
                                                      : PairStatus::kFailed;
        in.reasons.push_back(
            absl::StrCat(probes::FindProbeInfo(r.kind())->name, ": ", r.reason()));
        p.reason = static_cast<int32_t>(in.reasons.size() - 1);
        break;
      }
    }
    in.pairs.push_back(p);
  }
  return in;
}

std::vector<Pair> LocalisationPairs(const Fleet& fleet, const AnalysisInput& in,
                                    const AnalysisResult& first, const RoundRunner& runner) {
  std::vector<uint32_t> good;
  for (uint32_t i = 0; i < fleet.nodes.size(); ++i) {
    if (fleet.nodes[i]->reachable && first.nodes[i].verdict == Verdict::kOk &&
        first.nodes[i].pairs > 0) {
      good.push_back(i);
    }
  }
  std::vector<Pair> wanted;
  for (size_t i = 0; i < in.pairs.size(); ++i) {
    const PairResult& r = first.pairs[i];
    const PairInput& p = in.pairs[i];
    if (!(r.slow || r.high_latency)) continue;
    if (first.nodes[p.client].straggler || first.nodes[p.server].straggler) continue;
    for (uint32_t end : {p.client, p.server}) {
      if (first.nodes[end].pairs >= 2) continue;
      for (uint32_t g : good) {
        if (g == p.client || g == p.server || runner.Measured(end, g)) continue;
        wanted.push_back({end, g});
        break;
      }
    }
  }
  return wanted;
}

}  // namespace fabricctl::controller::sweep
