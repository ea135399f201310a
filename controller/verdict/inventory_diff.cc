#include "controller/verdict/inventory_diff.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace fabricctl::controller {
namespace {

// A named part of the inventory and how it reads, for comparison.
using Parts = std::map<std::string, std::string>;

// The interfaces a fabric's verdict rests on: those with an IPv4 address and a link speed (a
// NIC, not a container's bridge or a loopback, which come and go with the node's workload).
bool IsNic(const v1::NetInterface& itf) {
  bool ipv4 = false;
  for (const auto& a : itf.addresses()) ipv4 = ipv4 || a.find('.') != std::string::npos;
  return ipv4 && itf.speed_mbps() != 0;
}

Parts Interfaces(const v1::NodeInventory& inv) {
  Parts out;
  for (const auto& itf : inv.interfaces()) {
    if (IsNic(itf)) out[itf.name()] = absl::StrCat(itf.speed_mbps(), " Mb/s, MTU ", itf.mtu());
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

// A GPU by its PCI bus id, else its CUDA ordinal.
std::string GpuName(const v1::Gpu& gpu) {
  return gpu.pci_bus_id().empty() ? absl::StrCat(gpu.index()) : gpu.pci_bus_id();
}

Parts Gpus(const v1::NodeInventory& inv) {
  Parts out;
  for (const auto& gpu : inv.gpus()) out[GpuName(gpu)] = gpu.name();
  return out;
}

// "16.0 GT/s x16": a link's current speed, less the kernel's " PCIe", and width; empty when the
// agent gave neither.
std::string LinkText(const v1::PcieLink& link) {
  const std::string speed(absl::StripSuffix(link.speed(), " PCIe"));
  if (link.width() == 0) return speed;
  return speed.empty() ? absl::StrCat("x", link.width()) : absl::StrCat(speed, " x", link.width());
}

// Firmware, board, HCA type, driver and PCIe link, each a part of its own ("RDMA device mlx5_0
// firmware", "interface eth0 driver"), compared by CompareKnown.
Parts RdmaDeviceDetails(const v1::NodeInventory& inv) {
  Parts out;
  for (const auto& device : inv.rdma_devices()) {
    const std::string what = absl::StrCat("RDMA device ", device.name());
    out[what + " firmware"] = device.fw_ver();
    out[what + " board"] = device.board_id();
    out[what + " HCA type"] = device.hca_type();
    out[what + " PCIe"] = LinkText(device.pcie());
  }
  return out;
}

Parts InterfaceDetails(const v1::NodeInventory& inv) {
  // A RoCE NIC's netdev and RDMA device are one PCI function: its firmware and link are
  // compared once, as the RDMA device's.
  std::set<std::string> rdma_functions;
  for (const auto& device : inv.rdma_devices()) rdma_functions.insert(device.pci_address());
  Parts out;
  for (const auto& itf : inv.interfaces()) {
    if (!IsNic(itf)) continue;
    const std::string what = absl::StrCat("interface ", itf.name());
    out[what + " driver"] = itf.driver();
    const std::string& path = itf.pci_path();
    if (!path.empty() && rdma_functions.count(path.substr(path.rfind('/') + 1)) > 0) continue;
    out[what + " firmware"] = itf.firmware();
    out[what + " PCIe"] = LinkText(itf.pcie());
  }
  return out;
}

// A GPU lowers its link's speed and width when idle (power management; nvidia-smi: "These may be
// reduced when the GPU is not in use"), so a link below its maximum says when the agent read
// it, not how the node is built: only links at their maximum are compared. One trained below
// its maximum for good is the pcie audit's, on the node itself.
Parts GpuLinks(const v1::NodeInventory& inv) {
  Parts out;
  for (const auto& gpu : inv.gpus()) {
    const v1::PcieLink& link = gpu.pcie();
    if (link.speed().empty() || link.speed() != link.max_speed() || link.width() == 0 ||
        link.width() != link.max_width()) {
      continue;
    }
    out[absl::StrCat("GPU ", GpuName(gpu), " PCIe")] = LinkText(link);
  }
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

// Each part both sides give that reads differently. A part one side leaves empty (its agent
// predates it, or its kernel or driver does not say) is no difference: a fleet whose agents are
// upgraded one node at a time must not drift from its references meanwhile.
void CompareKnown(const Parts& before, const Parts& after, std::vector<InventoryDifference>& out) {
  for (const auto& [part, was] : before) {
    auto it = after.find(part);
    if (was.empty() || it == after.end() || it->second.empty() || it->second == was) continue;
    out.push_back({part, was, it->second});
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
  CompareKnown(InterfaceDetails(before), InterfaceDetails(after), out);
  Compare("RDMA port", RdmaPorts(before), RdmaPorts(after), out);
  CompareKnown(RdmaDeviceDetails(before), RdmaDeviceDetails(after), out);
  Compare("GPU", Gpus(before), Gpus(after), out);
  CompareKnown(GpuLinks(before), GpuLinks(after), out);
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
