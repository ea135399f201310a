#include "controller/sweep/analysis_input.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/profiles.h"
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

// The leaf switch port a node is cabled to: the LLDP neighbour port of `netdev`, the interface
// it is measured through (the port's id, or its description where the id is a MAC address),
// else the `<leaf level>_port` label an ibnetdiscover file gave it; "" when unknown.
std::string SwitchPort(const v1::Config& config, const Node& node,
                       const std::map<std::string, std::string>& labels,
                       const std::string& netdev) {
  for (const auto& itf : node.inventory.interfaces()) {
    if (itf.name() != netdev || itf.lldp().system_name().empty()) continue;
    const auto& lldp = itf.lldp();
    const bool mac = lldp.port_id().size() == 17 &&
                     std::count(lldp.port_id().begin(), lldp.port_id().end(), ':') == 5;
    return mac && !lldp.port_description().empty() ? lldp.port_description() : lldp.port_id();
  }
  if (config.topology().levels().empty()) return "";
  auto it = labels.find(config.topology().levels(0) + "_port");
  return it == labels.end() ? "" : it->second;
}

NodeInput NodeInputOf(const Node& node, const SweepSpecs& specs, const v1::Config& config,
                      const Placement& placement, const RailScope& rail) {
  NodeInput n;
  n.name = node.name;
  // Without a profile, asking for an RDMA probe is the expectation; a profile that sets no
  // link rate (a CPU-only or storage node) says the node has no RDMA to test.
  const std::map<std::string, std::string> labels(node.inventory.labels().begin(),
                                                  node.inventory.labels().end());
  n.rdma_expected = ExpectationsFor(config, node.name, labels, &n.profile).link_rate_gbps() > 0 ||
                    n.profile.empty();
  n.reachable = node.reachable;
  n.unreachable_reason = node.reason;
  n.reference = specs.references.count(node.name) > 0;
  if (auto it = specs.stored_gbps.find(node.name); n.reference && it != specs.stored_gbps.end())
    n.stored_gbps = it->second;
  // The interface it is measured through: the agent's address's, or on a rail the rail's.
  if (rail.netdev.empty()) {
    n.netdev_mtu = AgentInterfaceMtu(node.inventory, &n.netdev);
  } else {
    for (const auto& itf : node.inventory.interfaces()) {
      if (itf.name() != rail.netdev) continue;
      n.netdev = itf.name();
      n.netdev_mtu = itf.mtu();
    }
  }
  // Its place in the topology: its label at each level (the agent's, else the configuration's;
  // on a rail, the rail's own leaf where one is known).
  const std::map<std::string, std::string> all = placement.LabelsOf(node);
  for (const std::string& level : config.topology().levels())
    n.place.push_back(GroupAt(all, level, rail.name));
  n.switch_port = SwitchPort(config, node, all, n.netdev);
  if (specs.rdma_asked && node.reachable && node.inventory.rdma_devices_size() == 0) {
    n.rdma_unavailable_reason = node.inventory.rdma_unavailable_reason().empty()
                                    ? "no RDMA device"
                                    : node.inventory.rdma_unavailable_reason();
  }
  return n;
}

// The headline figures of a pair: bandwidth each way (READ's forward run carries the data from
// server to client) and latency; NaN where not measured.
void FiguresOf(const PairRun& run, const SweepSpecs& specs, PairInput& p) {
  if (specs.bw_index >= 0) {
    p.forward.bw_gbps = HeadlineBw(run.results[specs.bw_index]);
    p.forward.concurrency = run.results[specs.bw_index].concurrency();
    if (static_cast<size_t>(specs.bw_index) < run.reverse.size()) {
      p.reverse.bw_gbps = HeadlineBw(run.reverse[specs.bw_index]);
      p.reverse.concurrency = run.reverse[specs.bw_index].concurrency();
    }
    if (static_cast<size_t>(specs.bw_index) < run.worst.size()) {
      p.forward.worst_gbps = run.worst[specs.bw_index];
      p.reverse.worst_gbps = run.worst_reverse[specs.bw_index];
      p.forward.next_worst_gbps = run.next_worst[specs.bw_index];
      p.forward.loss_rate = run.least_loss[specs.bw_index];
      p.reverse.loss_rate = run.least_loss_reverse[specs.bw_index];
      p.forward.receiver_dropped = run.least_loss_host[specs.bw_index] != 0;
      p.reverse.receiver_dropped = run.least_loss_host_reverse[specs.bw_index] != 0;
      p.reverse.next_worst_gbps = run.next_worst_reverse[specs.bw_index];
    }
    if (specs.kinds[specs.bw_index] == v1::RDMA_READ_BW) std::swap(p.forward, p.reverse);
  }
  if (specs.lat_index >= 0) {
    p.lat_us = HeadlineLat(run.results[specs.lat_index]);
    p.lat_concurrency = run.results[specs.lat_index].concurrency();
    p.lat_p99_us = static_cast<size_t>(specs.lat_index) < run.best_tail.size()
                       ? run.best_tail[specs.lat_index]
                       : HeadlineTail(run.results[specs.lat_index]);
  }
}

