#include "controller/sweep/inventory_diff.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace fabricctl::controller {
namespace {

// A named part of the inventory and how it reads, for comparison.
using Parts = std::map<std::string, std::string>;

// The interfaces a fabric's verdict rests on: those with an IPv4 address and a link speed (a
// NIC, not a container's bridge or a loopback, which come and go with the node's workload).
Parts Interfaces(const v1::NodeInventory& inv) {
  Parts out;
  for (const auto& itf : inv.interfaces()) {
    bool ipv4 = false;
    for (const auto& a : itf.addresses()) ipv4 = ipv4 || a.find('.') != std::string::npos;
    if (!ipv4 || itf.speed_mbps() == 0) continue;
    out[itf.name()] = absl::StrCat(itf.speed_mbps(), " Mb/s, MTU ", itf.mtu());
  }
  return out;
}

Parts RdmaPorts(const v1::NodeInventory& inv) {
  Parts out;
  for (const auto& device : inv.rdma_devices()) {
    for (const auto& port : device.ports()) {
      out[absl::StrCat(device.name(), ":", port.port())] = absl::StrFormat(
          "%g Gb/s, MTU %u, %s", port.rate_gbps(), port.active_mtu(), port.link_layer());
    }
  }
  return out;
}

Parts Gpus(const v1::NodeInventory& inv) {
  Parts out;
  for (const auto& gpu : inv.gpus())
    out[gpu.pci_bus_id().empty() ? absl::StrCat(gpu.index()) : gpu.pci_bus_id()] = gpu.name();
  return out;
}

// Each part that came, went or changed; "none" for the side that lacks it.
void Compare(const std::string& what, const Parts& before, const Parts& after,
             std::vector<InventoryDifference>& out) {
  for (const auto& [name, was] : before) {
    auto it = after.find(name);
    if (it == after.end()) {
      out.push_back({absl::StrCat(what, " ", name), was, "none"});
    } else if (it->second != was) {
      out.push_back({absl::StrCat(what, " ", name), was, it->second});
    }
  }
  for (const auto& [name, is] : after) {
    if (before.count(name) == 0) out.push_back({absl::StrCat(what, " ", name), "none", is});
  }
}

void Field(const std::string& what, const std::string& before, const std::string& after,
           std::vector<InventoryDifference>& out) {
  if (before != after) {
    out.push_back({what, before.empty() ? "none" : before, after.empty() ? "none" : after});
  }
}

// The parts a node's verdict rests on, compared; the agents' start times aside.
std::vector<InventoryDifference> Differences(const v1::NodeInventory& before,
                                             const v1::NodeInventory& after) {
  std::vector<InventoryDifference> out;
  Compare("interface", Interfaces(before), Interfaces(after), out);
  Compare("RDMA port", RdmaPorts(before), RdmaPorts(after), out);
  Compare("GPU", Gpus(before), Gpus(after), out);
  Field("agent version", before.agent_version(), after.agent_version(), out);
  Field("NCCL version", before.nccl_version(), after.nccl_version(), out);
  return out;
}

}  // namespace

std::string Describe(const InventoryDifference& d) {
  return absl::StrCat(d.part, ": ", d.before, " -> ", d.after);
}

std::vector<std::string> InventoryChanges(const v1::NodeInventory& before,
                                          const v1::NodeInventory& after) {
  std::vector<std::string> out;
  if (before.agent_started_unix_ms() != 0 &&
      after.agent_started_unix_ms() != before.agent_started_unix_ms()) {
    out.push_back("its agent restarted");
  }
  for (const InventoryDifference& d : Differences(before, after)) out.push_back(Describe(d));
  return out;
}

std::vector<InventoryDifference> DifferencesFrom(const v1::NodeInventory& reference,
                                                 const v1::NodeInventory& node) {
  return Differences(reference, node);
}

}  // namespace fabricctl::controller
