#include "controller/sweep/allreduce.h"

#include <algorithm>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "controller/sweep/context.h"
#include "controller/sweep/trust.h"
#include "google/protobuf/util/time_util.h"
#include "probes/common/stats.h"

namespace fabricctl::controller::sweep {
namespace {

constexpr absl::Duration kStartTimeout = absl::Seconds(10);
constexpr absl::Duration kStopTimeout = absl::Seconds(5);
constexpr absl::Duration kRpcSlack = absl::Seconds(5);
// Memlock an agent needs for the all-reduce ring over RDMA ("auto" picks TCP below it): a rank
// registers up to 32 MiB (two queue pairs, double-buffered 4 MiB slots).
constexpr uint64_t kRingMemlockBytes = 64ull << 20;

bool HasActiveRdmaPort(const v1::NodeInventory& inventory) {
  for (const auto& device : inventory.rdma_devices()) {
    for (const auto& port : device.ports()) {
      if (port.state() == "ACTIVE") return true;
    }
  }
  return false;
}

// Why the group cannot run the host ring over RDMA; empty when it can.
std::string NoRdma(const Fleet& fleet, const std::vector<uint32_t>& ring) {
  for (uint32_t i : ring) {
    const v1::NodeInventory& inv = fleet.nodes[i]->inventory;
    if (!HasActiveRdmaPort(inv)) {
      const std::string& why = inv.rdma_unavailable_reason();
      return absl::StrCat(fleet.Name(i), " has no active RDMA port",
                          why.empty() ? "" : absl::StrCat(" (", why, ")"));
    }
    if (inv.memlock_limit_bytes() < kRingMemlockBytes) {
      return absl::StrCat(fleet.Name(i), "'s memlock limit of ", inv.memlock_limit_bytes(),
                          " bytes is below the ring's ", kRingMemlockBytes);
    }
  }
  return "";
}

// Why the group cannot run NCCL; empty when it can, with `gpus` the ranks per node.
std::string NoNccl(const Fleet& fleet, const std::vector<uint32_t>& ring,
                   std::vector<uint32_t>& gpus) {
  for (uint32_t i : ring) {
    const v1::NodeInventory& inv = fleet.nodes[i]->inventory;
    if (inv.gpus_size() == 0) {
      return absl::StrCat(fleet.Name(i), " has no GPU (", inv.gpu_unavailable_reason(), ")");
    }
    if (inv.nccl_version().empty()) {
      return absl::StrCat(fleet.Name(i), " has no NCCL (", inv.nccl_unavailable_reason(), ")");
    }
    gpus.push_back(static_cast<uint32_t>(std::min(inv.gpus_size(), 64)));
  }
  return "";
}

}  // namespace

std::vector<RingRun> PlanRings(const v1::SweepRequest& request, const v1::Config& config,
                               const Fleet& fleet) {
  const std::string& by = request.allreduce_group_by();
  std::map<std::string, std::vector<uint32_t>> groups;
  const Placement placement(config);
  for (uint32_t i : fleet.Live()) {
    const auto labels = placement.LabelsOf(*fleet.nodes[i]);
    auto it = labels.find(by);
    groups[by.empty() ? "" : absl::StrCat(by, "=", it == labels.end() ? "" : it->second)].push_back(
        i);
  }
  const std::string backend =
      request.allreduce_backend().empty() ? "auto" : request.allreduce_backend();
  std::vector<RingRun> rings;
  for (auto& [group, members] : groups) {
    // A group of one node is an all-reduce over its own GPUs with NCCL; a host ring needs two.
    if (members.size() < 2) {
      std::vector<uint32_t> gpus;
      if (backend == "rdma" || backend == "tcp" || !NoNccl(fleet, members, gpus).empty()) continue;
    }
    RingRun rr;
    rr.ring = std::move(members);
    rr.outcome.group = group;
    for (uint32_t i : rr.ring) rr.outcome.members.push_back(fleet.Name(i));
    const std::string no_rdma = NoRdma(fleet, rr.ring);
    const std::string no_nccl = NoNccl(fleet, rr.ring, rr.gpus);
    rr.nccl = (backend == "auto" || backend == "nccl") && no_nccl.empty();
    if (backend == "nccl" && !no_nccl.empty())
      rr.skipped = absl::StrCat("NCCL asked for, but ", no_nccl);
    if (!rr.nccl) rr.gpus.clear();
    rr.rdma = !rr.nccl && (backend == "auto" || backend == "rdma") && no_rdma.empty();
    if (backend == "rdma" && !no_rdma.empty())
      rr.skipped = absl::StrCat("RDMA asked for, but ", no_rdma);
    rings.push_back(std::move(rr));
  }
  return rings;
}

namespace {

// One group's launch: its ranks and where they run, and what opening them gave.
struct Launch {
  AgentClient& agents;
  const Fleet& fleet;
  const RingRun& rr;
  const v1::ProbeSpec& spec;
  std::string run_id;
  std::vector<uint32_t> first_rank;  // each member's first rank (FirstRanks)
  uint32_t world = 0;
  std::vector<v1::Endpoint> endpoints;  // ring order
  std::vector<absl::Status> started;    // each member's start
  bool all_started = false;
};

// Opens every member's rank at once: the endpoints in ring order, and each start's status.
void StartRanks(Launch& launch) {
  const size_t n = launch.rr.ring.size();
  launch.endpoints.assign(n, v1::Endpoint());
  launch.started.assign(n, absl::OkStatus());
  std::vector<std::thread> threads;
  for (size_t r = 0; r < n; ++r) {
    threads.emplace_back([&launch, r] {
      v1::StartProbeServerRequest start;
      *start.mutable_spec() = launch.spec;
      start.set_run_id(launch.run_id);
      start.set_rank(launch.first_rank[r]);
      const Node& node = *launch.fleet.nodes[launch.rr.ring[r]];
      auto response = launch.agents.StartProbeServer(node.address, start, kStartTimeout);
      launch.started[r] = response.status();
      if (response.ok()) launch.started[r] = OwnAddress(node, response->endpoint().address());
      if (launch.started[r].ok()) launch.endpoints[r] = response->endpoint();
    });
  }
  for (auto& t : threads) t.join();
  launch.all_started = std::all_of(launch.started.begin(), launch.started.end(),
                                   [](const absl::Status& s) { return s.ok(); });
}

// Combines the ranks' results into the group's (nccl-tests averages the time across ranks; a
// node's figure is its ranks' average already; wrong elements add up). A rank that failed
// outright is the cause; its neighbours then time out waiting for it, and ranks stopped because
// another could not start are no cause at all.
void Combine(const RingRun& rr, uint32_t world, const std::vector<char>& stand_down,
             v1::ProbeResult& collective) {
  const auto& ranks = rr.outcome.rank_results;
  collective.set_outcome(v1::PROBE_OK);
  auto cause = std::find_if(ranks.begin(), ranks.end(), [&](const v1::ProbeResult& r) {
    return r.outcome() == v1::PROBE_FAILED && !stand_down[&r - ranks.data()];
  });
  // The group's result names the rank that failed, not the group's first node.
  if (cause != ranks.end()) {
    collective.set_outcome(cause->outcome());
    collective.set_reason(cause->reason());
    collective.set_node(cause->node());
  }
  for (const auto& r : ranks) {
    if (collective.outcome() != v1::PROBE_OK) break;
    if (r.outcome() != v1::PROBE_OK) {
      collective.set_outcome(r.outcome());
      collective.set_reason(r.reason());
      collective.set_node(r.node());
      break;
    }
    if (r.collective_size() != ranks[0].collective_size()) {
      collective.set_outcome(v1::PROBE_FAILED);
      collective.set_reason(absl::StrCat(r.node(), " measured ", r.collective_size(), " sizes, ",
                                         ranks[0].node(), " ", ranks[0].collective_size()));
      break;
    }
  }
  if (collective.outcome() == v1::PROBE_OK) {
    for (int k = 0; k < ranks[0].collective_size(); ++k) {
      double time_us = 0;
      uint64_t wrong = 0;
      for (size_t r = 0; r < ranks.size(); ++r) {
        const double ranks_here = rr.nccl ? rr.gpus[r] : 1;
        time_us += ranks_here * ranks[r].collective(k).time_us();
        wrong += ranks[r].collective(k).wrong();
      }
      time_us /= static_cast<double>(world);
      v1::CollectivePoint* c = collective.add_collective();
      c->set_size_bytes(ranks[0].collective(k).size_bytes());
      c->set_time_us(time_us);
      c->set_algbw_gbytes(probes::AllreduceAlgBwGBytes(c->size_bytes(), time_us * 1e-6));
      c->set_busbw_gbytes(probes::AllreduceBusBwGBytes(c->size_bytes(), time_us * 1e-6, world));
      c->set_wrong(wrong);
    }
  }
  if (rr.nccl) {  // how NCCL moved the data: sockets anywhere make the group's network Socket
    v1::NcclTransport* t = collective.mutable_nccl();
    bool gdr = true, any = false;
    for (const auto& r : ranks) {
      if (!r.has_nccl() || r.nccl().net().empty()) continue;
      any = true;
      if (t->net().empty() || r.nccl().net() == "Socket") t->set_net(r.nccl().net());
      gdr = gdr && r.nccl().gpudirect_rdma();
      for (const auto& line : r.nccl().evidence()) {
        if (t->evidence_size() < 16) t->add_evidence(line);
      }
    }
    t->set_gpudirect_rdma(any && gdr);
  }
}

// Where the group's ranks are: NCCL ranks, node r running gpus[r] of them from first[r]; the
// host ring, one per node. Returns the world size.
uint32_t FirstRanks(const RingRun& rr, std::vector<uint32_t>* first) {
  const size_t n = rr.ring.size();
  first->assign(n, 0);
  if (!rr.nccl) {
    for (size_t r = 0; r < n; ++r) (*first)[r] = static_cast<uint32_t>(r);
    return static_cast<uint32_t>(n);
  }
  uint32_t world = 0;
  for (size_t r = 0; r < n; ++r) {
    (*first)[r] = world;
    world += rr.gpus[r];
  }
  return world;
}

// The group's result as it starts: who, how, over which nodes.
void Describe(const Fleet& fleet, const RingRun& rr, const v1::ProbeSpec& spec, uint32_t world,
              v1::ProbeResult& collective) {
  const std::string& group = rr.outcome.group;
  collective.set_kind(v1::ALLREDUCE);
  collective.set_node(fleet.Name(rr.ring[0]));
  collective.set_device(
      absl::StrCat(rr.nccl ? absl::StrCat("nccl, ", world, " ranks on ", rr.ring.size(), " nodes")
                           : std::string(rr.rdma ? "rdma ring" : "tcp ring"),
                   group.empty() ? "" : absl::StrCat(", ", group)));
  *collective.mutable_effective_spec() = spec;
  for (uint32_t i : rr.ring) {
    collective.mutable_effective_spec()->mutable_allreduce()->add_group(fleet.Name(i));
  }
}

// What member `r` ran (with every rank started), or why not; `stand_down` when it was stopped
// because another rank could not start.
v1::ProbeResult RunRank(const Launch& launch, size_t r, Node& node, char* stand_down) {
  const RingRun& rr = launch.rr;
  const v1::ProbeSpec& spec = launch.spec;
  v1::ProbeResult out;
  out.set_kind(v1::ALLREDUCE);
  out.set_node(node.name);
  absl::Status s = launch.started[r];
  if (s.ok() && launch.all_started) {
    v1::RunLocalProbeRequest run;
    *run.mutable_spec() = spec;
    run.set_run_id(launch.run_id);
    run.set_rank(launch.first_rank[r]);
    for (const auto& e : launch.endpoints) *run.add_ranks() = e;
    if (rr.nccl) {
      run.set_world_size(launch.world);
      run.set_local_ranks(rr.gpus[r]);
    }
    const absl::Duration timeout = absl::Microseconds(
        google::protobuf::util::TimeUtil::DurationToMicroseconds(spec.timeout()));
    auto response = launch.agents.RunLocalProbe(node.address, run, timeout + kRpcSlack);
    if (response.ok()) {
      out = response->result();
      // NCCL's ranks of one node share its NICs and NVLink: up to one fastest link each.
      const double max_gbps = launch.fleet.max_gbps;
      AcceptResult(node.name, spec,
                   rr.nccl ? max_gbps * std::max<uint32_t>(1, rr.gpus[r]) : max_gbps, &out);
      out.set_node(node.name);
      return out;
    }
    s = response.status();
  } else {
    // Some rank could not start: free this one's slot, also where its own start failed here
    // but may still finish there (a late answer); unknown runs are NotFound.
    v1::StopProbeServerRequest stop;
    stop.set_run_id(launch.run_id);
    (void)launch.agents.StopProbeServer(node.address, stop, kStopTimeout);
    if (s.ok()) {
      s = absl::AbortedError("another rank could not start");
      *stand_down = 1;
    }
  }
  if (IsTransportFailure(s)) node.transport_failures = true;
  out.set_outcome(absl::IsDeadlineExceeded(s) ? v1::PROBE_TIMEOUT : v1::PROBE_FAILED);
  out.set_reason(absl::StrCat("rank ", r, " on ", node.name, ": ", s.message()));
  return out;
}

}  // namespace

void RunRing(AgentClient& agents, SweepContext& sweep, const v1::ProbeSpec& spec, size_t index) {
  RoundRunner& runner = sweep.runners.rail(0);
  Fleet& fleet = sweep.fleet;
  RingRun& rr = sweep.rings[index];
  Launch launch{agents, fleet, rr, spec,
                absl::StrCat("s", runner.sweep_id(), "-allreduce-", index)};
  const size_t n = rr.ring.size();
  launch.world = FirstRanks(rr, &launch.first_rank);
  v1::ProbeResult& collective = rr.outcome.collective;
  Describe(fleet, rr, spec, launch.world, collective);
  if (!rr.skipped.empty()) {
    collective.set_outcome(v1::PROBE_SKIPPED);
    collective.set_reason(rr.skipped);
    runner.StoreExtra(collective);
    return;
  }
  StartRanks(launch);
  rr.outcome.rank_results.assign(n, v1::ProbeResult());
  std::vector<char> stand_down(n, 0);
  std::vector<std::thread> threads;
  for (size_t r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      rr.outcome.rank_results[r] = RunRank(launch, r, *fleet.nodes[rr.ring[r]], &stand_down[r]);
    });
  }
  for (auto& t : threads) t.join();
  Combine(rr, launch.world, stand_down, collective);
  runner.StoreExtra(collective);
  if (sweep.progress) {
    v1::SweepEvent event;
    auto* e = event.mutable_round();
    e->set_round(static_cast<uint32_t>(index + 1));
    e->set_rounds(static_cast<uint32_t>(sweep.rings.size()));
    e->set_pairs(static_cast<uint32_t>(n));
    e->set_pairs_failed(collective.outcome() == v1::PROBE_OK ? 0 : 1);
    e->set_phase("allreduce");
    sweep.progress(event);
  }
}

}  // namespace fabricctl::controller::sweep