// What the pair's failures say: a TCP fallback (RDMA skipped between two RDMA nodes), a node's
// GPUDirect (by its own half's word), or a path that failed or was refused. The first that
// applies decides; `in` collects the reasons and the nodes' GPUDirect reasons.
void FailuresOf(const PairRun& run, const Fleet& fleet, const SweepSpecs& specs, AnalysisInput& in,
                PairInput& p) {
  const bool ends_up = fleet.nodes[run.client]->reachable && fleet.nodes[run.server]->reachable;
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
    } else if (r->outcome() == v1::PROBE_FAILED && r->cause() == v1::CAUSE_GPUDIRECT_UNAVAILABLE &&
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
      return;
    } else if (r->outcome() == v1::PROBE_FAILED || r->outcome() == v1::PROBE_TIMEOUT) {
      // Failed between two agents that answer: evidence that the path is down, unless an
      // agent refused to run it.
      p.status = !ends_up                  ? PairStatus::kNotMeasured
                 : r->refused() || carried ? PairStatus::kRefused
                                           : PairStatus::kUnreachable;
      in.reasons.push_back(absl::StrCat(probes::FindProbeInfo(r->kind())->name, ": ", r->reason()));
      p.reason = static_cast<int32_t>(in.reasons.size() - 1);
      return;
    }
  }
}

// The flows of a kept bandwidth result (its largest size's), their routers interned in
// in.routers (by name where the tracing host resolved one, else by address).
void FlowsOf(const v1::ProbeResult& r, uint32_t pair, bool reverse, AnalysisInput& in,
             std::map<std::string, int32_t>& routers) {
  // One flow tells nothing a pair's figure does not (ecmp.h judges a flow against its pair's
  // others).
  if (r.outcome() != v1::PROBE_OK || r.bw_size() == 0 || r.bw(r.bw_size() - 1).flows_size() < 2)
    return;
  for (const v1::Flow& flow : r.bw(r.bw_size() - 1).flows()) {
    if (in.flows.size() >= kMaxFlowInputs) return;
    FlowInput f;
    f.pair = pair;
    f.reverse = reverse;
    f.bw_gbps = static_cast<float>(flow.bw_gbps());
    f.complete = flow.traced();
    for (const v1::Hop& hop : flow.hops()) {
      const std::string& id = hop.name().empty() ? hop.address() : hop.name();
      if (id.empty()) {
        f.hops.push_back(-1);
        f.complete = false;
        continue;
      }
      auto [it, added] = routers.emplace(id, static_cast<int32_t>(in.routers.size()));
      if (added) in.routers.push_back(id);
      f.hops.push_back(it->second);
    }
    in.flows.push_back(std::move(f));
  }
}

}  // namespace

AnalysisInput BuildAnalysisInput(const Fleet& fleet, const SweepSpecs& specs,
                                 const v1::Config& config, const std::map<PairKey, PairRun>& pairs,
                                 std::vector<const PairRun*>* ordered, const RailScope& rail) {
  AnalysisInput in;
  in.expect = config.expect();
  in.thresholds = config.thresholds();
  in.require_retest = config.sweep().retests() > 0;
  in.levels.assign(config.topology().levels().begin(), config.topology().levels().end());
  if (specs.bw_index >= 0) {
    const probes::ProbeInfo* bw = probes::FindProbeInfo(specs.kinds[specs.bw_index]);
    in.bandwidth_probe = std::string(bw->name);
    in.bandwidth_is_rdma = bw->rdma;
  }
  if (specs.lat_index >= 0) {
    in.latency_probe = std::string(probes::FindProbeInfo(specs.kinds[specs.lat_index])->name);
  }
  const Placement placement(config);
  for (const auto& node : fleet.nodes)
    in.nodes.push_back(NodeInputOf(*node, specs, config, placement, rail));
  if (ordered) ordered->clear();
  std::map<std::string, int32_t> routers;
  for (const auto& [key, run] : pairs) {
    if (ordered) ordered->push_back(&run);
    PairInput p;
    p.client = run.client;
    p.server = run.server;
    p.attempts = static_cast<uint16_t>(std::min<uint32_t>(run.attempts, 65535));
    FiguresOf(run, specs, p);
    FailuresOf(run, fleet, specs, in, p);
    if (specs.bw_index >= 0) {  // READ's forward run carries the data from server to client
      const auto index = static_cast<uint32_t>(in.pairs.size());
      const bool read = specs.kinds[specs.bw_index] == v1::RDMA_READ_BW;
      FlowsOf(run.results[specs.bw_index], index, read, in, routers);
      if (static_cast<size_t>(specs.bw_index) < run.reverse.size())
        FlowsOf(run.reverse[specs.bw_index], index, !read, in, routers);
    }
    in.pairs.push_back(p);
  }
  return in;
}

}  // namespace fabricctl::controller::sweep
