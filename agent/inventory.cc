#include "agent/inventory.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/resource.h>
#include <unistd.h>

#include <limits>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/lldp.h"
#include "base/pci_topology.h"
#include "base/version.h"
#include "probes/gpu/cuda.h"
#include "probes/gpu/nccl.h"
#include "probes/rdma/device.h"

namespace fabricctl::agent {
namespace {

void AddInterfaces(const probes::SysfsRoot& sysfs, v1::NodeInventory* inventory) {
  ifaddrs* raw = nullptr;
  if (::getifaddrs(&raw) != 0) return;
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> list(raw, &::freeifaddrs);
  std::map<std::string, v1::NetInterface> by_name;
  for (ifaddrs* it = raw; it != nullptr; it = it->ifa_next) {
    v1::NetInterface& itf = by_name[it->ifa_name];
    itf.set_name(it->ifa_name);
    itf.set_up((it->ifa_flags & IFF_UP) != 0);
    if (it->ifa_addr == nullptr) continue;
    char text[INET6_ADDRSTRLEN] = {};
    if (it->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(it->ifa_addr)->sin_addr, text,
                sizeof(text));
      itf.add_addresses(text);
    } else if (it->ifa_addr->sa_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(it->ifa_addr)->sin6_addr, text,
                sizeof(text));
      itf.add_addresses(text);
    }
  }
  for (auto& [name, itf] : by_name) {
    const std::string dir = absl::StrCat("/sys/class/net/", name);
    uint32_t value = 0;
    if (auto mtu = sysfs.ReadTrimmed(dir + "/mtu"); mtu.ok() && absl::SimpleAtoi(*mtu, &value)) {
      itf.set_mtu(value);
    }
    // Where its PCI device sits (virtual interfaces have none), for the GPU nearest it.
    itf.set_numa_node(-1);
    if (auto link = sysfs.ReadLink(dir); link.ok()) itf.set_pci_path(PciPathOf(*link));
    int numa = -1;
    if (auto n = sysfs.ReadTrimmed(dir + "/device/numa_node");
        n.ok() && absl::SimpleAtoi(*n, &numa)) {
      itf.set_numa_node(numa);
    }
    // speed reads -1 or fails (EINVAL) for virtual or down links: then unknown (0).
    int speed = 0;
    if (auto s = sysfs.ReadTrimmed(dir + "/speed");
        s.ok() && absl::SimpleAtoi(*s, &speed) && speed > 0) {
      itf.set_speed_mbps(static_cast<uint32_t>(speed));
    }
    *inventory->add_interfaces() = std::move(itf);
  }
}

// Each interface's LLDP neighbour, or why there is none.
void AddLldpNeighbors(const std::string& socket, v1::NodeInventory* inventory) {
  auto neighbors = ReadLldpNeighbors(socket);
  if (!neighbors.ok()) {
    inventory->set_lldp_unavailable_reason(std::string(neighbors.status().message()));
    return;
  }
  for (auto& itf : *inventory->mutable_interfaces()) {
    auto it = neighbors->find(itf.name());
    if (it != neighbors->end()) *itf.mutable_lldp() = it->second;
  }
  if (neighbors->empty()) inventory->set_lldp_unavailable_reason("lldpd knows no neighbour");
}

void AddRdmaDevices(const probes::SysfsRoot& sysfs, v1::NodeInventory* inventory) {
  auto devices = probes::ListRdmaDevices(sysfs);
  if (!devices.ok()) {
    inventory->set_rdma_unavailable_reason(std::string(devices.status().message()));
    return;
  }
  for (const auto& device : *devices) {
    v1::RdmaDevice* out = inventory->add_rdma_devices();
    out->set_name(device.name);
    out->set_node_guid(device.node_guid);
    out->set_pci_address(device.pci_address);
    out->set_numa_node(device.numa_node);
    for (const auto& port : device.ports) {
      v1::RdmaPort* p = out->add_ports();
      p->set_port(port.port);
      p->set_state(port.state);
      p->set_phys_state(port.phys_state);
      p->set_link_layer(port.link_layer);
      p->set_rate_gbps(port.rate_gbps);
      p->set_active_mtu(port.active_mtu_bytes);
      p->set_lid(port.lid);
      p->set_netdev(port.netdev);
    }
  }
}

}  // namespace

GpuInventory CollectGpus(const probes::SysfsRoot& sysfs) {
  GpuInventory out;
  // The CUDA driver is asked in a child process: a hung or crashing driver costs the timeout.
  auto gpus = probes::ListGpus(absl::Seconds(20));
  if (!gpus.ok()) {
    out.unavailable_reason = std::string(gpus.status().message());
    out.nccl_unavailable_reason = "no GPU";
    return out;
  }
  // NCCL matters only beside GPUs.
  auto nccl = probes::FindNccl(absl::Seconds(20));
  if (nccl.ok()) {
    out.nccl_version = *nccl;
  } else {
    out.nccl_unavailable_reason = std::string(nccl.status().message());
  }
  for (auto& gpu : *gpus) {
    auto numa = sysfs.ReadTrimmed("/sys/bus/pci/devices/" + gpu.pci_bus_id() + "/numa_node");
    int node = -1;
    if (numa.ok() && absl::SimpleAtoi(*numa, &node)) gpu.set_numa_node(node);
    if (auto link = sysfs.ReadLink("/sys/bus/pci/devices/" + gpu.pci_bus_id()); link.ok()) {
      gpu.set_pci_path(PciPathOf(*link));
    }
    out.gpus.push_back(std::move(gpu));
  }
  return out;
}

std::string Hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

v1::NodeInventory CollectInventory(const InventoryOptions& options,
                                   const probes::SysfsRoot& sysfs) {
  v1::NodeInventory inventory;
  inventory.set_hostname(Hostname());
  inventory.set_node_name(options.node_name.empty() ? inventory.hostname() : options.node_name);
  inventory.set_agent_address(options.agent_address);
  inventory.set_agent_version(kVersion);
  for (const auto& [key, value] : options.labels) (*inventory.mutable_labels())[key] = value;
  AddInterfaces(sysfs, &inventory);
  AddLldpNeighbors(options.lldp_socket, &inventory);
  AddRdmaDevices(sysfs, &inventory);
  for (const auto& gpu : options.gpus.gpus) *inventory.add_gpus() = gpu;
  inventory.set_gpu_unavailable_reason(options.gpus.unavailable_reason);
  inventory.set_nccl_version(options.gpus.nccl_version);
  inventory.set_nccl_unavailable_reason(options.gpus.nccl_unavailable_reason);
  rlimit limit{};
  if (::getrlimit(RLIMIT_MEMLOCK, &limit) == 0) {
    inventory.set_memlock_limit_bytes(
        limit.rlim_cur == RLIM_INFINITY ? std::numeric_limits<uint64_t>::max() : limit.rlim_cur);
  }
  return inventory;
}

}  // namespace fabricctl::agent
