#include "controller/sweep/localise.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "base/profiles.h"
#include "controller/localise_nodes.h"
#include "probes/catalogue.h"

namespace fabricctl::controller::sweep {
namespace {

// Whether this sweep's `kind` probe put `side`'s buffers in GPU memory.
bool GpuMemoryOn(const SweepSpecs& specs, v1::ProbeKind kind, v1::ProbeSide side) {
  for (size_t k = 0; k < specs.kinds.size() && k < specs.specs.size(); ++k) {
    if (specs.kinds[k] != kind || !probes::IsRdmaProbe(kind)) continue;
    const v1::RdmaOptions& rdma = specs.specs[k].rdma();
    const bool client = rdma.memory() == v1::MEMORY_GPU;
    const bool server = rdma.server_memory() == v1::MEMORY_GPU ||
                        (rdma.server_memory() == v1::MEMORY_BACKEND_UNSPECIFIED && client);
    return side == v1::SIDE_SERVER ? server : side == v1::SIDE_CLIENT && client;
  }
  return false;
}

}  // namespace

AnalysisInput BuildAnalysisInput(const Fleet& fleet, const SweepSpecs& specs,
                                 const v1::Config& config, const std::map<PairKey, PairRun>& pairs,
                                 std::vector<const PairRun*>* ordered) {
  AnalysisInput in;
  in.expect = config.expect();
  in.thresholds = config.thresholds();
  in.require_retest = config.sweep().retests() > 0;
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
    // Without a profile, asking for an RDMA probe is the expectation; a profile that sets no
    // link rate (a CPU-only or storage node) says the node has no RDMA to test.
    const std::map<std::string, std::string> labels(node->inventory.labels().begin(),
                                                    node->inventory.labels().end());
    n.rdma_expected = ExpectationsFor(config, node->name, labels, &n.profile).link_rate_gbps() > 0 ||
                      n.profile.empty();
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
    p.attempts = static_cast<uint16_t>(std::min<uint32_t>(run.attempts, 65535));
    if (specs.bw_index >= 0) {
      p.bw_gbps = HeadlineBw(run.results[specs.bw_index]);
      if (static_cast<size_t>(specs.bw_index) < run.reverse.size()) {
        p.bw_reverse_gbps = HeadlineBw(run.reverse[specs.bw_index]);
      }
    }
    if (specs.bw_index >= 0 && specs.kinds[specs.bw_index] == v1::RDMA_READ_BW) {
      // READ: the client pulls, so the data of the forward run flows server to client.
      std::swap(p.bw_gbps, p.bw_reverse_gbps);
    }
    if (specs.lat_index >= 0) p.lat_us = HeadlineLat(run.results[specs.lat_index]);
    std::vector<const v1::ProbeResult*> all;
    for (const auto& r : run.results) all.push_back(&r);
    for (const auto& r : run.reverse) {
      if (r.kind() != v1::PROBE_KIND_UNSPECIFIED) all.push_back(&r);
    }
    // A path that carried any probe is not down: its other failures are the probes'.
    const bool carried = std::any_of(all.begin(), all.end(), [](const v1::ProbeResult* r) {
      return r->outcome() == v1::PROBE_OK;
    });
    // A pair with an end that has no RDMA device has no RDMA to fall back from: its skipped
    // RDMA probes are that node's rdma_unavailable, not a TCP fallback on its healthy peers.
    const bool rdma_pair = in.nodes[run.client].rdma_unavailable_reason.empty() &&
                           in.nodes[run.server].rdma_unavailable_reason.empty();
    for (const v1::ProbeResult* r : all) {
      if (r->outcome() == v1::PROBE_SKIPPED && probes::IsRdmaProbe(r->kind())) {
        if (!rdma_pair) continue;
        p.tcp_fallback = true;
        in.reasons.push_back(r->reason());
        p.reason = static_cast<int32_t>(in.reasons.size() - 1);
      } else if (r->outcome() == v1::PROBE_FAILED &&
                 r->cause() == v1::CAUSE_GPUDIRECT_UNAVAILABLE &&
                 GpuMemoryOn(specs, r->kind(), r->failed_side())) {
        // GPU memory that could not be registered for RDMA: the GPUDirect of the node whose
        // half failed (its own word: a server half's failure is confirmed by the server in
        // MeasurePair), not the path; only where this sweep put that half's buffers in GPU
        // memory. In the reverse direction the roles are swapped.
        const bool server_side = r->failed_side() == v1::SIDE_SERVER;
        const bool reverse = r >= run.reverse.data() && r < run.reverse.data() + run.reverse.size();
        const uint32_t node = (server_side != reverse) ? run.server : run.client;
        if (in.nodes[node].gpudirect_unavailable_reason.empty()) {
          const std::string& why = r->reason();
          in.nodes[node].gpudirect_unavailable_reason =
              server_side && why.rfind("server: ", 0) == 0 ? why.substr(8) : why;
        }
        p.status = PairStatus::kNotMeasured;
        break;
      } else if (r->outcome() == v1::PROBE_FAILED || r->outcome() == v1::PROBE_TIMEOUT) {
        // Failed between two agents that answer: evidence that the path is down, unless an
        // agent refused to run it.
        p.status = !ends_up ? PairStatus::kNotMeasured
                   : r->refused() || carried ? PairStatus::kRefused
                                             : PairStatus::kUnreachable;
        in.reasons.push_back(absl::StrCat(probes::FindProbeInfo(r->kind())->name, ": ", r->reason()));
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
  // In an order of the sweep's own (seeded by its id, so a sweep is repeatable): no one node is
  // every suspect's extra peer, and an agent that lies cannot count on being the deciding vote.
  std::shuffle(good.begin(), good.end(), std::mt19937_64(static_cast<uint64_t>(runner.sweep_id())));
  // Each end gets as many more peers as it lacks to be judged (thresholds.min_node_pairs).
  const uint32_t min_peers = std::max<uint32_t>(1, in.thresholds.min_node_pairs());
  std::vector<Pair> wanted;
  std::vector<uint32_t> added(fleet.nodes.size(), 0);
  for (size_t i = 0; i < in.pairs.size(); ++i) {
    const PairResult& r = first.pairs[i];
    const PairInput& p = in.pairs[i];
    if (!(r.slow || r.high_latency)) continue;
    if (first.nodes[p.client].straggler || first.nodes[p.server].straggler) continue;
    for (uint32_t end : {p.client, p.server}) {
      for (uint32_t g : good) {
        if (first.nodes[end].pairs + added[end] >= min_peers) break;
        if (g == p.client || g == p.server || runner.Measured(end, g) ||
            std::count(wanted.begin(), wanted.end(), Pair{end, g}) > 0) {
          continue;
        }
        wanted.push_back({end, g});
        ++added[end];
      }
    }
  }
  return wanted;
}

}  // namespace fabricctl::controller::sweep

namespace fabricctl::controller::sweep {

std::vector<Pair> RetestPairs(const Fleet& fleet, const AnalysisInput& in,
                              const std::vector<const PairRun*>& ordered, bool* bandwidth_only) {
  AnalysisInput eager = in;
  eager.require_retest = false;
  const AnalysisResult a = Analyze(eager);
  const size_t n = fleet.nodes.size();
  auto bad = [&](size_t p) {
    const PairResult& r = a.pairs[p];
    return r.slow || r.high_latency || r.unreachable || in.pairs[p].status == PairStatus::kRefused;
  };
  std::vector<uint32_t> stayed(n, 0), recovered(n, 0);
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    const PairInput& pair = in.pairs[p];
    if (!fleet.nodes[pair.client]->reachable || !fleet.nodes[pair.server]->reachable) continue;
    if (pair.status == PairStatus::kNotMeasured || pair.attempts < 2) continue;
    for (uint32_t end : {pair.client, pair.server}) ++(bad(p) ? stayed : recovered)[end];
  }
  // A suspect whose re-tests so far recovered more often than they stayed bad is cleared (it
  // will not be blamed): its flagged pairs are then re-tested like any other, so that no link
  // is named on one measurement.
  auto suspect = [&](uint32_t i) {
    const bool cleared = stayed[i] + recovered[i] > 0 && !RetestsAgree(stayed[i], recovered[i]);
    return (a.nodes[i].straggler || a.nodes[i].path_down) && !cleared;
  };
  // A slow direction the suspects' blamed sides do not explain (a slow link beside a host that
  // only sends slowly) is the link's to answer for: re-tested like any other.
  std::vector<Side> sides(n, Side::kNone);
  for (uint32_t i = 0; i < n; ++i) {
    if (a.nodes[i].straggler && suspect(i)) sides[i] = a.nodes[i].side;
  }
  auto unexplained_slow = [&](size_t p) {
    const PairResult& r = a.pairs[p];
    const PairInput& pair = in.pairs[p];
    return (r.slow_forward && !Explains(sides, {pair.client, pair.server, true, true})) ||
           (r.slow_reverse && !Explains(sides, {pair.server, pair.client, true, true}));
  };
  std::vector<std::vector<size_t>> candidates(n);  // a suspect's bad pairs, not yet re-tested first
  std::vector<Pair> wanted;
  bool only_bw = true;
  auto want = [&](size_t p) {
    wanted.push_back({ordered[p]->client, ordered[p]->server});
    const PairResult& r = a.pairs[p];
    only_bw = only_bw && r.slow && !r.high_latency && in.pairs[p].status == PairStatus::kMeasured;
  };
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    const PairInput& pair = in.pairs[p];
    if (!fleet.nodes[pair.client]->reachable || !fleet.nodes[pair.server]->reachable) continue;
    if (pair.status == PairStatus::kNotMeasured) continue;
    if (!bad(p)) continue;
    const bool by_client = suspect(pair.client), by_server = suspect(pair.server);
    if ((!by_client && !by_server) || unexplained_slow(p)) {
      want(p);
      continue;
    }
    for (uint32_t end : {pair.client, pair.server}) {
      const uint32_t other = end == pair.client ? pair.server : pair.client;
      if (suspect(end) && !suspect(other)) candidates[end].push_back(p);
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (!suspect(i) || RetestsAgree(stayed[i], recovered[i]) || candidates[i].empty()) continue;
    auto fewest = std::min_element(candidates[i].begin(), candidates[i].end(), [&](size_t x, size_t y) {
      return in.pairs[x].attempts < in.pairs[y].attempts;
    });
    want(*fewest);
  }
  if (bandwidth_only) *bandwidth_only = only_bw;
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  return wanted;
}

}  // namespace fabricctl::controller::sweep
