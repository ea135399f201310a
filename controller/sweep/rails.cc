#include "controller/sweep/rails.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/pci_topology.h"
#include "controller/sweep/analysis_input.h"
#include "probes/catalogue.h"

namespace fabricctl::controller::sweep {
namespace {

// The specs placed on `rail`: TCP probes on its netdev's address, RDMA probes on its device
// (or the device on its netdev).
std::vector<v1::ProbeSpec> PlaceSpecs(const std::vector<v1::ProbeSpec>& specs,
                                      const v1::Rail& rail) {
  std::vector<v1::ProbeSpec> out = specs;
  for (v1::ProbeSpec& spec : out) {
    if (spec.has_tcp()) spec.mutable_tcp()->set_netdev(rail.netdev());
    if (spec.has_rdma()) {
      spec.mutable_rdma()->set_netdev(rail.netdev());
      spec.mutable_rdma()->set_device(rail.rdma_device());
      // GPUDirect RDMA on a rail: each node's GPU nearest the rail's NIC.
      spec.mutable_rdma()->set_nearest_gpu(spec.rdma().memory() == v1::MEMORY_GPU ||
                                           spec.rdma().server_memory() == v1::MEMORY_GPU);
      if (rail.rdma_device().empty()) spec.mutable_rdma()->set_port(0);
    }
  }
  return out;
}

}  // namespace

std::string MissingRail(const v1::NodeInventory& inventory, const v1::Rail& rail) {
  auto itf = std::find_if(inventory.interfaces().begin(), inventory.interfaces().end(),
                          [&](const v1::NetInterface& i) { return i.name() == rail.netdev(); });
  if (itf == inventory.interfaces().end()) return absl::StrCat("no interface ", rail.netdev());
  if (!itf->up()) return absl::StrCat(rail.netdev(), " is down");
  if (std::none_of(itf->addresses().begin(), itf->addresses().end(),
                   [](const std::string& a) { return a.find('.') != std::string::npos; })) {
    return absl::StrCat(rail.netdev(), " has no IPv4 address");
  }
  return "";
}

v1::RailState RailStateOf(const v1::NodeInventory& inventory, const v1::Rail& rail,
                          const std::string& missing) {
  v1::RailState out;
  out.set_rail(rail.name());
  out.set_netdev(rail.netdev());
  out.set_numa_node(-1);
  out.set_missing(missing);
  std::string pci_path;
  for (const v1::NetInterface& itf : inventory.interfaces()) {
    if (itf.name() != rail.netdev()) continue;
    for (const std::string& a : itf.addresses()) {
      if (a.find('.') != std::string::npos && out.address().empty()) out.set_address(a);
    }
    out.set_up(itf.up());
    out.set_speed_mbps(itf.speed_mbps());
    out.set_mtu(itf.mtu());
    out.set_numa_node(itf.numa_node());
    pci_path = itf.pci_path();
  }
  for (const v1::RdmaDevice& device : inventory.rdma_devices()) {
    for (const v1::RdmaPort& port : device.ports()) {
      const bool ours = rail.rdma_device().empty() ? port.netdev() == rail.netdev()
                                                   : device.name() == rail.rdma_device();
      if (!ours || !out.rdma_device().empty()) continue;
      out.set_rdma_device(absl::StrCat(device.name(), ":", port.port()));
      out.set_rdma_state(port.state());
      out.set_rate_gbps(port.rate_gbps());
      if (out.numa_node() < 0) out.set_numa_node(device.numa_node());
    }
  }
  const std::vector<v1::Gpu> gpus(inventory.gpus().begin(), inventory.gpus().end());
  for (uint32_t gpu : NearestGpus(gpus, pci_path, out.numa_node())) out.add_nearest_gpus(gpu);
  return out;
}

absl::StatusOr<std::vector<RailPlan>> PlanRails(const v1::SweepRequest& request,
                                                const v1::Config& config, const SweepSpecs& specs,
                                                const Fleet& fleet) {
  const size_t n = fleet.nodes.size();
  if (config.rails().empty()) {
    if (!request.rails().empty()) {
      return absl::InvalidArgumentError("--rails: the configuration names no rails (rails:)");
    }
    return std::vector<RailPlan>{
        {"", "", specs.specs, std::vector<bool>(n), std::vector<std::string>(n)}};
  }
  for (const std::string& name : request.rails()) {
    if (std::none_of(config.rails().begin(), config.rails().end(),
                     [&](const v1::Rail& r) { return r.name() == name; })) {
      std::vector<std::string> known;
      for (const v1::Rail& r : config.rails()) known.push_back(r.name());
      return absl::InvalidArgumentError(absl::StrCat(
          "--rails: no rail '", name.substr(0, 64), "' (rails: ", absl::StrJoin(known, ", "), ")"));
    }
  }
  std::vector<RailPlan> out;
  for (const v1::Rail& rail : config.rails()) {
    if (!request.rails().empty() && std::find(request.rails().begin(), request.rails().end(),
                                              rail.name()) == request.rails().end()) {
      continue;
    }
    RailPlan plan{rail.name(), rail.netdev(), PlaceSpecs(specs.specs, rail), std::vector<bool>(n),
                  std::vector<std::string>(n)};
    size_t reachable = 0, lacking = 0;
    std::string example;
    for (size_t i = 0; i < n; ++i) {
      const Node& node = *fleet.nodes[i];
      if (!node.reachable) continue;  // unreachable, not lacking the rail
      ++reachable;
      plan.absent_reason[i] = MissingRail(node.inventory, rail);
      plan.absent[i] = !plan.absent_reason[i].empty();
      if (plan.absent[i] && lacking++ == 0)
        example = absl::StrCat(node.name, ": ", plan.absent_reason[i]);
    }
    // Most nodes without the rail: the configuration names it wrong, not the nodes.
    if (reachable >= 2 && lacking * 2 > reachable) {
      return absl::FailedPreconditionError(absl::StrCat(
          "rails: rail ", rail.name(), " (", rail.netdev(), ") is missing on ", lacking, " of ",
          reachable, " reachable nodes (", example, "): check the configuration's rails"));
    }
    out.push_back(std::move(plan));
  }
  return out;
}

AnalysisInput BuildRailInput(const Fleet& fleet, const SweepSpecs& specs, const v1::Config& config,
                             const RailPlan& rail, const RoundRunner& runner,
                             std::vector<const PairRun*>* ordered) {
  AnalysisInput in =
      BuildAnalysisInput(fleet, specs, config, runner.pairs(), ordered, {rail.name, rail.netdev});
  for (size_t i = 0; i < in.nodes.size() && i < rail.absent.size(); ++i) {
    if (!rail.absent[i]) continue;
    in.nodes[i].reachable = false;
    in.nodes[i].unreachable_reason =
        absl::StrCat("lacks rail ", rail.name, ": ", rail.absent_reason[i]);
  }
  return in;
}

RailRunners::RailRunners(AgentClient& agents, Fleet& fleet, const std::vector<RailPlan>& rails,
                         RoundSettings settings)
    : agents_(agents),
      fleet_(fleet),
      progress_(settings.progress),
      stop_(settings.stop),
      inventory_timeout_(settings.inventory_timeout) {
  const uint32_t share =
      std::max<uint32_t>(1, settings.max_parallel_pairs / std::max<size_t>(1, rails.size()));
  for (const RailPlan& rail : rails) {
    runners_.push_back(
        std::make_unique<RoundRunner>(agents, fleet, settings, rail.specs, share, load_));
    runners_.back()->PlaceOnRail(rail.name, rail.absent);
  }
}

size_t RailRunners::Run(const std::vector<std::vector<Round>>& by_rail, uint32_t attempt,
                        const char* phase, const Limits& limits) {
  const std::vector<bool>* only = limits.only;
  const absl::Time stop_after = limits.stop_after;
  const size_t must_run = limits.must_run;
  const std::vector<std::vector<Round>>* companions = limits.companions;
  size_t rounds = 0;
  for (const auto& r : by_rail) rounds = std::max(rounds, r.size());
  for (size_t r = 0; r < rounds; ++r) {
    if (stop_ != nullptr && stop_->load()) return r;
    if (r >= std::max<size_t>(1, must_run) && absl::Now() >= stop_after) return r;
    std::vector<uint32_t> failed(runners_.size(), 0);
    uint32_t pairs = 0;
    std::vector<std::thread> threads;
    for (size_t rail = 0; rail < runners_.size() && rail < by_rail.size(); ++rail) {
      if (r >= by_rail[rail].size()) continue;
      pairs += static_cast<uint32_t>(by_rail[rail][r].size());
      const Round* mates =
          companions != nullptr && rail < companions->size() && r < (*companions)[rail].size()
              ? &(*companions)[rail][r]
              : nullptr;
      threads.emplace_back([&, rail, mates] {
        failed[rail] = runners_[rail]->MeasureRound(by_rail[rail][r], attempt, only, mates);
      });
    }
    for (auto& t : threads) t.join();
    if (std::any_of(fleet_.nodes.begin(), fleet_.nodes.end(),
                    [](const auto& n) { return n->reachable && n->transport_failures; })) {
      CheckReachable(agents_, fleet_, inventory_timeout_, /*only_suspect=*/true);
    }
    if (!progress_) continue;
    v1::SweepEvent event;
    auto* e = event.mutable_round();
    e->set_round(static_cast<uint32_t>(r + 1));
    e->set_rounds(static_cast<uint32_t>(rounds));
    e->set_pairs(pairs);
    uint32_t failures = 0;
    for (uint32_t f : failed) failures += f;
    e->set_pairs_failed(failures);
    e->set_phase(phase);
    progress_(event);
  }
  return rounds;
}

void RailRunners::RunAll(const std::vector<Round>& rounds, uint32_t attempt, const char* phase) {
  Run(std::vector<std::vector<Round>>(runners_.size(), rounds), attempt, phase);
}

}  // namespace fabricctl::controller::sweep
